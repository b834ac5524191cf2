package io.hayloft.raid;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * A bandwidth budget per link, as a NIC would impose: callers reserve bytes against one or two
 * links (a source store's egress and the repairer's ingress) and are paced so each link carries at
 * most {@code bytesPerSecond}. Each link is a FIFO queue of bytes at that rate; a transfer over two
 * links is done when both have carried its bytes (the later of its two finishing times), so a busy
 * ingress never leaves a source idle and vice versa — close to how flows share links. Full duplex:
 * a store's egress and ingress are separate links. Zero means unlimited.
 *
 * <p>Thread-safe: each link's reservation is made under its own lock; waits happen outside them.
 */
public final class Throttle {

    private final long bytesPerSecond;
    private final ConcurrentHashMap<String, long[]> nextFree = new ConcurrentHashMap<>();

    public Throttle(long bytesPerSecond) {
        if (bytesPerSecond < 0) {
            throw new IllegalArgumentException("bytesPerSecond must be >= 0, was " + bytesPerSecond);
        }
        this.bytesPerSecond = bytesPerSecond;
    }

    /** Blocks until {@code store} could have sent {@code bytes} more within its budget (the transfer's end). */
    public void acquire(String store, long bytes) {
        pace(reserve(store, null, bytes));
    }

    /**
     * Reserves {@code bytes} on the egress of {@code source} and, when not null, the ingress of
     * {@code sink}; returns the {@link System#nanoTime()} at which the transfer has crossed both
     * links (now when unlimited). The caller waits until then, blocking or not.
     */
    public long reserve(String source, String sink, long bytes) {
        long now = System.nanoTime();
        if (bytesPerSecond == 0 || bytes <= 0) {
            return now;
        }
        long duration = bytes * 1_000_000_000L / bytesPerSecond;
        long[] out = slot("out:" + source);
        if (sink == null) {
            synchronized (out) {
                out[0] = Math.max(now, out[0]) + duration;
                return out[0];
            }
        }
        long[] in = slot("in:" + sink);
        long outDone;
        synchronized (out) {
            outDone = Math.max(now, out[0]) + duration;
            out[0] = outDone;
        }
        synchronized (in) {
            long inDone = Math.max(now, in[0]) + duration;
            in[0] = inDone;
            return Math.max(outDone, inDone);
        }
    }

    /** Parks the calling thread until {@code until} ({@link System#nanoTime()}). */
    static void pace(long until) {
        long wait;
        while ((wait = until - System.nanoTime()) > 0) {
            LockSupport.parkNanos(wait); // pacing to a rate, not waiting for an event
        }
    }

    private long[] slot(String link) {
        return nextFree.computeIfAbsent(link, s -> new long[] {System.nanoTime()});
    }
}
