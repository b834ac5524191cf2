package io.hayloft.cli.chaos;

import java.util.ArrayList;
import java.util.List;

/**
 * When faults were in effect, so a background job that failed can be told apart: a failure that
 * overlaps a fault (from its injection until {@link #GRACE_NANOS} after the cluster was whole again:
 * a restarted store is probed, heartbeats, and the directory's map catches up) may be the fault's
 * doing; any other failure is a violation.
 *
 * <p>Thread-safe.
 */
final class FaultWindows {
    /** How long after a fault ended a job's failure is still put down to it. */
    static final long GRACE_NANOS = 2_000_000_000L;

    private final List<long[]> windows = new ArrayList<>();

    /** A fault begins; returns the handle to {@link #end} it with. */
    synchronized long[] begin() {
        long[] w = {System.nanoTime(), Long.MAX_VALUE};
        windows.add(w);
        return w;
    }

    synchronized void end(long[] w) {
        w[1] = System.nanoTime();
    }

    /** Whether a fault was in effect (or within the grace after one) at some time in [from, to]. */
    synchronized boolean overlaps(long from, long to) {
        for (long[] w : windows) {
            long end = w[1] == Long.MAX_VALUE ? Long.MAX_VALUE : w[1] + GRACE_NANOS;
            if (w[0] <= to && end >= from) {
                return true;
            }
        }
        return false;
    }
}
