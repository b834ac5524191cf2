package io.hayloft.cli.chaos;

import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import io.hayloft.serverkit.io.FileTrees;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * The checker's directory as a Raft group ({@code --directories N}): N in-process
 * {@link DirectoryServer} replicas on loopback, each over its own data directory
 * ({@code DIR/directory-n<i>}) and a small {@code snapshotEvery}, so a wiped replica catches up by
 * installing the leader's snapshot. Faults: a replica closed and started again with the same
 * configuration ({@link #restart}; the leader's, {@link #killLeader}), or closed, its data deleted and
 * started again ({@link #wipe}). In one process there are no sockets to cut: partitions are covered
 * by the process tests on simulated hosts, and by the benchmarks' group of replica processes
 * ({@code hayloft bench chaos --directory-processes}).
 *
 * <p>Thread-safe: the life-cycle methods are synchronized.
 */
final class DirectoryGroup implements ReplicaGroup {
    /** Raft entries between snapshots: small, so a wiped replica always installs one. */
    static final long SNAPSHOT_EVERY = 200;

    private final List<DirectoryConfig> configs = new ArrayList<>();
    private final DirectoryServer[] servers;
    private boolean closed;

    private DirectoryGroup(int n) {
        this.servers = new DirectoryServer[n];
    }

    /** Starts {@code n} replicas forming one group, each from a fresh copy of {@code base} (the cluster's directory settings). */
    static DirectoryGroup start(int n, Supplier<DirectoryConfig> base, Path dir) throws IOException, InterruptedException {
        DirectoryGroup g = new DirectoryGroup(n);
        List<DirectoryConfig.Peer> peers = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            peers.add(new DirectoryConfig.Peer("n" + (i + 1), "127.0.0.1:" + freePort(), "127.0.0.1:" + freePort()));
        }
        for (int i = 0; i < n; i++) {
            DirectoryConfig c = base.get();
            c.dataDir = dir.resolve("directory-n" + (i + 1)).toString();
            c.init = true;
            c.raft = new DirectoryConfig.Raft();
            c.raft.id = peers.get(i).id;
            c.raft.peers = peers;
            c.raft.snapshotEvery = SNAPSHOT_EVERY;
            c.raft.logSegmentBytes = 64 << 10; // small segments: the log below a snapshot is purged soon
            g.configs.add(c.validate());
        }
        // All at once: each replica's start waits for the group to form.
        List<CompletableFuture<DirectoryServer>> starting = new ArrayList<>();
        for (DirectoryConfig c : g.configs) {
            starting.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return DirectoryServer.start(c);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }));
        }
        try {
            for (int i = 0; i < n; i++) {
                g.servers[i] = starting.get(i).join();
            }
            g.awaitLeader(Duration.ofSeconds(60));
        } catch (RuntimeException e) {
            starting.forEach(f -> f.thenAccept(DirectoryServer::close));
            g.close();
            throw e;
        }
        return g;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** The replicas' HTTP addresses, {@code h1:p1,h2:p2,h3:p3}: what every caller is given. */
    @Override
    public String addresses() {
        List<String> a = new ArrayList<>();
        configs.forEach(c -> a.add(c.raft.self().http));
        return String.join(",", a);
    }

    @Override
    public int size() {
        return servers.length;
    }

    /** The index of the replica that leads now, or -1 (none known, or it is stopped). */
    @Override
    public synchronized int leader() {
        for (int i = 0; i < servers.length; i++) {
            if (servers[i] != null && servers[i].changeLog().leads()) {
                return i;
            }
        }
        return -1;
    }

    /** Waits until a running replica leads; returns its index. */
    @Override
    public int awaitLeader(Duration patience) throws InterruptedException {
        long deadline = System.nanoTime() + patience.toNanos();
        while (true) {
            int l = leader();
            if (l >= 0) {
                return l;
            }
            if (System.nanoTime() > deadline) {
                throw new NotWhole("no replica of the directory group leads after " + patience.toSeconds() + " s");
            }
            Thread.sleep(20); // poll the replicas' own view
        }
    }

    /** Stops replica {@code i} (its HTTP and Raft servers and its RocksDB closed); nothing when stopped. */
    @Override
    public synchronized void stop(int i) {
        if (servers[i] != null) {
            DirectoryServer s = servers[i];
            servers[i] = null;
            s.close();
        }
    }

    /** In one process there is no {@code kill -9}: a close ({@link #stop}). */
    @Override
    public void kill(int i) {
        stop(i);
    }

    /** Starts replica {@code i} again with its configuration (the same command); it rejoins the group. */
    @Override
    public synchronized void start(int i) throws InterruptedException {
        if (servers[i] == null && !closed) {
            servers[i] = DirectoryServer.start(configs.get(i));
        }
    }

    @Override
    public synchronized void restart(int i) throws InterruptedException {
        stop(i);
        start(i);
    }

    /** Stops the leader and starts it again; returns its index. */
    @Override
    public synchronized int killLeader() throws InterruptedException {
        int l = awaitLeader(Duration.ofSeconds(30));
        restart(l);
        return l;
    }

    /** Stops replica {@code i}, deletes its whole data directory and starts it with the same configuration. */
    @Override
    public synchronized void wipe(int i) throws InterruptedException, IOException {
        stop(i);
        FileTrees.delete(Path.of(configs.get(i).dataDir));
        start(i);
    }

    /** Snapshots installed by replica {@code i} (from a leader), or -1 when stopped. */
    @Override
    public synchronized long installedSnapshots(int i) {
        return servers[i] == null ? -1 : servers[i].changeLog() instanceof io.hayloft.directory.raft.RaftChangeLog r
                ? r.installedSnapshots() : 0;
    }

    /** Raft index applied by replica {@code i}, or -1 when stopped. */
    @Override
    public synchronized long appliedIndex(int i) {
        return servers[i] == null ? -1 : servers[i].changeLog().appliedIndex();
    }

    /** Stops every replica and starts them all again (a whole-cluster crash). */
    @Override
    public synchronized void restartAll() throws InterruptedException {
        for (int i = 0; i < servers.length; i++) {
            stop(i);
        }
        List<CompletableFuture<DirectoryServer>> starting = new ArrayList<>();
        for (DirectoryConfig c : configs) {
            starting.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return DirectoryServer.start(c);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }));
        }
        for (int i = 0; i < servers.length; i++) {
            servers[i] = starting.get(i).join();
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        for (int i = 0; i < servers.length; i++) {
            try {
                stop(i);
            } catch (RuntimeException e) {
                // closing the rest matters more
            }
        }
    }
}
