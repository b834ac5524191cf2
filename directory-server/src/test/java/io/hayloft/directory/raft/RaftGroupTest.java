package io.hayloft.directory.raft;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import io.hayloft.directory.StoreAdmin;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.wire.Wire;
import io.hayloft.testkit.Await;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three directory replicas in one JVM, on loopback, each a real Raft server over its own RocksDB:
 * the group elects one leader, followers answer changes with 421 naming it, every replica applies the
 * same changes (compared record by record), keys are never handed out twice across leader changes,
 * and a replica whose data is wiped catches up from the leader's snapshot.
 */
class RaftGroupTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final List<DirectoryServer> servers = new ArrayList<>(List.of());
    private final List<DirectoryConfig.Peer> peers = new ArrayList<>();

    @TempDir
    Path dir;

    /** Probes always pass and volumes are always made: this test is about the directory's own state. */
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
    void close() {
        servers.forEach(s -> {
            if (s != null) {
                s.close();
            }
        });
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private DirectoryConfig config(int i, long snapshotEvery) {
        DirectoryConfig c = new DirectoryConfig();
        c.dataDir = dir.resolve("n" + (i + 1)).toString();
        c.init = true;
        c.replication = 2;
        c.minWritableVolumes = 1;
        c.keyRangeSize = 100;
        c.probeIntervalMillis = 100_000;
        c.raft = new DirectoryConfig.Raft();
        c.raft.id = "n" + (i + 1);
        c.raft.peers = peers;
        c.raft.snapshotEvery = snapshotEvery;
        c.raft.logSegmentBytes = 16 << 10; // small segments, so the log below a snapshot is purged soon
        c.raft.electionTimeoutMillis = 300;
        return c;
    }

    private void startGroup(long snapshotEvery) throws Exception {
        for (int i = 0; i < 3; i++) {
            peers.add(new DirectoryConfig.Peer("n" + (i + 1), "127.0.0.1:" + freePort(), "127.0.0.1:" + freePort()));
        }
        List<CompletableFuture<DirectoryServer>> starting = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            DirectoryConfig c = config(i, snapshotEvery);
            starting.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return DirectoryServer.start(c, STORES);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        for (CompletableFuture<DirectoryServer> f : starting) {
            servers.add(f.get());
        }
    }

    private int leader() throws InterruptedException {
        int[] found = {-1};
        Await.until("one replica leads", Duration.ofSeconds(30), () -> {
            for (int i = 0; i < servers.size(); i++) {
                if (servers.get(i) != null && servers.get(i).changeLog().leads()) {
                    found[0] = i;
                    return true;
                }
            }
            return false;
        });
        return found[0];
    }

    private HttpResponse<String> post(int i, String path, Object body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://" + peers.get(i).http + path))
                .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body))).build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(int i, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://" + peers.get(i).http + path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static Wire.Heartbeat heartbeat(int store) {
        return new Wire.Heartbeat("s" + store, "127.0.0.1:" + (20000 + store), "rack-" + (store % 3), 1L << 40, 1L << 39, List.of());
    }

    @Test
    void followersPointAtTheLeaderAndEveryReplicaAppliesTheSameChanges() throws Exception {
        startGroup(10_000);
        int leader = leader();
        int follower = (leader + 1) % 3;

        HttpResponse<String> refused = post(follower, "/v1/heartbeat", heartbeat(1));
        assertThat(refused.statusCode()).isEqualTo(421);
        assertThat(refused.headers().firstValue("X-Hayloft-Leader")).contains(peers.get(leader).http);
        assertThat(JSON.readTree(refused.body()).path("error").path("leader").asText()).isEqualTo(peers.get(leader).http);

        for (int s = 1; s <= 4; s++) {
            assertThat(post(leader, "/v1/heartbeat", heartbeat(s)).statusCode()).isEqualTo(200);
        }
        HttpResponse<String> lease = post(leader, "/v1/leases", new Wire.LeaseRequest(10, List.of()));
        assertThat(lease.statusCode()).as(lease.body()).isEqualTo(200);

        // Every replica reports the group's one cluster id and the same leader, and applies the same state.
        Await.until("every replica took the group's cluster id", () -> Stream.of(0, 1, 2)
                .map(i -> servers.get(i).directory().meta().clusterId()).distinct().count() == 1);
        Await.until("every replica applied the leader's changes", () -> Stream.of(0, 1, 2)
                .map(i -> servers.get(i).directory().stores().size()).allMatch(n -> n == 4));
        Await.until("every replica holds the same state", this::sameState);
        JsonNode group = JSON.readTree(get(follower, "/v1/group").body());
        assertThat(group.path("leader").asText()).isEqualTo(peers.get(leader).id);
        assertThat(group.path("replicas")).hasSize(3);
        Set<String> roles = new HashSet<>();
        group.path("replicas").forEach(r -> roles.add(r.path("role").asText()));
        assertThat(roles).containsExactlyInAnyOrder("LEADER", "FOLLOWER");
        // A follower answers the volume map from its own state.
        assertThat(get(follower, "/v1/volume-map").statusCode()).isEqualTo(200);
    }

    @Test
    void keysAreNeverHandedOutTwiceAcrossLeaderChanges() throws Exception {
        startGroup(10_000);
        Set<Long> keys = new HashSet<>();
        for (int round = 0; round < 3; round++) {
            int leader = leader();
            for (int s = 1; s <= 3; s++) {
                assertThat(post(leader, "/v1/heartbeat", heartbeat(s)).statusCode()).isEqualTo(200);
            }
            for (int n = 0; n < 5; n++) {
                HttpResponse<String> r = post(leader, "/v1/leases", new Wire.LeaseRequest(37, List.of()));
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                Wire.Lease l = JSON.readValue(r.body(), Wire.Lease.class);
                for (long k = l.first(); k < l.first() + l.count(); k++) {
                    assertThat(keys.add(k)).as("key %d handed out twice", k).isTrue();
                }
            }
            // The leader goes away and comes back as a follower of the next one.
            long markBefore = servers.get(leader).directory().meta().keyHighWaterMark();
            servers.get(leader).close();
            servers.set(leader, null);
            int next = leader();
            assertThat(next).isNotEqualTo(leader);
            // The new leader reserves its term's first range as soon as it is ready, before any lease asks.
            Await.until("the new leader reserved a key range of its own before any lease",
                    () -> servers.get(next).directory().meta().keyHighWaterMark() > markBefore);
            DirectoryConfig c = config(leader, 10_000);
            servers.set(leader, DirectoryServer.start(c, STORES));
        }
    }

    @Test
    void aWipedReplicaCatchesUpFromTheLeadersSnapshot() throws Exception {
        startGroup(20);
        int leader = leader();
        // Each new store is a change of the log (a heartbeat that changes nothing is not logged in a group).
        for (int s = 1; s <= 60; s++) {
            assertThat(post(leader, "/v1/heartbeat", heartbeat(s)).statusCode()).isEqualTo(200);
        }
        int victim = (leader + 2) % 3;
        servers.get(victim).close();
        servers.set(victim, null);
        // More changes while it is away, so the log it would need is purged behind a snapshot.
        for (int s = 61; s <= 450; s++) {
            assertThat(post(leader, "/v1/heartbeat", heartbeat(s)).statusCode()).isEqualTo(200);
        }
        deleteTree(dir.resolve("n" + (victim + 1)));
        DirectoryServer lead = servers.get(leader);
        long purgedBelow = lead.changeLog() instanceof RaftChangeLog r ? r.logStartIndex() : 0;
        assertThat(purgedBelow).as("the leader purged the log the wiped replica would need").isGreaterThan(1);
        servers.set(victim, DirectoryServer.start(config(victim, 20), STORES));
        Await.until("the wiped replica holds all 450 stores", Duration.ofSeconds(60),
                () -> servers.get(victim).directory().stores().size() == 450);
        Await.until("the wiped replica applied as far as the leader", Duration.ofSeconds(30), () -> sameState());
        assertThat(servers.get(victim).directory().meta().clusterId()).isEqualTo(servers.get(leader).directory().meta().clusterId());
        assertThat(((RaftChangeLog) servers.get(victim).changeLog()).installedSnapshots()).as("caught up by a snapshot").isPositive();
    }

    /** Whether every running replica holds the same stores, volumes, counters and cluster id. */
    private boolean sameState() {
        Set<String> states = new HashSet<>();
        for (DirectoryServer s : servers) {
            if (s == null) {
                continue;
            }
            var m = s.directory().meta();
            List<String> stores = m.stores().stream().map(StoreInfo::toString).toList();
            states.add(m.clusterId() + "|" + m.keyHighWaterMark() + "|" + m.volumeSequence() + "|" + stores + "|" + m.volumes());
        }
        return states.size() == 1;
    }

    private static void deleteTree(Path p) throws IOException {
        try (Stream<Path> s = Files.walk(p)) {
            for (Path x : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(x);
            }
        }
    }
}
