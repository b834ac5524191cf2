package io.hayloft.directory;

import io.hayloft.directory.meta.Change;
import io.hayloft.directory.meta.LogEntry;
import io.hayloft.directory.meta.MetaStore.DeleteRecord;
import io.hayloft.format.directory.ReclaimPlan;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.wire.StripeMap;
import java.util.List;

/**
 * Where the directory's changes go: every write to its state is a {@link Change}, committed through
 * this log and applied to the {@link io.hayloft.directory.meta.MetaStore}. A single directory
 * ({@link LocalChangeLog}) applies each change at once; a replica of a Raft group
 * ({@link io.hayloft.directory.raft.RaftChangeLog}) appends it to the group's log, where every replica
 * applies it, and returns once this replica has.
 *
 * <p>A read-modify-write starts with {@link #begin()}: it checks that this replica may change the
 * state (it leads, and has applied everything committed before), and fixes the term its changes are
 * computed in, so a change computed by a leader that lost its leadership meanwhile is dropped rather
 * than applied over a newer state ({@link LogEntry}). The state read after {@code begin()} is
 * linearizable: a caller that only reads (a lease, a stripe map before a commit) calls it too.
 *
 * <p>Implementations are thread-safe.
 */
public interface ChangeLog extends AutoCloseable {

    /**
     * Starts a change (or a linearizable read) on this replica.
     *
     * @throws io.hayloft.format.errors.ApiException NOT_LEADER (421, naming the leader) on a follower;
     *         NO_LEADER (503) when the group has no leader this replica can reach
     */
    Writer begin();

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

    /** Commits one change of a begun write; returns its result (a new delete-log head for appendDeletes). */
    long commit(long term, LogEntry.Fence fence, Change change);

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
            if (changes.size() == 1) {
                log.commit(term, fence, changes.get(0));
            } else if (!changes.isEmpty()) {
                log.commit(term, fence, new Change.Batch(changes));
            }
        }
    }
}
