package io.hayloft.cli.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Short schedules of the life-cycle checker over fixed seeds: no acknowledged photo lost, no deleted
 * one readable, and the schedules together exercise every codec and every fault kind, power cuts of
 * the stores' simulated disks included. Longer runs:
 * {@code hayloft bench chaos} (docs/benchmarks.md). {@code -Dchaos.seed=S -Dchaos.steps=N
 * -Dchaos.schedules=M} replays other seeds here.
 */
class ChaosTest {
    static final long SEED = Long.getLong("chaos.seed", 1);
    static final int STEPS = Integer.getInteger("chaos.steps", 100);
    static final int SCHEDULES = Integer.getInteger("chaos.schedules", 3);

    @TempDir
    Path dir;

    @Test
    void shortSchedulesLoseNothingAndCoverEveryCodecAndFault() throws Exception {
        ChaosOptions options = ChaosOptions.of(SEED, STEPS, dir).withSchedules(SCHEDULES).withPowerCuts(true);
        PrintWriter out = new PrintWriter(System.out, true);
        ChaosStats stats = new LifeCycleChecker(options, out).run();
        out.print(stats.table());
        out.flush();

        assertThat(stats.losses()).isZero();
        assertThat(stats.steps()).isEqualTo((long) STEPS * SCHEDULES);
        assertThat(stats.needlesChecked()).isPositive();
        if (SEED == 1 && STEPS >= 100 && SCHEDULES >= 3) {
            assertThat(stats.codecs().keySet()).as("codecs that coded a volume").containsAll(ChaosOptions.ALL_CODECS);
            assertThat(stats.faults().keySet()).as("faults injected").contains("store-restart", "store-crash", "store-down",
                    "power-cut", "directory-restart", "cluster-crash", "block-delete", "block-corrupt", "raid-crash");
            assertThat(stats.ops().keySet()).contains("put", "put-batch", "delete", "overwrite", "seal", "encode", "reclaim",
                    "compact");
        }
    }
}
