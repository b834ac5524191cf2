package io.hayloft.cli.chaos;

import io.hayloft.directory.DirectoryConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * The checker's directory as a Raft group ({@code --directories N}), as the {@link FaultInjector} strikes
 * it: replicas by index ({@code 0 .. size() - 1}), stopped, killed, started again with the same
 * configuration, wiped, and (where the replicas run on hosts that can be cut apart) cut off the network
 * and healed. {@link DirectoryGroup} (in-process replicas on loopback) is the default; another
 * implementation is given through {@link ChaosOptions#directoryGroups()} (e.g. the benchmarks' replicas
 * as separate processes on simulated hosts).
 *
 * <p>Implementations are thread-safe: the fault thread changes the group while the clients, the
 * background jobs and the stores use it through its {@link #addresses()}.
 */
public interface ReplicaGroup extends AutoCloseable {

    /** Starts a group; what {@link ChaosOptions#directoryGroups()} carries. */
    @FunctionalInterface
    interface Factory {
        /**
         * Starts {@code n} replicas forming one group, each configured with a fresh copy of {@code base}
         * (the schedule's directory settings: replication, volume limit, probe timing, secrets) plus its
         * {@code raft} section, data under {@code dir}; returns once a replica leads.
         */
        ReplicaGroup start(int n, Supplier<DirectoryConfig> base, Path dir) throws Exception;

        /** The {@code hayloft bench chaos} option that selects this kind of group, for replay commands ("" for the default). */
        default String flag() {
            return "";
        }
    }

    /** A directory group did not come back whole after a fault within its bound: no leader, or a replica that never caught up. */
    final class NotWhole extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        public NotWhole(String message) {
            super(message);
        }
    }

    /** The replicas' HTTP addresses, {@code h1:p1,h2:p2,h3:p3}: what every caller is given. */
    String addresses();

    int size();

    /**
     * The address this process has as the replicas see it: the in-process stores bind and register it,
     * so the replicas' health checker and volume creation reach them ({@code 127.0.0.1} on loopback).
     */
    default String storeHost() {
        return "127.0.0.1";
    }

    /** How long a replica may take to start (on top of an election) before a fault's bound for a leader begins. */
    default Duration startTime() {
        return Duration.ZERO;
    }

    /** Whether {@link #kill} is a {@code kill -9} of a process (else a close of an in-process replica). */
    default boolean killsProcesses() {
        return false;
    }

    /** The index of the replica that leads now, or -1 (none known, or it is stopped). */
    int leader();

    /**
     * Waits until one replica leads (for processes: one that every running replica names); returns its index.
     *
     * @throws NotWhole when none does within {@code patience}
     */
    int awaitLeader(Duration patience) throws InterruptedException;

    /** Stops replica {@code i} in an orderly way; nothing when stopped. */
    void stop(int i) throws InterruptedException;

    /** Kills replica {@code i} ({@code kill -9} for a process; in one process, a close); nothing when stopped. */
    void kill(int i) throws InterruptedException;

    /** Starts replica {@code i} again with its configuration (the same command); it rejoins the group. */
    void start(int i) throws InterruptedException, IOException;

    /** Stops replica {@code i} and starts it again. */
    void restart(int i) throws InterruptedException, IOException;

    /** Kills the leader and starts it again with the same configuration; returns its index. */
    int killLeader() throws InterruptedException, IOException;

    /** Kills replica {@code i}, deletes its whole data directory and starts it with the same configuration. */
    void wipe(int i) throws InterruptedException, IOException;

    /** Stops (kills) every replica and starts them all again: a whole-cluster crash. */
    void restartAll() throws InterruptedException, IOException;

    /** Raft index applied by replica {@code i}, or -1 when stopped or unreachable. */
    long appliedIndex(int i);

    /** Snapshots installed by replica {@code i} (from a leader) since it started, or -1 when not known. */
    long installedSnapshots(int i);

    /** Whether {@link #cut} and {@link #heal} work (replicas on hosts of their own). */
    default boolean canCut() {
        return false;
    }

    /** Cuts replica {@code i}'s host off the network: it reaches nobody and nobody (this process included) reaches it. */
    default void cut(int i) {
        throw new UnsupportedOperationException("the replicas of this directory group cannot be cut apart");
    }

    /** Undoes {@link #cut}. */
    default void heal(int i) {
        throw new UnsupportedOperationException("the replicas of this directory group cannot be cut apart");
    }

    @Override
    void close();
}
