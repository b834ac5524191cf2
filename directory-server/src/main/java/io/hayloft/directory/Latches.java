package io.hayloft.directory;

import com.google.common.util.concurrent.Striped;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * Orders the directory's read-modify-writes so that independent ones run, and commit, at once. A
 * change to one record (a volume, a store, a stripe map) holds that record's latch from reading it
 * to having its change applied: the next change to the same record is computed from the applied
 * one, while changes to other records are in flight in the same Raft rounds. A change that reads
 * or writes records it cannot name before reading (placing a new volume, failing a store and
 * sealing its volumes, an operator's move) holds every latch: it waits for the changes in flight
 * and runs alone, as every change did before.
 *
 * <p>The S3 namespace adds a level: a bucket's latch is shared by every change to the bucket's keys
 * ({@link #within}: the bucket's counters move by the amounts a change carries, so changes to
 * different keys need not wait for each other) and held alone by the changes of the bucket itself,
 * its creation and deletion ({@link #whole}), which so wait for the changes in flight to its keys.
 *
 * <p>Latches are striped ({@value #STRIPES} locks): two records may share one, which orders them
 * needlessly but never wrongly. A holder of {@link #shared} must not ask for {@link #exclusive}
 * (the exclusive one waits for every shared holder, itself included); a holder of
 * {@link #exclusive} may take shared latches (they are reentrant).
 *
 * <p>Thread-safe.
 */
final class Latches {
    static final int STRIPES = 1024;

    private final ReentrantReadWriteLock all = new ReentrantReadWriteLock();
    private final Striped<Lock> records = Striped.lock(STRIPES);
    private final Striped<ReadWriteLock> groups = Striped.readWriteLock(STRIPES);

    /** Held latches; closing releases them. */
    interface Held extends AutoCloseable {
        @Override
        void close();
    }

    /** A volume's latch key. */
    static Object volume(int id) {
        return "volume/" + id;
    }

    /** A store's latch key. */
    static Object store(String id) {
        return "store/" + id;
    }

    /** Takes the latches of {@code keys} (in the stripes' order, so two holders never wait for each other in a cycle). */
    Held shared(Iterable<?> keys) {
        all.readLock().lock();
        List<Lock> taken = new ArrayList<>();
        try {
            for (Lock l : records.bulkGet(keys)) {
                l.lock();
                taken.add(l);
            }
        } catch (RuntimeException | Error e) {
            release(taken);
            throw e;
        }
        return () -> release(taken);
    }

    Held shared(Object key) {
        return shared(List.of(key));
    }

    /**
     * Takes group {@code group}'s latch shared (with every other change within the group), then the
     * latches of {@code keys}, as {@link #shared} does.
     */
    Held within(Object group, Iterable<?> keys) {
        return grouped(groups.get(group).readLock(), keys);
    }

    /** Takes group {@code group}'s latch alone: waits for every change within it in flight, and holds off new ones. */
    Held whole(Object group) {
        return grouped(groups.get(group).writeLock(), List.of());
    }

    private Held grouped(Lock groupLock, Iterable<?> keys) {
        all.readLock().lock();
        List<Lock> taken = new ArrayList<>();
        try {
            groupLock.lock();
            taken.add(groupLock);
            for (Lock l : records.bulkGet(keys)) {
                l.lock();
                taken.add(l);
            }
        } catch (RuntimeException | Error e) {
            release(taken);
            throw e;
        }
        return () -> release(taken);
    }

    private void release(List<Lock> taken) {
        for (int i = taken.size() - 1; i >= 0; i--) {
            taken.get(i).unlock();
        }
        all.readLock().unlock();
    }

    /** Every latch: waits for the changes in flight; no other change starts until it is closed. */
    Held exclusive() {
        all.writeLock().lock();
        return () -> all.writeLock().unlock();
    }
}
