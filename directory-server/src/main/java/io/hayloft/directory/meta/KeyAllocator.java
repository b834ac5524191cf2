package io.hayloft.directory.meta;

/**
 * Hands out photo keys that are never reused, also across crashes: keys come from a range whose end
 * is persisted (synced) as the high-water mark before the first key of the range is handed out.
 * After a restart allocation resumes at the persisted mark, so a crash wastes at most one range and
 * never repeats a key.
 *
 * <p>Thread-safe.
 */
public final class KeyAllocator {

    private final MetaStore store;
    private final int rangeSize;
    private long next;
    private long limit;

    /**
     * @param rangeSize keys reserved per persisted step (a crash wastes at most this many)
     */
    public KeyAllocator(MetaStore store, int rangeSize) {
        if (rangeSize < 1) {
            throw new IllegalArgumentException("rangeSize must be >= 1, was " + rangeSize);
        }
        this.store = store;
        this.rangeSize = rangeSize;
        this.next = store.keyHighWaterMark();
        this.limit = next;
    }

    /** The next unused key. */
    public synchronized long next() {
        return allocate(1);
    }

    /** Reserves {@code count} consecutive keys and returns the first. */
    public synchronized long allocate(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be >= 1, was " + count);
        }
        if (next + count > limit) {
            long newLimit = Math.max(next + count, limit) + rangeSize;
            store.setKeyHighWaterMark(newLimit);
            limit = newLimit;
        }
        long first = next;
        next += count;
        return first;
    }
}
