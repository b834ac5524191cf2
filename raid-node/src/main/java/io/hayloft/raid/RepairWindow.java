package io.hayloft.raid;

import java.util.ArrayDeque;

/**
 * Bytes rebuilt over a sliding window of time, for the repair rate {@code /status} shows.
 *
 * <p>Thread-safe: every method synchronizes on the window.
 */
final class RepairWindow {

    private final long windowNanos;
    private final ArrayDeque<long[]> events = new ArrayDeque<>(); // {nanoTime, bytes}

    RepairWindow(long windowNanos) {
        if (windowNanos <= 0) {
            throw new IllegalArgumentException("windowNanos must be > 0, was " + windowNanos);
        }
        this.windowNanos = windowNanos;
    }

    synchronized void add(long bytes) {
        long now = System.nanoTime();
        events.addLast(new long[] {now, bytes});
        expire(now);
    }

    /** Bytes per second rebuilt over the window. */
    synchronized double rate() {
        long now = System.nanoTime();
        expire(now);
        long sum = 0;
        for (long[] e : events) {
            sum += e[1];
        }
        return sum * 1e9 / windowNanos;
    }

    private void expire(long now) {
        while (!events.isEmpty() && now - events.peekFirst()[0] > windowNanos) {
            events.removeFirst();
        }
    }
}
