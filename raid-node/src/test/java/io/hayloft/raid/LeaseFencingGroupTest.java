package io.hayloft.raid;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import io.hayloft.directory.StoreAdmin;
import io.hayloft.directory.raft.LocalGroup;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.Wire;
import io.hayloft.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The raid lease's fence across leader changes of a directory group of three in-process replicas
 * (real Raft servers over real RocksDB, on loopback: directory-server's LocalGroup,
 * stores faked by heartbeats): a commit of raid-node A under epoch e, once B holds e + 1, is refused
 * 409 LEASE_LOST by the leader elected after the old one was stopped, and nothing of it reaches any
 * replica (the restarted old leader included), while B's commit passes; a commit under a lease that
 * ran out at the leader's clock is refused too, before and after a leadership transfer.
 */
class LeaseFencingGroupTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private LocalGroup group;
    private final List<AutoCloseable> leases = new ArrayList<>();

    @TempDir
    Path dir;

    /** Probes always pass and volumes are always made: the test is about the directory's own state. */
    private static final StoreAdmin STORES = new StoreAdmin() {
        @Override
        public CompletableFuture<Void> createVolume(String address, int volume) {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Void> probe(String address, int volume) {
            return CompletableFuture.completedFuture(null);
        }
    };

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable l : leases) {
            l.close();
        }
        if (group != null) {
            group.close();
        }
    }

    private void startGroup() throws Exception {
        group = LocalGroup.builder(3, () -> {
            DirectoryConfig c = new DirectoryConfig();
            c.replication = 2;
            c.minWritableVolumes = 1;
            c.probeIntervalMillis = 100_000;
            c.raft = new DirectoryConfig.Raft();
            c.raft.electionTimeoutMillis = 300;
            return c;
        }, dir).storeAdmin(STORES).start();
    }

    private int leader() throws InterruptedException {
        return group.awaitLeader(Duration.ofSeconds(30));
    }

    /** A raid-node's client of the group: every replica's address, a follower first, so it follows a 421 to the leader. */
    private Cluster client(int leader) {
        return new Cluster(String.join(",", group.address((leader + 1) % 3), group.address((leader + 2) % 3),
                group.address(leader)), null, TIMEOUT);
    }

    private HttpResponse<String> post(int i, String path, Object body, Map<String, String> headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + group.address(i) + path))
                .POST(body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body)));
        headers.forEach(b::header);
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Whether every running replica holds {@code volume} as {@code state} with {@code map} (null: none). */
    private boolean everyReplicaHolds(int volume, VolumeState state, StripeMap map) {
        for (int i = 0; i < group.size(); i++) {
            DirectoryServer s = group.server(i);
            if (s == null) {
                continue;
            }
            VolumeInfo v = s.directory().meta().volume(volume);
            if (v == null || v.state() != state || !Objects.equals(s.directory().meta().stripeMap(volume), map)) {
                return false;
            }
        }
        return true;
    }

    private static StripeMap plan(int volume, String job, String status) {
        List<StripeMap.Block> blocks = List.of(new StripeMap.Block("s1", "v" + volume + "-" + job + "-s0-u0", 16, 1),
                new StripeMap.Block("s2", "v" + volume + "-" + job + "-s0-u1", 16, 2),
                new StripeMap.Block("s3", "v" + volume + "-" + job + "-s0-u2", 16, 3));
        return new StripeMap(volume, job, "rs", 2, 1, 16, 20, status, List.of(new StripeMap.Stripe(0, blocks)),
                new StripeMap.IndexBlock("v" + volume + "-" + job + "-index", List.of("s4"), 40, 4));
    }

    private static void assertLeaseLost(Throwable t) {
        assertThat(t).isInstanceOf(Cluster.HttpStatusException.class);
        assertThat(((Cluster.HttpStatusException) t).status()).as(t.getMessage()).isEqualTo(409);
        assertThat(((Cluster.HttpStatusException) t).errorName()).as(t.getMessage()).isEqualTo("LEASE_LOST");
    }

    @Test
    void aCommitUnderALostLeaseIsRefusedByEveryLeaderAndReachesNoReplica() throws Exception {
        startGroup();
        int leader = leader();
        for (int s = 1; s <= 4; s++) {
            Wire.Heartbeat hb = new Wire.Heartbeat("s" + s, "127.0.0.1:" + (20000 + s), "rack-" + s, 1L << 40, 1L << 39, List.of());
            assertThat(post(leader, "/v1/heartbeat", hb, Map.of()).statusCode()).isEqualTo(200);
        }
        Cluster operator = client(leader);
        int volume = JSON.readValue(post(leader, "/v1/volumes", Map.of("count", 1), Map.of()).body(), VolumeInfo[].class)[0].id();
        operator.markReadOnly(volume, "to be encoded");

        // A takes the lease (epoch e) and begins an encode under it.
        Cluster a = client(leader);
        RaidLease aLease = RaidLease.acquire(a, "raid-a", 60_000);
        leases.add(aLease);
        long e = aLease.epoch();
        StripeMap planned = plan(volume, "0000000a", StripeMap.PLANNED);
        a.beginEncoding(planned);
        Await.until("every replica applied A's plan", () -> everyReplicaHolds(volume, VolumeState.ENCODING, planned));

        // The lease passes to B (A's released behind its back, as if it had run out): epoch e + 1.
        operator.releaseLease("raid-a");
        RaidLease bLease = RaidLease.acquire(client(leader), "raid-b", 60_000);
        leases.add(bLease);
        assertThat(bLease.epoch()).isEqualTo(e + 1);

        // The leader goes away; a new one is elected.
        group.stop(leader);
        int next = leader();
        assertThat(next).isNotEqualTo(leader);
        Cluster a2 = client(next);
        aLease.fence(a2);
        assertThat(a2.fenceEpoch()).isEqualTo(e);

        // A's commit, its rollback and its drop are refused by the new leader; nothing changed anywhere.
        assertLeaseLost(catchThrowable(() -> a2.commitEncoding(plan(volume, "0000000a", StripeMap.COMMITTED))));
        assertLeaseLost(catchThrowable(() -> a2.abortEncoding(volume, "0000000a")));
        assertThat(catchThrowable(aLease::check)).isInstanceOf(RaidLease.LostException.class);
        assertThat(everyReplicaHolds(volume, VolumeState.ENCODING, planned)).as("A's refused commits changed nothing").isTrue();

        // B's commit of the same map passes the fence.
        Cluster b2 = client(next);
        bLease.fence(b2);
        StripeMap committed = plan(volume, "0000000a", StripeMap.COMMITTED);
        b2.commitEncoding(committed);
        Await.until("every running replica applied B's commit", () -> everyReplicaHolds(volume, VolumeState.ERASURE_CODED, committed));
        assertLeaseLost(catchThrowable(() -> a2.replicasDropped(volume)));

        // The old leader comes back as a follower and catches up: B's commit, none of A's.
        group.start(leader);
        Await.until("the old leader caught up", Duration.ofSeconds(30),
                () -> everyReplicaHolds(volume, VolumeState.ERASURE_CODED, committed));
        List<String> replicas = group.server(leader).directory().meta().volume(volume).replicas();
        assertThat(replicas).as("A's replicas-dropped was never applied").hasSize(2);

        // A lease that ran out at the leader's clock fences nothing, before and after a leadership transfer.
        bLease.close(); // its client points at the stopped leader: released through the new one
        client(next).releaseLease("raid-b");
        long c = client(next).acquireLease("raid-c", 200);
        assertThat(c).isEqualTo(e + 2);
        Await.untilTrue("raid-c's lease ran out at the leader's clock", TIMEOUT, () -> JSON.readTree(http.send(HttpRequest.newBuilder(
                URI.create("http://" + group.address(next) + "/v1/raid-lease")).GET().build(), HttpResponse.BodyHandlers.ofString())
                .body()).path("holder").isNull());
        HttpResponse<String> stale = post(next, "/v1/volumes/" + volume + "/replicas-dropped", null,
                Map.of(Cluster.RAID_EPOCH_HEADER, Long.toString(c)));
        assertThat(stale.statusCode()).as(stale.body()).isEqualTo(409);
        assertThat(JSON.readTree(stale.body()).path("error").path("name").asText()).isEqualTo("LEASE_LOST");
        int target = (next + 1) % 3;
        assertThat(post(next, "/v1/group/leader", Map.of("id", group.id(target)), Map.of()).statusCode()).isEqualTo(200);
        Await.until("leadership moved", Duration.ofSeconds(30), () -> group.server(target).changeLog().leads());
        for (long epoch : new long[] {e, e + 1, c, c + 1, 0, -1, Long.MAX_VALUE}) {
            HttpResponse<String> r = post(target, "/v1/volumes/" + volume + "/replicas-dropped", null,
                    Map.of(Cluster.RAID_EPOCH_HEADER, Long.toString(epoch)));
            assertThat(r.statusCode()).as("epoch %d: %s", epoch, r.body()).isEqualTo(409);
            assertThat(JSON.readTree(r.body()).path("error").path("code").asInt()).isEqualTo(232);
        }
        Await.until("every replica applied as far as the leader", () -> everyReplicaHolds(volume, VolumeState.ERASURE_CODED, committed));
        for (int i = 0; i < group.size(); i++) {
            assertThat(group.server(i).directory().meta().volume(volume).replicas()).as("replicas on every replica").hasSize(2);
        }
        // Unfenced, the same request is applied (the operator's own call, as before fencing).
        assertThat(post(target, "/v1/volumes/" + volume + "/replicas-dropped", null, Map.of()).statusCode()).isEqualTo(200);
        Await.until("every replica applied the unfenced drop", () -> IntStream.range(0, group.size())
                .allMatch(i -> group.server(i).directory().meta().volume(volume).replicas().isEmpty()));
    }
}
