package io.hayloft.raid;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * A bandwidth budget per store: callers reserve bytes against a store and are paced so the store
 * serves at most {@code bytesPerSecond} to them, as a NIC would. Zero means unlimited.
 *
 * <p>Thread-safe: reservations are made under a per-store lock; the wait happens outside it.
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
        if (bytesPerSecond == 0 || bytes <= 0) {
            return;
        }
        long[] slot = nextFree.computeIfAbsent(store, s -> new long[] {System.nanoTime()});
        long until;
        synchronized (slot) {
            long start = Math.max(System.nanoTime(), slot[0]);
            until = start + bytes * 1_000_000_000L / bytesPerSecond;
            slot[0] = until;
        }
        // The caller proceeds when its bytes would have crossed the store's link.
        long wait;
        while ((wait = until - System.nanoTime()) > 0) {
            LockSupport.parkNanos(wait); // pacing to a rate, not waiting for an event
        }
    }
}
