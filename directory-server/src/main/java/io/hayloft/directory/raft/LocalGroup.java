package io.hayloft.directory.raft;

import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import io.hayloft.directory.StoreAdmin;
import io.hayloft.serverkit.config.Ports;
import io.hayloft.serverkit.io.FileTrees;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.IntFunction;
import java.util.function.IntUnaryOperator;
import java.util.function.Supplier;

/**
 * A directory group whose replicas all run in this process, on loopback: N {@link DirectoryServer}s,
 * each a real Raft replica over its own RocksDB. For tests, embedded clusters and tools that run every
 * replica in one process; a real group runs one replica per host ({@code hayloft directory} with a
 * {@code raft} section).
 *
 * <p>Replica {@code i} is {@code n<i+1>} ({@link #replicaId}), its data in {@code ROOT/n<i+1>} (or
 * the names given to {@link Builder#dirNames}), its HTTP and Raft ports free ones chosen when the group
 * is built (or the ones given to {@link Builder#ports}); they never change, so a replica started again
 * rejoins the group at the address the group knows. Its configuration is a fresh copy from the base
 * supplier at each start, with {@code dataDir}, {@code host}, {@code port}, {@code init} and the
 * {@code raft} section's {@code id} and {@code peers} set by the group; the other {@code raft} settings
 * (election timeout, snapshots, log segments) are the base's {@code raft} section's when it has one,
 * else the defaults.
 *
 * <pre>{@code
 * try (LocalGroup g = LocalGroup.builder(3, () -> config, dir).start()) {
 *     DirectoryServer leader = g.server(g.awaitLeader(Duration.ofSeconds(30)));
 *     g.stop(1);
 *     g.wipe(1); // deleted, started empty: it catches up from the leader
 * }
 * }</pre>
 *
 * <p>Thread-safe: the life-cycle methods are synchronized (a start holds the lock until the replica
 * runs); {@link #awaitLeader} polls without it.
 */
public final class LocalGroup implements AutoCloseable {
    private final Supplier<DirectoryConfig> base;
    private final List<Path> dataDirs;
    private final List<DirectoryConfig.Peer> peers;
    private final StoreAdmin stores;
    private final DirectoryServer[] servers;
    private boolean closed;

    private LocalGroup(Builder b) throws IOException {
        int n = b.size;
        this.base = b.base;
        this.stores = b.stores;
        this.servers = new DirectoryServer[n];
        List<Path> dirs = new ArrayList<>();
        List<DirectoryConfig.Peer> p = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            dirs.add(b.dataRoot.resolve(b.dirNames.apply(i)));
            int http = b.httpPorts == null ? Ports.free() : b.httpPorts.applyAsInt(i);
            int raft = b.raftPorts == null ? Ports.free() : b.raftPorts.applyAsInt(i);
            p.add(new DirectoryConfig.Peer(replicaId(i), "127.0.0.1:" + raft, "127.0.0.1:" + http));
        }
        this.dataDirs = List.copyOf(dirs);
        this.peers = List.copyOf(p);
    }

    /** A group of {@code size} replicas, each configured from a fresh {@code base.get()}, their data below {@code dataRoot}. */
    public static Builder builder(int size, Supplier<DirectoryConfig> base, Path dataRoot) {
        return new Builder(size, base, dataRoot);
    }

    /** The id of replica {@code i}: {@code n<i+1>}. */
    public static String replicaId(int i) {
        return "n" + (i + 1);
    }

    /** How a group is laid out; {@link #build()} or {@link #start()} it. Not thread-safe. */
    public static final class Builder {
        private final int size;
        private final Supplier<DirectoryConfig> base;
        private final Path dataRoot;
        private IntFunction<String> dirNames = LocalGroup::replicaId;
        private IntUnaryOperator httpPorts;
        private IntUnaryOperator raftPorts;
        private StoreAdmin stores;

        private Builder(int size, Supplier<DirectoryConfig> base, Path dataRoot) {
            if (size < 1) {
                throw new IllegalArgumentException("a group needs at least one replica, was " + size);
            }
            this.size = size;
            this.base = Objects.requireNonNull(base, "base");
            this.dataRoot = Objects.requireNonNull(dataRoot, "dataRoot");
        }

        /** Replica {@code i}'s data directory is {@code dataRoot/names.apply(i)} (default {@code n<i+1>}). */
        public Builder dirNames(IntFunction<String> names) {
            this.dirNames = Objects.requireNonNull(names, "names");
            return this;
        }

        /** Replica {@code i}'s HTTP and Raft ports (default: free ones, chosen when the group is built). */
        public Builder ports(IntUnaryOperator http, IntUnaryOperator raft) {
            this.httpPorts = Objects.requireNonNull(http, "http");
            this.raftPorts = Objects.requireNonNull(raft, "raft");
            return this;
        }

        /** The replicas' calls to stores (tests fake them); default: HTTP, as a directory's own. */
        public Builder storeAdmin(StoreAdmin admin) {
            this.stores = admin;
            return this;
        }

        /** The group with no replica running yet. */
        public LocalGroup build() throws IOException {
            return new LocalGroup(this);
        }

        /** The group with every replica started and one of them leading (within 60 s); on failure nothing is left running. */
        public LocalGroup start() throws IOException, InterruptedException {
            LocalGroup g = build();
            try {
                g.startAll();
                g.awaitLeader(Duration.ofSeconds(60));
            } catch (RuntimeException | InterruptedException e) {
                g.close();
                throw e;
            }
            return g;
        }
    }

    public int size() {
        return servers.length;
    }

    /** Every replica's entry in the {@code raft.peers} of each: id, Raft and HTTP address. */
    public List<DirectoryConfig.Peer> peers() {
        return peers;
    }

    /** Replica {@code i}'s id ({@code n<i+1>}). */
    public String id(int i) {
        return peers.get(i).id;
    }

    /** {@code 127.0.0.1:PORT} of replica {@code i}'s HTTP API (also while it is stopped). */
    public String address(int i) {
        return peers.get(i).http;
    }

    /** Every replica's HTTP address, in order: what the group's clients are given. */
    public List<String> addresses() {
        return peers.stream().map(p -> p.http).toList();
    }

    /** Replica {@code i}'s data directory. */
    public Path dataDir(int i) {
        return dataDirs.get(i);
    }

    /** Replica {@code i}, or null while it is stopped. */
    public synchronized DirectoryServer server(int i) {
        return servers[check(i)];
    }

    /** The index of a running replica that leads now, or -1. */
    public synchronized int leader() {
        for (int i = 0; i < servers.length; i++) {
            if (servers[i] != null && servers[i].changeLog().leads()) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Waits until a running replica leads; returns its index.
     *
     * @throws IllegalStateException when none leads within {@code patience}
     */
    public int awaitLeader(Duration patience) throws InterruptedException {
        long deadline = System.nanoTime() + patience.toNanos();
        while (true) {
            int l = leader();
            if (l >= 0) {
                return l;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no replica of the directory group " + String.join(",", addresses()) + " leads after "
                        + patience.toSeconds() + " s");
            }
            Thread.sleep(20); // the replicas' own view, polled: there is nothing to be told by
        }
    }

    /** Raft index applied by replica {@code i}, or -1 while it is stopped. */
    public synchronized long appliedIndex(int i) {
        DirectoryServer s = servers[check(i)];
        return s == null ? -1 : s.changeLog().appliedIndex();
    }

    /** Snapshots replica {@code i} installed from a leader since it started, or -1 while it is stopped. */
    public synchronized long installedSnapshots(int i) {
        DirectoryServer s = servers[check(i)];
        return s == null ? -1 : ((RaftChangeLog) s.changeLog()).installedSnapshots();
    }

    /** The configuration replica {@code i} starts with: a fresh copy of the base with its place in the group. */
    public DirectoryConfig config(int i) {
        DirectoryConfig c = base.get();
        c.dataDir = dataDirs.get(check(i)).toString();
        c.init = true;
        DirectoryConfig.Peer self = peers.get(i);
        c.host = self.http.substring(0, self.http.lastIndexOf(':'));
        c.port = Integer.parseInt(self.http.substring(self.http.lastIndexOf(':') + 1));
        if (c.raft == null) {
            c.raft = new DirectoryConfig.Raft();
        }
        c.raft.id = self.id;
        c.raft.peers = new ArrayList<>(peers);
        return c;
    }

    /**
     * Starts every stopped replica, all at once (a replica's start waits until the group has formed,
     * so one at a time would never end), and waits for them. When some fail, the others keep running
     * and the first failure is thrown with the rest suppressed. Nothing once closed.
     */
    public synchronized void startAll() {
        if (closed) {
            return;
        }
        List<Integer> starting = new ArrayList<>();
        List<CompletableFuture<DirectoryServer>> started = new ArrayList<>();
        for (int i = 0; i < servers.length; i++) {
            if (servers[i] == null) {
                DirectoryConfig c = config(i);
                CompletableFuture<DirectoryServer> f = new CompletableFuture<>();
                // A thread each, not a pool: every start blocks until a majority runs.
                Thread t = new Thread(() -> {
                    try {
                        f.complete(DirectoryServer.start(c, stores));
                    } catch (InterruptedException e) {
                        f.completeExceptionally(new IllegalStateException("interrupted while starting directory replica " + c.raft.id, e));
                    } catch (Throwable e) {
                        f.completeExceptionally(e);
                    }
                }, "hayloft-group-start-" + c.raft.id);
                t.setDaemon(true);
                t.start();
                starting.add(i);
                started.add(f);
            }
        }
        RuntimeException failed = null;
        for (int j = 0; j < started.size(); j++) {
            try {
                servers[starting.get(j)] = started.get(j).join();
            } catch (CompletionException e) {
                Throwable t = e.getCause();
                failed = joined(failed, t instanceof RuntimeException re ? re
                        : new IllegalStateException("directory replica " + replicaId(starting.get(j)) + " did not start: " + t, t));
            }
        }
        if (failed != null) {
            throw failed;
        }
    }

    /** Starts replica {@code i} (its data kept: it catches up from the leader); nothing when it runs or the group is closed. */
    public synchronized void start(int i) throws InterruptedException {
        if (servers[check(i)] == null && !closed) {
            servers[i] = DirectoryServer.start(config(i), stores);
        }
    }

    /** Stops replica {@code i} (a clean close of its HTTP and Raft servers and its RocksDB); nothing when stopped. */
    public synchronized void stop(int i) {
        DirectoryServer s = servers[check(i)];
        if (s != null) {
            servers[i] = null;
            s.close();
        }
    }

    /** Stops every replica; {@link #startAll()} starts them again. */
    public synchronized void stopAll() {
        RuntimeException failed = null;
        for (int i = 0; i < servers.length; i++) {
            try {
                stop(i);
            } catch (RuntimeException e) {
                failed = joined(failed, e); // closing the rest matters more
            }
        }
        if (failed != null) {
            throw failed;
        }
    }

    public synchronized void restart(int i) throws InterruptedException {
        stop(i);
        start(i);
    }

    /** Stops replica {@code i}, deletes its whole data directory and starts it empty: it catches up from the leader. */
    public synchronized void wipe(int i) throws IOException, InterruptedException {
        stop(i);
        FileTrees.delete(dataDirs.get(i));
        start(i);
    }

    /** Stops every replica; no start afterwards starts one. Idempotent. */
    @Override
    public synchronized void close() {
        closed = true;
        stopAll();
    }

    private int check(int i) {
        if (i < 0 || i >= servers.length) {
            throw new IllegalArgumentException("directory replica index must be in 0.." + (servers.length - 1) + ", was " + i);
        }
        return i;
    }

    /** {@code next} added to the failures so far: the first one, the others suppressed in it. */
    private static RuntimeException joined(RuntimeException first, RuntimeException next) {
        if (first == null) {
            return next;
        }
        first.addSuppressed(next);
        return first;
    }
}
