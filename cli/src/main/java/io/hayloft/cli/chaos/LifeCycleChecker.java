package io.hayloft.cli.chaos;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

/**
 * The life-cycle model checker, in the spirit of Jepsen and of FoundationDB's simulation: long
 * random schedules of puts (single and batched, random sizes, alternate keys over the whole 32-bit
 * range), deletes, overwrites, seals, raid encodes with every codec, reclaims, compactions, block
 * repairs, and faults (store restarts, crashes and power cuts, directory restarts, block files deleted
 * or corrupted on disk, raid-node crashes at a random checkpoint followed by recovery) against a real
 * {@link io.hayloft.cli.cluster.EmbeddedCluster} and the real {@link io.hayloft.client.HayloftClient},
 * checked after every step against a reference {@link Model}: every acknowledged, undeleted photo
 * reads back byte-exact, deleted ones never do, in-doubt ones read back one of their candidates or
 * nothing, and a wrong cookie reads as not found.
 *
 * <p>With {@code clients > 1} each schedule is concurrent ({@link ConcurrentChaosRun}): client threads,
 * background jobs and faults at once, the history checked against the model afterwards.
 *
 * <p>Schedule {@code j} uses seed {@code options.seed() + j}; every seed is printed before its schedule
 * runs, and a failure ({@link ChaosFailure}) carries the step, the last steps and the replay command.
 *
 * <p>Not thread-safe: one run at a time per instance.
 */
public final class LifeCycleChecker {
    private final ChaosOptions options;
    private final PrintWriter out;
    private final ChaosStats total = new ChaosStats();

    public LifeCycleChecker(ChaosOptions options, PrintWriter out) {
        this.options = options;
        this.out = out;
    }

    /**
     * Runs every schedule and returns the summed statistics.
     *
     * @throws ChaosFailure at the first schedule that breaks an invariant
     */
    public ChaosStats run() throws Exception {
        for (int j = 0; j < options.schedules(); j++) {
            long seed = options.seed() + j;
            if (options.clients() > 1) {
                concurrent(j, seed);
                continue;
            }
            out.printf("chaos schedule %d/%d: seed %d, %d steps (replay: %s)%n", j + 1, options.schedules(), seed,
                    options.steps(), options.replayCommand(seed));
            out.flush();
            try (ChaosRun run = new ChaosRun(options, seed)) {
                ChaosStats s = counted(run::run, run::stats);
                out.printf("chaos schedule seed %d: ok, %d steps, %d faults, %d needles checked in %.1f s%n", seed, s.steps(),
                        s.faultCount(), s.needlesChecked(), s.nanos() / 1e9);
                out.flush();
            }
        }
        return total;
    }

    /** The figures of the schedules run so far (of every schedule, the failing one included, after a failure). */
    public ChaosStats stats() {
        return total;
    }

    private void concurrent(int j, long seed) throws Exception {
        out.printf("chaos schedule %d/%d: seed %d, %d clients x %d operations, background jobs and faults at once (replay: %s)%n",
                j + 1, options.schedules(), seed, options.clients(), options.steps(), options.replayCommand(seed));
        out.flush();
        try (ConcurrentChaosRun run = new ConcurrentChaosRun(options, seed)) {
            ChaosStats s = counted(run::run, run::stats);
            out.printf("chaos schedule seed %d: ok, %d operations, %d faults, %d photos (%d needles) checked in %.1f s%n", seed,
                    s.operations(), s.faultCount(), s.photosChecked(), s.needlesChecked(), s.nanos() / 1e9);
            out.flush();
        }
    }

    /**
     * Runs one schedule and adds its figures to {@link #total}: those of the whole run, or after a
     * failure those it had gathered when it failed.
     */
    private ChaosStats counted(Callable<ChaosStats> run, Supplier<ChaosStats> soFar) throws Exception {
        ChaosStats s;
        try {
            s = run.call();
        } catch (ChaosFailure f) {
            total.add(soFar.get());
            throw f;
        }
        total.add(s);
        return s;
    }
}
