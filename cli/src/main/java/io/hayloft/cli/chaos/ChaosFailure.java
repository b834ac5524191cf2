package io.hayloft.cli.chaos;

import java.util.List;

/**
 * A schedule broke an invariant: an acknowledged photo lost or read back with other bytes, a deleted
 * one readable, garbage returned for an in-doubt one; in a concurrent schedule also a history that
 * breaks the model or a background job that failed with no fault in effect. Carries the seed, the
 * step (-1 for a concurrent schedule), the last steps or events of the schedule and the command that
 * replays it.
 */
public final class ChaosFailure extends AssertionError {
    private static final long serialVersionUID = 1L;

    private final long seed;
    private final int step;

    ChaosFailure(long seed, int step, String what, List<String> history, String replay) {
        super(message(seed, step, what, history, replay));
        this.seed = seed;
        this.step = step;
    }

    /** A violation of a concurrent schedule, its report already written. */
    ChaosFailure(long seed, String report) {
        super(report);
        this.seed = seed;
        this.step = -1;
    }

    private static String message(long seed, int step, String what, List<String> history, String replay) {
        StringBuilder b = new StringBuilder();
        b.append("LOSS in schedule seed ").append(seed).append(" at step ").append(step).append(": ").append(what).append('\n');
        b.append("last steps:\n");
        for (String h : history) {
            b.append("  ").append(h).append('\n');
        }
        b.append("replay: ").append(replay);
        return b.toString();
    }

    public long seed() {
        return seed;
    }

    public int step() {
        return step;
    }
}
