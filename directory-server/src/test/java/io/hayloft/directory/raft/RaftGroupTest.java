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
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
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
    private LocalGroup group;

    @TempDir
    Path dir;

    /** Probes always pass and volumes are always made: this test is about the directory's own state. */
    private static final StoreAdmin STORES = AcceptingStores.INSTANCE;

    @AfterEach
    void close() {
        if (group != null) {
            group.close();
        }
    }

    private void startGroup(long snapshotEvery) throws Exception {
        group = LocalGroup.builder(3, () -> {
            DirectoryConfig c = new DirectoryConfig();
            c.replication = 2;
            c.minWritableVolumes = 1;
            c.keyRangeSize = 100;
            c.probeIntervalMillis = 100_000;
            c.raft = new DirectoryConfig.Raft();
            c.raft.snapshotEvery = snapshotEvery;
            c.raft.logSegmentBytes = 16 << 10; // small segments, so the log below a snapshot is purged soon
            c.raft.electionTimeoutMillis = 300;
            return c;
        }, dir).storeAdmin(STORES).start();
    }

    private int leader() throws InterruptedException {
        return group.awaitLeader(Duration.ofSeconds(30));
    }

    private DirectoryServer server(int i) {
        return group.server(i);
    }

    private HttpResponse<String> post(int i, String path, Object body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://" + group.address(i) + path))
                .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body))).build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(int i, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://" + group.address(i) + path)).GET().build(),
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
        assertThat(refused.headers().firstValue("X-Hayloft-Leader")).contains(group.address(leader));
        assertThat(JSON.readTree(refused.body()).path("error").path("leader").asText()).isEqualTo(group.address(leader));

        for (int s = 1; s <= 4; s++) {
            assertThat(post(leader, "/v1/heartbeat", heartbeat(s)).statusCode()).isEqualTo(200);
        }
        HttpResponse<String> lease = post(leader, "/v1/leases", new Wire.LeaseRequest(10, List.of()));
        assertThat(lease.statusCode()).as(lease.body()).isEqualTo(200);

        // Every replica reports the group's one cluster id and the same leader, and applies the same state.
        Await.until("every replica took the group's cluster id", () -> Stream.of(0, 1, 2)
                .map(i -> server(i).directory().meta().clusterId()).distinct().count() == 1);
        Await.until("every replica applied the leader's changes", () -> Stream.of(0, 1, 2)
                .map(i -> server(i).directory().stores().size()).allMatch(n -> n == 4));
        Await.until("every replica holds the same state", this::sameState);
        JsonNode view = JSON.readTree(get(follower, "/v1/group").body());
        assertThat(view.path("leader").asText()).isEqualTo(group.id(leader));
        assertThat(view.path("replicas")).hasSize(3);
        Set<String> roles = new HashSet<>();
        view.path("replicas").forEach(r -> roles.add(r.path("role").asText()));
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
            long markBefore = group.server(leader).directory().meta().keyHighWaterMark();
            group.stop(leader);
            int next = leader();
            assertThat(next).isNotEqualTo(leader);
            // The new leader reserves its term's first range as soon as it is ready, before any lease asks.
            Await.until("the new leader reserved a key range of its own before any lease",
                    () -> group.server(next).directory().meta().keyHighWaterMark() > markBefore);
            group.start(leader);
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
        group.stop(victim);
        // More changes while it is away, so the log it would need is purged behind a snapshot.
        for (int s = 61; s <= 450; s++) {
            assertThat(post(leader, "/v1/heartbeat", heartbeat(s)).statusCode()).isEqualTo(200);
        }
        long purgedBelow = ((RaftChangeLog) server(leader).changeLog()).logStartIndex();
        assertThat(purgedBelow).as("the leader purged the log the wiped replica would need").isGreaterThan(1);
        group.wipe(victim);
        Await.until("the wiped replica holds all 450 stores", Duration.ofSeconds(60),
                () -> server(victim).directory().stores().size() == 450);
        Await.until("the wiped replica applied as far as the leader", Duration.ofSeconds(30), () -> sameState());
        assertThat(server(victim).directory().meta().clusterId()).isEqualTo(server(leader).directory().meta().clusterId());
        assertThat(group.installedSnapshots(victim)).as("caught up by a snapshot").isPositive();
    }

    /** Whether every running replica holds the same stores, volumes, counters and cluster id. */
    private boolean sameState() {
        Set<String> states = new HashSet<>();
        for (int i = 0; i < group.size(); i++) {
            DirectoryServer s = server(i);
            if (s == null) {
                continue;
            }
            var m = s.directory().meta();
            List<String> stores = m.stores().stream().map(StoreInfo::toString).toList();
            states.add(m.clusterId() + "|" + m.keyHighWaterMark() + "|" + m.volumeSequence() + "|" + stores + "|" + m.volumes());
        }
        return states.size() == 1;
    }
}
