package io.hayloft.bench.failover;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Leader loss on real processes, the short version of {@code hayloft bench failover}: three directory
 * replicas and three stores as separate processes (loopback), eight writers and the probe, the
 * leader killed with SIGKILL twice (each time started again with its same command): a new leader
 * takes over, the probe's puts (each needing a lease from the directory) go through again, every
 * acknowledged photo reads back byte-exact, no key is handed out twice, no two raid lease holders.
 */
class LeaderKillTest {
    @TempDir
    Path dir;

    @Test
    void twoLeaderKillsUnderWritesLoseNothing() throws Exception {
        try (GroupProcesses g = GroupProcesses.start(FailoverTesting.options(dir, false));
             WriteLoad load = FailoverTesting.load(g, 8)) {
            load.start();
            FailoverTesting.awaitProbeAcks(load, 5, "probe puts before the first kill");
            for (int i = 1; i <= 2; i++) {
                FailoverBench.Kill k = FailoverBench.killLeader(g, load, i);
                assertThat(k.newLeader()).as("the leader after kill %d", i).isNotEqualTo(k.killed());
            }
            g.awaitLeader(FailoverTesting.LONG);
            FailoverTesting.awaitProbeAcks(load, 5, "probe puts after the killed replica came back");
            FailoverTesting.stopAndVerify(load);
        }
    }
}
