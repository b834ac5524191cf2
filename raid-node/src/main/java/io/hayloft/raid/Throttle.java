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
 * <p>A reservation whose transfer then fails carried nothing: {@link #release} gives its time back
 * (the links' next free time moves back, never before now), so a store whose reads fail does not
 * keep pushing its own egress and the repairer's ingress further into the future. Bytes reserved
 * per link are counted ({@link #egressBytes}, {@link #ingressBytes}; released ones subtracted).
 *
 * <p>Thread-safe: each link's reservation is made under its own lock; waits happen outside them.
 */
public final class Throttle {

    private final long bytesPerSecond;
    /** Per link: {next free time (nanoTime), bytes reserved}. Each array is locked while used. */
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
        long outDone;
        synchronized (out) {
            outDone = Math.max(now, out[0]) + duration;
            out[0] = outDone;
            out[1] += bytes;
        }
        if (sink == null) {
            return outDone;
        }
        long[] in = slot("in:" + sink);
        synchronized (in) {
            long inDone = Math.max(now, in[0]) + duration;
            in[0] = inDone;
            in[1] += bytes;
            return Math.max(outDone, inDone);
        }
    }

    /**
     * Gives back a reservation of {@link #reserve} whose transfer failed or was abandoned before
     * carrying its bytes: each link's next free time moves back by its duration (not before now).
     */
    public void release(String source, String sink, long bytes) {
        if (bytesPerSecond == 0 || bytes <= 0) {
            return;
        }
        long duration = bytes * 1_000_000_000L / bytesPerSecond;
        giveBack(slot("out:" + source), duration, bytes);
        if (sink != null) {
            giveBack(slot("in:" + sink), duration, bytes);
        }
    }

    /** Bytes reserved (and not released) on the egress of {@code store}; 0 when unlimited. */
    public long egressBytes(String store) {
        return reserved("out:" + store);
    }

    /** Bytes reserved (and not released) on the ingress of {@code store}; 0 when unlimited. */
    public long ingressBytes(String store) {
        return reserved("in:" + store);
    }

    private long reserved(String link) {
        long[] l = nextFree.get(link);
        if (l == null) {
            return 0;
        }
        synchronized (l) {
            return l[1];
        }
    }

    private static void giveBack(long[] link, long duration, long bytes) {
        long now = System.nanoTime();
        synchronized (link) {
            link[0] = Math.max(now, link[0] - duration);
            link[1] -= bytes;
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
        return nextFree.computeIfAbsent(link, s -> new long[] {System.nanoTime(), 0});
    }
}
