package io.hayloft.directory.meta;

import java.util.function.LongConsumer;

/**
 * Hands out photo keys that are never reused, also across crashes: keys come from a range whose end
 * is persisted (synced) as the high-water mark before the first key of the range is handed out.
 * After a restart allocation resumes at the persisted mark, so a crash wastes at most one range and
 * never repeats a key.
 *
 * <p>In a Raft group the mark is a committed log entry ({@link io.hayloft.directory.ChangeLog}), and the
 * allocator starts again from the applied mark whenever the term of the write it serves differs from
 * the term it last allocated in: a new leader never hands out a key of a range an earlier leader
 * reserved, across any number of leader changes and restarts.
 *
 * <p>Thread-safe.
 */
public final class KeyAllocator {

    private final MetaStore store;
    private final int rangeSize;
    private long next;
    private long limit;
    private long term = -1;

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

    /** Reserves {@code count} consecutive keys and returns the first (a single directory: the mark written at once). */
    public synchronized long allocate(int count) {
        return allocate(count, 0, hwm -> store.setKeyHighWaterMark(hwm));
    }

    /**
     * As {@link #allocate(int)} for a write of Raft term {@code writeTerm}: a new mark is handed to
     * {@code persist}, which returns once it is committed (or throws, and no key is handed out).
     */
    public synchronized long allocate(int count, long writeTerm, LongConsumer persist) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be >= 1, was " + count);
        }
        reserve(count, writeTerm, persist);
        long first = next;
        next += count;
        return first;
    }

    /**
     * Reserves a range for term {@code writeTerm} without handing out a key, when this allocator holds
     * none for it yet: what a new leader does as soon as it is ready, so the first lease of its term
     * does not wait for that commit. Does nothing when the term's range is already reserved.
     */
    public synchronized void warm(long writeTerm, LongConsumer persist) {
        if (writeTerm != term || next >= limit) {
            reserve(1, writeTerm, persist);
        }
    }

    private void reserve(int count, long writeTerm, LongConsumer persist) {
        if (writeTerm != term) {
            // A write of another term: another leader may have reserved ranges meanwhile. Start above
            // everything committed, which this replica has applied (the write's begin() waited for it).
            next = Math.max(next, store.keyHighWaterMark());
            limit = next;
            term = writeTerm;
        }
        if (next + count > limit) {
            long newLimit = Math.max(next + count, limit) + rangeSize;
            persist.accept(newLimit);
            limit = newLimit;
        }
    }
}
