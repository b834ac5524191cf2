package io.hayloft.bench.failover;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.testkit.Await;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A wiped follower under load, on real processes: a follower is killed with SIGKILL, its data
 * directory deleted, the group goes on taking changes without it until the leader's log no longer holds
 * its first entries (snapshots every 20 entries, small log segments, purged behind the snapshots), and
 * it is started again with its same command
 * ({@code hayloft directory --init --config F}): it joins the existing group (it never forms one of
 * its own), installs the leader's snapshot (the log it would need is gone), catches up with the
 * leader's applied index, then takes the leadership by a transfer and serves writes as leader. Every
 * replica ends with the same state, entry by entry.
 */
class WipedFollowerTest {
    @TempDir
    Path dir;

    @Test
    void aWipedFollowerCatchesUpUnderLoadAndThenLeads() throws Exception {
        GroupProcesses.Options o = FailoverTesting.options(dir, false);
        o.snapshotEvery = 20;
        o.logSegmentBytes = 16 << 10;
        o.heartbeatMillis = 200; // a change every ~70 ms from the stores alone
        try (GroupProcesses g = GroupProcesses.start(o); WriteLoad load = FailoverTesting.load(g, 4)) {
            load.start();
            FailoverTesting.awaitProbeAcks(load, 5, "probe puts before the wipe");
            GroupProcesses.Node leader = g.awaitLeader(FailoverTesting.LONG);
            GroupProcesses.Node victim = g.replicas().stream().filter(n -> n != leader).findFirst().orElseThrow();
            g.kill9(victim);
            g.wipe(victim);
            long away = g.appliedIndex(leader);
            // Purges go by whole segments behind a snapshot: the first takes the log's start well past one snapshot's entries.
            Await.until("the group went on without the wiped follower until the leader's log no longer starts at its first entries",
                    FailoverTesting.LONG, GroupProcesses.ASK_EVERY, () -> {
                        GroupProcesses.Node l = g.leaderNow() == null ? leader : g.leaderNow();
                        return g.appliedIndex(l) > away && g.logStartIndex(l) > o.snapshotEvery;
                    });
            FailoverTesting.awaitProbeAcks(load, 5, "writes while the follower is away");

            g.launch(victim);
            Await.until("the wiped follower applied as far as the leader had when it came back", FailoverTesting.LONG,
                    GroupProcesses.ASK_EVERY, () -> {
                        GroupProcesses.Node l = g.leaderNow();
                        return l != null && l != victim && g.appliedIndex(victim) >= g.appliedIndex(l) - 5;
                    });
            assertThat(g.leaderSeenBy(victim)).as("the wiped follower follows the group's leader").isNotNull().isNotEqualTo(victim.name());
            assertThat(g.installedSnapshots(victim)).as("snapshots the wiped follower installed from the leader").isPositive();

            g.transferLeader(victim, FailoverTesting.LONG);
            FailoverTesting.awaitProbeAcks(load, 10, "writes with the once-wiped replica leading");
            assertThat(g.leaderNow()).isSameAs(victim);
            FailoverTesting.stopAndVerify(load);
            FailoverTesting.assertSameStateEverywhere(g);
        }
    }
}
