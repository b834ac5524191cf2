package io.hayloft.bench.failover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
 * A minority partition of one follower, on simulated hosts: the group keeps writing without it, the
 * cut-off follower hands out no lease, and after the heal it catches up; every replica ends with the
 * same state, entry by entry.
 */
class FollowerPartitionTest {
    @TempDir
    Path dir;

    @Test
    void aFollowerCutOffFromTheOthersCatchesUpAfterTheHeal() throws Exception {
        assumeTrue(SimulatedHosts.available().usable(), SimulatedHosts.available().reason());
        try (GroupProcesses g = GroupProcesses.start(FailoverTesting.options(dir, true)); WriteLoad load = FailoverTesting.load(g, 4)) {
            load.start();
            FailoverTesting.awaitProbeAcks(load, 5, "probe puts before the partition");
            GroupProcesses.Node leader = g.awaitLeader(FailoverTesting.LONG);
            GroupProcesses.Node cut = g.replicas().stream().filter(n -> n != leader).findFirst().orElseThrow();
            List<SimulatedHost> others = g.replicas().stream().filter(n -> n != cut).map(GroupProcesses.Node::host).toList();
            g.net().partition(Set.of(cut.host()), others);

            FailoverTesting.awaitProbeAcks(load, 20, "writes while a follower is cut off");
            HttpResponse<String> l = g.post(cut.http(), "/v1/leases", "{\"keys\":1,\"exclude\":[]}", Duration.ofSeconds(20));
            assertThat(l).isNotNull();
            assertThat(l.statusCode()).as("a lease asked of the cut-off follower: %s", l.body()).isIn(421, 503);
            List<GroupProcesses.Node> majority = g.replicas().stream().filter(n -> n != cut).toList();
            Await.until("the majority has a leader", FailoverTesting.LONG, GroupProcesses.ASK_EVERY,
                    () -> g.leaderNowAmong(majority) != null);
            long applied = g.appliedIndex(g.leaderNowAmong(majority));

            g.net().healPartitions();
            g.awaitLeader(FailoverTesting.LONG);
            Await.until("the cut-off follower catches up", FailoverTesting.LONG, GroupProcesses.ASK_EVERY,
                    () -> g.appliedIndex(cut) >= applied);
            FailoverTesting.awaitProbeAcks(load, 5, "writes after the heal");
            FailoverTesting.stopAndVerify(load);
            FailoverTesting.assertSameStateEverywhere(g);
        }
    }
}
