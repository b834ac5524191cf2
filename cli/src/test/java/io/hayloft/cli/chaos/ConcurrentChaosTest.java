package io.hayloft.cli.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A short concurrent schedule of the life-cycle checker ({@code hayloft bench chaos --clients 4}):
 * four client threads putting (single, batched, coalesced), reading and deleting through one client
 * while seals, encodes, reclaims, compactions, drains, repairs and scrubs run in the background and
 * faults (power cuts included) strike; then the quiet phase codes every volume and reads every
 * needle. The history must match the model and every background job make progress: no violation.
 * {@code -Dchaos.seed=S -Dchaos.steps=N -Dchaos.clients=C} replays others here.
 */
class ConcurrentChaosTest {
    static final long SEED = Long.getLong("chaos.seed", 1);
    static final int STEPS = Integer.getInteger("chaos.steps", 150);
    static final int CLIENTS = Integer.getInteger("chaos.clients", 4);

    @TempDir
    Path dir;

    @Test
    void clientsJobsAndFaultsAtOnceMatchTheModel() throws Exception {
        check(ChaosOptions.of(SEED, STEPS, dir).withClients(CLIENTS).withPowerCuts(true));
    }

    /**
     * The same against a directory group of three replicas ({@code --directories 3}), with leader kills,
     * follower wipes and replica restarts among the faults: the clients and the raid-node follow the leader.
     */
    @Test
    void withADirectoryGroupOfThreeReplicas() throws Exception {
        check(ChaosOptions.of(SEED, Integer.getInteger("chaos.groupSteps", 80), dir).withClients(CLIENTS).withDirectories(3));
    }

    private static void check(ChaosOptions options) throws Exception {
        int steps = options.steps();
        PrintWriter out = new PrintWriter(System.out, true);
        LifeCycleChecker checker = new LifeCycleChecker(options, out);
        try {
            checker.run();
        } finally {
            out.print(checker.stats().table());
            out.flush();
        }
        ChaosStats stats = checker.stats();
        assertThat(stats.violations()).isZero();
        assertThat(stats.operations()).isGreaterThan((long) steps * options.clients() / 2);
        assertThat(stats.photosChecked()).isPositive();
        assertThat(stats.ops()).containsKeys("put", "put-batch", "get", "delete", "job all-coded"); // the quiet phase ran (its encodes only when volumes were left uncoded)
        assertThat(stats.codecs()).isNotEmpty();
    }
}
