package io.hayloft.cli.chaos;

import io.hayloft.raid.Checkpoints;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.ThreadPoolRunner;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The raid-node of a concurrent schedule, as one process: every background raid job (encode,
 * reclaim, drain, repair) runs inside it ({@link #run}), and a simulated crash ({@link #crash})
 * kills all of them at once, as the death of the real process would: the first job to reach the
 * armed checkpoint throws a {@link ChaosRun.RaidCrash}, every other job throws one at its next
 * checkpoint, and once none is left running the process "restarts": {@link RaidNode#recover()}
 * rolls back or finishes what was interrupted before any new job starts. Jobs that reach no
 * checkpoint before they end simply finish.
 *
 * <p>Thread-safe: background threads run jobs, the fault thread crashes it.
 */
final class RaidProcess {
    /** Every checkpoint of encode, reclaim, drain and repair a crash may be armed at. */
    static final List<String> CHECKPOINTS = List.of("begun", "stripe-0", "stripe-1", "index", "verified", "committed", "dropped",
            "compacted", "reclaim-begun", "swapped", "old-deleted", "draining", "replica-copied", "replica-moved",
            "block-copied", "block-moved", "index-copied", "index-moved", "rebuilt", "replaced");

    /** Fair, so a crash waiting for the running jobs to die holds back new ones. */
    private final ReentrantReadWriteLock alive = new ReentrantReadWriteLock(true);
    private volatile String armedAt;
    private volatile boolean dying;
    private volatile CountDownLatch reached = new CountDownLatch(1);
    private final Checkpoints checkpoints = step -> {
        if (dying) {
            throw new ChaosRun.RaidCrash(step);
        }
        if (step.equals(armedAt)) {
            dying = true;
            reached.countDown();
            throw new ChaosRun.RaidCrash(step);
        }
    };

    /** A raid-node of this process: its jobs die with it. */
    RaidNode node(RaidConfig config, ThreadPoolRunner runner) {
        RaidNode node = new RaidNode(config, runner);
        node.checkpoints(checkpoints);
        return node;
    }

    /** The checkpoints of this process, for jobs built outside a {@link RaidNode} (the block fixer). */
    Checkpoints checkpoints() {
        return checkpoints;
    }

    /** Runs a job in the process (waits while it restarts). */
    <T> T run(Callable<T> job) throws Exception {
        alive.readLock().lockInterruptibly();
        try {
            return job.call();
        } finally {
            alive.readLock().unlock();
        }
    }

    /**
     * Crashes the process at the first job to reach a checkpoint drawn from {@code rnd} (or, if none
     * does within 3 s, at the next checkpoint any job reaches), waits until no job is left running,
     * and recovers with {@code recovery}.
     *
     * @return what happened, for the history
     */
    String crash(Random rnd, RaidNode recovery) throws Exception {
        String at = CHECKPOINTS.get(rnd.nextInt(CHECKPOINTS.size()));
        reached = new CountDownLatch(1);
        armedAt = at;
        boolean hit = reached.await(3, TimeUnit.SECONDS);
        dying = true;
        alive.writeLock().lockInterruptibly();
        try {
            armedAt = null;
            String what = hit ? "crashed at " + at : "armed at " + at + ", not reached in 3 s: crashed at the next checkpoint";
            try {
                recovery.recover();
                return what + "; recovered";
            } catch (Exception e) {
                return what + "; recovery failed (" + e + "), left to the next";
            }
        } finally {
            dying = false;
            alive.writeLock().unlock();
        }
    }
}
