package io.hayloft.directory;

import io.hayloft.directory.meta.Change;
import io.hayloft.directory.meta.LogEntry;
import io.hayloft.directory.meta.MetaStore;
import io.hayloft.format.errors.DirectoryErrors;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The change log of a single directory (no {@code raft} section): each change is applied to the
 * {@link MetaStore} at once, synced, through the same {@link LogEntry#apply} a Raft replica uses, so
 * both apply the same rules (a fenced raid commit is checked against the stored raid lease).
 *
 * <p>Thread-safe: applies are serialised on this object.
 */
public final class LocalChangeLog implements ChangeLog {
    private final MetaStore meta;
    private final Supplier<String> self;
    private final AtomicLong applied = new AtomicLong();

    /** @param selfHttp this directory's HTTP address, for {@link #group()} */
    public LocalChangeLog(MetaStore meta, Supplier<String> selfHttp) {
        this.meta = meta;
        this.self = selfHttp;
    }

    @Override
    public Writer begin() {
        return new Writer(this, 0, null);
    }

    @Override
    public Writer begin(LogEntry.Fence fence) {
        return new Writer(this, 0, fence);
    }

    @Override
    public synchronized long commit(long term, LogEntry.Fence fence, Change change) {
        long[] result = new long[1];
        LogEntry.Outcome o = new LogEntry(0, fence, change).apply(meta, 0, result);
        if (o == LogEntry.Outcome.LEASE_LOST) {
            throw DirectoryErrors.LEASE_LOST.exception("raid lease epoch " + fence.epoch()
                    + " is no longer the cluster's raid lease (another raid-node took it, or it ran out); nothing was changed");
        }
        applied.incrementAndGet();
        return result[0];
    }

    @Override
    public boolean replicated() {
        return false;
    }

    @Override
    public void checkLeader() {
    }

    @Override
    public boolean leads() {
        return true;
    }

    @Override
    public Group group() {
        return new Group("single", "single", 0, List.of(new Replica("single", self.get(), null, "LEADER", applied.get(), applied.get())));
    }

    @Override
    public long appliedIndex() {
        return applied.get();
    }

    @Override
    public long snapshot() {
        throw DirectoryErrors.WRONG_STATE.exception("a single directory keeps no Raft snapshots; take a backup instead "
                + "(hayloft directory backup --to DIR)");
    }

    @Override
    public void close() {
    }
}
