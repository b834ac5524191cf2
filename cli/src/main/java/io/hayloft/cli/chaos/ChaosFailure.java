package io.hayloft.cli.chaos;

import java.util.List;

/**
 * A schedule broke an invariant: an acknowledged photo lost or read back with other bytes, a deleted
 * one readable, garbage returned for an in-doubt one. Carries the seed, the step, the last steps of
 * the schedule and the command that replays it.
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
