package io.hayloft.bench.failover;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.hayloft.testkit.Await;
import io.hayloft.testkit.SimulatedHost;
import io.hayloft.testkit.SimulatedHosts;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A link that flaps, on simulated hosts: one replica's link to the other two goes down and up again,
 * {@value #FLAPS} times in a row (the leader's on odd flaps, so the other two elect a new leader each
 * time; a follower's on even ones, the one and then the other); each cut lasts until the group wrote
 * again without it, each heal until every replica names one leader. Writes keep going through during
 * every cut, nothing acknowledged is lost, and the group converges to one state. {@code -Dflaps=N}
 * flaps longer (at least {@value #FLAPS}).
 */
class FlappingLinkTest {
    /** Two cuts of the leader and two of a follower (the two followers there are then): each kind of flap twice. */
    static final int FLAPS = 4;

    @TempDir
    Path dir;

    @Test
    void writesGoOnAndTheGroupConvergesWhileALinkFlaps() throws Exception {
        assumeTrue(SimulatedHosts.available().usable(), SimulatedHosts.available().reason());
        try (GroupProcesses g = GroupProcesses.start(FailoverTesting.options(dir, true)); WriteLoad load = FailoverTesting.load(g, 4)) {
            load.start();
            FailoverTesting.awaitProbeAcks(load, 5, "probe puts before the flapping");
            int flaps = Math.max(FLAPS, Integer.getInteger("flaps", FLAPS));
            for (int flap = 1; flap <= flaps; flap++) {
                GroupProcesses.Node leader = g.awaitLeader(FailoverTesting.LONG);
                GroupProcesses.Node target = flap % 2 == 1 ? leader
                        : g.replicas().stream().filter(n -> n != leader).toList().get(flap / 2 % 2);
                List<GroupProcesses.Node> others = g.replicas().stream().filter(n -> n != target).toList();
                List<SimulatedHost> otherHosts = others.stream().map(GroupProcesses.Node::host).toList();
                g.net().partition(Set.of(target.host()), otherHosts);
                Await.until("flap " + flap + ": the other two lead themselves", FailoverTesting.LONG, GroupProcesses.ASK_EVERY,
                        () -> g.leaderNowAmong(others) != null);
                FailoverTesting.awaitProbeAcks(load, 3, "flap " + flap + ": writes while " + target.name() + " is cut off");
                g.net().healPartitions();
            }
            g.awaitLeader(FailoverTesting.LONG);
            FailoverTesting.awaitProbeAcks(load, 5, "writes after the last heal");
            FailoverTesting.stopAndVerify(load);
            FailoverTesting.assertSameStateEverywhere(g);
        }
    }
}
