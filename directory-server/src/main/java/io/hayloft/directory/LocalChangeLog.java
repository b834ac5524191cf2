package io.hayloft.directory;

import io.hayloft.directory.meta.Change;
import io.hayloft.directory.meta.LogEntry;
import io.hayloft.directory.meta.MetaStore;
import io.hayloft.format.errors.DirectoryErrors;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The change log of a single directory (no {@code raft} section), with group commit: submitted
 * changes queue; one committer thread takes every change that queued while it synced the previous
 * group, applies each as one RocksDB batch ({@link MetaStore#applyEntry}, through the same
 * {@link LogEntry#apply} a Raft replica uses, so both apply the same rules: a fenced raid commit is
 * checked against the stored raid lease), syncs the write-ahead log once for the whole group
 * ({@link MetaStore#syncLog}), and only then completes their futures. Under load one fsync carries
 * as many changes as arrived during the previous one; alone, a change costs one apply and one fsync
 * as before.
 *
 * <p>Futures complete on a small pool of their own, never on the committer thread, so what a caller
 * chains onto one cannot stall the next group.
 *
 * <p>Thread-safe.
 */
public final class LocalChangeLog implements ChangeLog {
    private static final Logger LOG = LoggerFactory.getLogger(LocalChangeLog.class);
    /** Most changes one group takes (the rest wait for the next group). */
    static final int MAX_GROUP = 1024;

    private record Pending(LogEntry entry, CompletableFuture<Long> done) {
    }

    private final MetaStore meta;
    private final Supplier<String> self;
    private final AtomicLong applied = new AtomicLong();
    private final AtomicLong groups = new AtomicLong();
    private final LinkedBlockingQueue<Pending> queue = new LinkedBlockingQueue<>();
    private final Thread committer;
    private final ExecutorService completions;
    private volatile boolean closed;

    /** @param selfHttp this directory's HTTP address, for {@link #group()} */
    public LocalChangeLog(MetaStore meta, Supplier<String> selfHttp) {
        this.meta = meta;
        this.self = selfHttp;
        AtomicLong n = new AtomicLong();
        this.completions = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "hayloft-commit-done-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.committer = new Thread(this::run, "hayloft-committer");
        committer.setDaemon(true);
        committer.start();
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
    public void readBarrier() {
    }

    @Override
    public CompletableFuture<Long> submit(LogEntry entry) {
        CompletableFuture<Long> done = new CompletableFuture<>();
        if (closed) {
            done.completeExceptionally(DirectoryErrors.NO_LEADER.exception("the directory is shutting down; nothing was changed"));
            return done;
        }
        queue.add(new Pending(entry, done));
        if (closed) {
            failQueued(); // closed meanwhile: the committer may be gone
        }
        return done;
    }

    private void run() {
        List<Pending> group = new ArrayList<>();
        List<Object> outcomes = new ArrayList<>();
        while (!closed) {
            try {
                Pending first = queue.poll(100, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                group.add(first);
                queue.drainTo(group, MAX_GROUP - 1);
                for (Pending p : group) {
                    outcomes.add(apply(p.entry()));
                }
                RuntimeException synced = null;
                try {
                    meta.syncLog();
                } catch (RuntimeException e) {
                    LOG.error("the directory's write-ahead log could not be synced; {} changes are not acknowledged", group.size(), e);
                    synced = e;
                }
                groups.incrementAndGet();
                for (int i = 0; i < group.size(); i++) {
                    complete(group.get(i).done(), synced != null ? synced : outcomes.get(i));
                }
            } catch (InterruptedException e) {
                break;
            } finally {
                group.clear();
                outcomes.clear();
            }
        }
        failQueued();
    }

    /** Applies one entry: its value, or the exception that it must answer with. */
    private Object apply(LogEntry entry) {
        try {
            LogEntry.Applied a = meta.applyEntry(0, 0, () -> entry.apply(meta, 0));
            if (a.outcome() == LogEntry.Outcome.REPEATED) {
                return repeated(entry);
            }
            if (a.outcome() == LogEntry.Outcome.LEASE_LOST) {
                return DirectoryErrors.LEASE_LOST.exception("raid lease epoch " + entry.fence().epoch()
                        + " is no longer the cluster's raid lease (another raid-node took it, or it ran out); nothing was changed");
            }
            applied.incrementAndGet();
            return a.value();
        } catch (RuntimeException e) {
            LOG.error("a change could not be applied: {}", entry.change(), e);
            return e;
        }
    }

    static RuntimeException repeated(LogEntry entry) {
        return DirectoryErrors.REQUEST_REPEATED.exception("request " + entry.request().id() + " was applied already; nothing was changed again");
    }

    private void complete(CompletableFuture<Long> done, Object outcome) {
        try {
            completions.execute(() -> {
                if (outcome instanceof Throwable t) {
                    done.completeExceptionally(t);
                } else {
                    done.complete((Long) outcome);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            done.completeExceptionally(DirectoryErrors.NO_LEADER.exception("the directory is shutting down"));
        }
    }

    private void failQueued() {
        Pending p;
        while ((p = queue.poll()) != null) {
            p.done().completeExceptionally(DirectoryErrors.NO_LEADER.exception("the directory is shutting down; nothing was changed"));
        }
    }

    /** Groups committed since this log started (each one fsync). */
    public long groups() {
        return groups.get();
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

    /** Stops taking changes; the group being committed is finished (its changes answered) first. */
    @Override
    public void close() {
        closed = true;
        try {
            committer.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        failQueued();
        completions.shutdown();
    }
}
