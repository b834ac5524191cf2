package io.hayloft.bench.failover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.format.wire.Wire;
import io.hayloft.testkit.Await;
import io.hayloft.testkit.SimulatedHost;
import io.hayloft.testkit.SimulatedHosts;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The leader's host cut off from the other two replicas, on simulated hosts (network namespaces),
 * while this JVM (the clients' side) and the stores still reach it: once the other two elected a
 * leader, the old leader acknowledges no state change (a heartbeat or a lease sent to it straight is
 * answered 421 or 503, never 200), the clients move to the new leader, and after the heal the old
 * leader rejoins as a follower with the same state as the others, entry by entry.
 */
class LeaderPartitionTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void aLeaderCutOffFromTheOtherReplicasAcknowledgesNothingAndRejoinsAsAFollower() throws Exception {
        assumeTrue(SimulatedHosts.available().usable(), SimulatedHosts.available().reason());
        try (GroupProcesses g = GroupProcesses.start(FailoverTesting.options(dir, true)); WriteLoad load = FailoverTesting.load(g, 4)) {
            load.start();
            FailoverTesting.awaitProbeAcks(load, 5, "probe puts before the partition");
            GroupProcesses.Node old = g.awaitLeader(FailoverTesting.LONG);
            List<GroupProcesses.Node> others = g.replicas().stream().filter(n -> n != old).toList();
            List<SimulatedHost> otherHosts = others.stream().map(GroupProcesses.Node::host).toList();
            g.net().partition(Set.of(old.host()), otherHosts);

            String[] next = {null};
            Await.until("the other two replicas elect a leader", FailoverTesting.LONG, GroupProcesses.ASK_EVERY, () -> {
                GroupProcesses.Node l = g.leaderNowAmong(others);
                next[0] = l == null ? null : l.name();
                return l != null;
            });
            // Past the old leader's lease: a change sent to it straight is never acknowledged.
            GroupProcesses.Node s1 = g.stores().get(0);
            String heartbeat = JSON.writeValueAsString(new Wire.Heartbeat(s1.name(), s1.http(), "r1", 1L << 40, 1L << 39, List.of()));
            String lease = JSON.writeValueAsString(new Wire.LeaseRequest(1, List.of()));
            for (int i = 0; i < 3; i++) {
                HttpResponse<String> hb = g.post(old.http(), "/v1/heartbeat", heartbeat, Duration.ofSeconds(20));
                HttpResponse<String> l = g.post(old.http(), "/v1/leases", lease, Duration.ofSeconds(20));
                assertThat(hb).as("the cut-off leader answers").isNotNull();
                assertThat(l).as("the cut-off leader answers").isNotNull();
                assertThat(hb.statusCode()).as("a heartbeat sent to the cut-off old leader: %s", hb.body()).isIn(421, 503);
                assertThat(l.statusCode()).as("a lease asked of the cut-off old leader: %s", l.body()).isIn(421, 503);
            }
            FailoverTesting.awaitProbeAcks(load, 10, "writes through the new leader " + next[0] + " while the old one is cut off");

            g.net().healPartitions();
            GroupProcesses.Node leader = g.awaitLeader(FailoverTesting.LONG);
            Await.until("the old leader rejoins as a follower", FailoverTesting.LONG, GroupProcesses.ASK_EVERY,
                    () -> "FOLLOWER".equals(g.role(old)) || g.leaderNow() == old);
            FailoverTesting.awaitProbeAcks(load, 5, "writes after the heal (leader " + leader.name() + ")");
            FailoverTesting.stopAndVerify(load);
            FailoverTesting.assertSameStateEverywhere(g);
        }
    }
}
