package io.hayloft.directory;

import io.hayloft.directory.meta.Change;
import io.hayloft.directory.meta.LogEntry;
import io.hayloft.directory.meta.MetaStore.DeleteRecord;
import io.hayloft.format.directory.ReclaimPlan;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.errors.DirectoryErrors;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Where the directory's changes go: every write to its state is a {@link Change}, committed through
 * this log and applied to the {@link io.hayloft.directory.meta.MetaStore}. A single directory
 * ({@link LocalChangeLog}) applies each change at once; a replica of a Raft group
 * ({@link io.hayloft.directory.raft.RaftChangeLog}) appends it to the group's log, where every replica
 * applies it, and returns once this replica has.
 *
 * <p>A read-modify-write starts with {@link #begin()}: it checks, without a round trip, that this
 * replica may change the state (it leads, and has applied everything committed before its term), and
 * fixes the term its changes are computed in, so a change computed by a leader that lost its
 * leadership meanwhile is dropped rather than applied over a newer state ({@link LogEntry}). Changes
 * are {@linkplain #submit submitted} without waiting and many are in flight at once: the log commits
 * them in groups (one Raft round and one sync per replica for all that queued meanwhile; a single
 * directory: one sync per group). A caller orders its changes to the same records itself, by
 * computing the next one after the previous one is applied (the {@link Latches} of the directory).
 * A caller that only reads and acts on what it read (a lease) calls {@link #readBarrier()} first.
 *
 * <p>Implementations are thread-safe.
 */
public interface ChangeLog extends AutoCloseable {

    /**
     * Starts a change on this replica: a local check, no round trip (a new leader not yet ready waits
     * for the read barrier).
     *
     * @throws io.hayloft.format.errors.ApiException NOT_LEADER (421, naming the leader) on a follower;
     *         NO_LEADER (503) when the group has no leader this replica can reach
     */
    Writer begin();

    /**
     * A linearizable read: returns once this replica leads and has applied every change committed
     * before the call (a Raft group asks for it with a read through Ratis: the leader lease when it
     * holds, else a read index round). Throws as {@link #begin()}.
     */
    void readBarrier();

    /** As {@link #begin()}, for a raid-node's commit: each change is applied only while its raid lease holds. */
    Writer begin(LogEntry.Fence fence);

    /**
     * A cheap check before a change (no round trip): throws NOT_LEADER or NO_LEADER as {@link #begin()}
     * would on a follower. The change itself still begins with {@link #begin()}.
     */
    default void checkLeader() {
        begin();
    }

    /** Whether this log is a Raft group's (false: a single directory, which applies each change at once). */
    default boolean replicated() {
        return true;
    }

    /** Whether this replica leads now and may run the leader's background work (health checks, backups). */
    boolean leads();

    /**
     * Runs {@code task} each time this replica becomes a ready leader (its first entry of the term
     * committed), on a thread of the log's own, never on Raft's: the leader's warm-up, such as reserving
     * its term's first key range before the first lease asks for it. A single directory never changes
     * leader: nothing is run.
     */
    default void onLeaderReady(Runnable task) {
    }

    /** The group as this replica sees it (a single directory: itself, the leader). */
    Group group();

    /** Index of the last change applied here (a single directory: changes applied since it started). */
    long appliedIndex();

    /**
     * Asks the group to take a snapshot now (a Raft group; a single directory has none) and returns its
     * log index.
     */
    long snapshot();

    @Override
    void close();

    /**
     * Submits one change of a begun write without waiting. Completes once this replica applied it,
     * with its value (a new delete-log head for appendDeletes, else 0), or exceptionally with an
     * {@link io.hayloft.format.errors.ApiException}: NOT_LEADER, NO_LEADER (retry: a lost term, a
     * timeout), LEASE_LOST (a fenced change whose raid lease no longer holds).
     */
    default CompletableFuture<Long> submit(long term, LogEntry.Fence fence, Change change) {
        return submit(new LogEntry(term, fence, change));
    }

    /**
     * Submits one entry without waiting, as {@link #submit(long, LogEntry.Fence, Change)}; an entry
     * whose request id is recorded already changes nothing and fails with REQUEST_REPEATED.
     */
    CompletableFuture<Long> submit(LogEntry entry);

    /** As {@link #submit}, waiting for it: the change's value, or the {@code ApiException} thrown. */
    default long commit(long term, LogEntry.Fence fence, Change change) {
        return await(submit(term, fence, change));
    }

    /** Waits for a submitted change; throws what it failed with (an {@code ApiException} as it is). */
    static <T> T await(CompletableFuture<T> f) {
        try {
            return f.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw DirectoryErrors.NO_LEADER.exception("interrupted while the change was committed");
        } catch (ExecutionException e) {
            Throwable t = e.getCause();
            while (t instanceof CompletionException && t.getCause() != null) {
                t = t.getCause();
            }
            if (t instanceof RuntimeException r) {
                throw r;
            }
            if (t instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(t);
        }
    }

    /** A group of directory replicas: its leader's id (or null) and every configured replica. */
    record Group(String self, String leader, long term, List<Replica> replicas) {
    }

    /**
     * One replica: {@code role} is LEADER, FOLLOWER, CANDIDATE, or UNREACHABLE (this replica could not
     * ask it); {@code appliedIndex} is null when unknown.
     */
    record Replica(String id, String http, String raft, String role, Long appliedIndex, Long commitIndex) {
    }

    /** The changes of one write, all computed in one term (and under one raid lease, when fenced). */
    final class Writer {
        private final ChangeLog log;
        private final long term;
        private final LogEntry.Fence fence;

        public Writer(ChangeLog log, long term, LogEntry.Fence fence) {
            this.log = log;
            this.term = term;
            this.fence = fence;
        }

        /** The Raft term this write was begun in (0 in a single directory). */
        public long term() {
            return term;
        }

        public void putStore(StoreInfo s) {
            log.commit(term, fence, new Change.PutStore(s));
        }

        public void putVolume(VolumeInfo v) {
            log.commit(term, fence, new Change.PutVolume(v));
        }

        public void putVolumeAndStripes(VolumeInfo v, StripeMap map) {
            log.commit(term, fence, new Change.PutVolumeAndStripes(v, map));
        }

        public void putStripeMap(StripeMap map) {
            log.commit(term, fence, new Change.PutStripeMap(map));
        }

        public void putReclaim(ReclaimPlan p) {
            log.commit(term, fence, new Change.PutReclaim(p));
        }

        public void deleteReclaim(int volumeId) {
            log.commit(term, fence, new Change.DeleteReclaim(volumeId));
        }

        public void swapStripes(VolumeInfo v, StripeMap map) {
            log.commit(term, fence, new Change.SwapStripes(v, map));
        }

        /** @return the new head of the volume's delete log */
        public long appendDeletes(int volumeId, List<DeleteRecord> entries, VolumeInfo volume) {
            return log.commit(term, fence, new Change.AppendDeletes(volumeId, entries, volume));
        }

        public void raiseCounters(long keyHwm, long volumeSeq) {
            log.commit(term, fence, new Change.RaiseCounters(keyHwm, volumeSeq));
        }

        public void putSetting(String name, byte[] value) {
            log.commit(term, fence, new Change.PutSetting(name, value));
        }

        public void deleteSetting(String name) {
            log.commit(term, fence, new Change.DeleteSetting(name));
        }

        /** Several changes in one entry, applied in order (nothing when {@code changes} is empty). */
        public void batch(List<Change> changes) {
            await(submitBatch(changes));
        }

        /** As {@link #batch}, without waiting: completes once applied here (at once when {@code changes} is empty). */
        public CompletableFuture<Long> submitBatch(List<Change> changes) {
            if (changes.isEmpty()) {
                return CompletableFuture.completedFuture(0L);
            }
            return submit(changes.size() == 1 ? changes.get(0) : new Change.Batch(changes));
        }

        /**
         * The answering commit of a request: {@code changes} in one entry, as {@link #batch}, carrying the
         * request id of this thread's {@link RequestScope} (if any) and {@code answer}, the answer the
         * directory gives the request (the route's JSON body); returns {@code answer}. When the id was
         * applied already (a retry racing its first attempt), nothing is changed and this throws
         * REQUEST_REPEATED, which the HTTP layer turns into the recorded answer.
         */
        public <T> T commit(List<Change> changes, T answer) {
            if (changes.isEmpty()) {
                return answer;
            }
            Change c = changes.size() == 1 ? changes.get(0) : new Change.Batch(changes);
            try {
                await(log.submit(new LogEntry(term, fence, c, RequestScope.request(answer))));
            } catch (io.hayloft.format.errors.ApiException e) {
                if (e.error().equals(DirectoryErrors.REQUEST_REPEATED)) {
                    RequestScope.markRepeated();
                }
                throw e;
            }
            return answer;
        }

        /** Submits one change of this write without waiting ({@link ChangeLog#submit}). */
        public CompletableFuture<Long> submit(Change change) {
            return log.submit(term, fence, change);
        }
    }
}
