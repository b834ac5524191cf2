package io.hayloft.cli.chaos;

import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.raft.LocalGroup;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * The checker's directory as a Raft group ({@code --directories N}): N in-process replicas on loopback
 * ({@link LocalGroup}), each over its own data directory ({@code DIR/directory-n<i>}) and a small
 * {@code snapshotEvery}, so a wiped replica catches up by installing the leader's snapshot. Faults: a
 * replica closed and started again with the same configuration ({@link #restart}; the leader's,
 * {@link #killLeader}), or closed, its data deleted and started again ({@link #wipe}). In one process
 * there are no sockets to cut: partitions are covered by the process tests on simulated hosts, and by
 * the benchmarks' group of replica processes ({@code hayloft bench chaos --directory-processes}).
 *
 * <p>Thread-safe: {@link LocalGroup} is, and the compound faults are synchronized.
 */
final class DirectoryGroup implements ReplicaGroup {
    /** Raft entries between snapshots: small, so a wiped replica always installs one. */
    static final long SNAPSHOT_EVERY = 200;

    private final LocalGroup group;

    private DirectoryGroup(LocalGroup group) {
        this.group = group;
    }

    /** Starts {@code n} replicas forming one group, each from a fresh copy of {@code base} (the cluster's directory settings). */
    static DirectoryGroup start(int n, Supplier<DirectoryConfig> base, Path dir) throws IOException, InterruptedException {
        Supplier<DirectoryConfig> withRaft = () -> {
            DirectoryConfig c = base.get();
            c.raft = new DirectoryConfig.Raft();
            c.raft.snapshotEvery = SNAPSHOT_EVERY;
            c.raft.logSegmentBytes = 64 << 10; // small segments: the log below a snapshot is purged soon
            return c;
        };
        try {
            return new DirectoryGroup(LocalGroup.builder(n, withRaft, dir).dirNames(i -> "directory-n" + (i + 1)).start());
        } catch (IllegalStateException e) {
            throw new NotWhole(e.getMessage());
        }
    }

    /** The replicas' HTTP addresses, {@code h1:p1,h2:p2,h3:p3}: what every caller is given. */
    @Override
    public String addresses() {
        return String.join(",", group.addresses());
    }

    @Override
    public int size() {
        return group.size();
    }

    @Override
    public int leader() {
        return group.leader();
    }

    @Override
    public int awaitLeader(Duration patience) throws InterruptedException {
        try {
            return group.awaitLeader(patience);
        } catch (IllegalStateException e) {
            throw new NotWhole(e.getMessage());
        }
    }

    /** Stops replica {@code i} (its HTTP and Raft servers and its RocksDB closed); nothing when stopped. */
    @Override
    public void stop(int i) {
        group.stop(i);
    }

    /** In one process there is no {@code kill -9}: a close ({@link #stop}). */
    @Override
    public void kill(int i) {
        group.stop(i);
    }

    /** Starts replica {@code i} again with its configuration (the same command); it rejoins the group. */
    @Override
    public void start(int i) throws InterruptedException {
        group.start(i);
    }

    @Override
    public void restart(int i) throws InterruptedException {
        group.restart(i);
    }

    /** Stops the leader and starts it again; returns its index. */
    @Override
    public synchronized int killLeader() throws InterruptedException {
        int l = awaitLeader(Duration.ofSeconds(30));
        group.restart(l);
        return l;
    }

    /** Stops replica {@code i}, deletes its whole data directory and starts it with the same configuration. */
    @Override
    public void wipe(int i) throws InterruptedException, IOException {
        group.wipe(i);
    }

    @Override
    public long installedSnapshots(int i) {
        return group.installedSnapshots(i);
    }

    @Override
    public long appliedIndex(int i) {
        return group.appliedIndex(i);
    }

    /** Stops every replica and starts them all again (a whole-cluster crash). */
    @Override
    public synchronized void restartAll() {
        group.stopAll();
        group.startAll();
    }

    @Override
    public void close() {
        group.close();
    }
}
