package io.hayloft.bench.chaos;

import io.hayloft.bench.failover.GroupProcesses;
import io.hayloft.cli.chaos.ReplicaGroup;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.testkit.SimulatedHosts;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/**
 * The life-cycle checker's directory group as real processes on simulated hosts
 * ({@code hayloft bench chaos --directories 3 --directory-processes}): three replicas started as an
 * operator starts them ({@code hayloft directory --init --config F}) by {@link GroupProcesses}, each on a
 * {@link SimulatedHosts} host of its own (a network namespace on a rack of its own), configured with the
 * schedule's directory settings (those the in-process group gets) plus {@code snapshotEvery: 200} and
 * 64 KiB log segments, so a wiped replica installs a snapshot. The checker's stores, raid-node and
 * clients stay in this process, in the root namespace: the stores listen on this process's end of the
 * link to the hosts ({@link #storeHost()}), which the replicas reach, and this process reaches every
 * replica's HTTP address.
 *
 * <p>Faults are real: {@link #kill} is a SIGKILL, {@link #stop} a SIGTERM, a start runs the replica's
 * same command again (a JVM start: {@link #startTime()}), {@link #wipe} deletes its data directory
 * between a kill and a start, and {@link #cut} takes its host's link down (nobody reaches it, it reaches
 * nobody) until {@link #heal}.
 *
 * <p>Thread-safe: {@link GroupProcesses} starts and kills under its lock; the rest asks the replicas over HTTP.
 */
public final class ProcessReplicaGroup implements ReplicaGroup {
    /** Raft entries between snapshots, as the in-process group: small, so a wiped replica installs one. */
    static final long SNAPSHOT_EVERY = 200;
    /** A JVM started on a busy 2-core machine may take this long to serve. */
    private static final Duration START_TIME = Duration.ofSeconds(60);
    /** The replicas' JVM options (see {@link #launcher()}). */
    private static final List<String> JVM = List.of("-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k");

    private final GroupProcesses g;
    private final List<GroupProcesses.Node> replicas;

    private ProcessReplicaGroup(GroupProcesses g) {
        this.g = g;
        this.replicas = g.replicas();
    }

    /**
     * The factory {@code --directory-processes} gives the checker: replicas started with {@code launcher}
     * (e.g. {@link GroupProcesses#classPathLauncher}).
     */
    public static ReplicaGroup.Factory factory(List<String> launcher) {
        return new ReplicaGroup.Factory() {
            @Override
            public ReplicaGroup start(int n, Supplier<DirectoryConfig> base, Path dir) throws Exception {
                return ProcessReplicaGroup.start(n, base, dir, launcher);
            }

            @Override
            public String flag() {
                return "--directory-processes";
            }
        };
    }

    /** Starts three replica processes on simulated hosts under {@code dir/directory-processes}; returns once one leads. */
    public static ProcessReplicaGroup start(int n, Supplier<DirectoryConfig> base, Path dir, List<String> launcher) throws Exception {
        if (n != 3) {
            throw new IllegalArgumentException("replica processes come in groups of 3, not " + n);
        }
        GroupProcesses.Options o = new GroupProcesses.Options();
        o.dir = dir.resolve("directory-processes");
        o.simulated = true;
        o.launcher = launcher;
        o.stores = 0;
        o.directoryBase = base;
        o.snapshotEvery = SNAPSHOT_EVERY;
        o.logSegmentBytes = 64 << 10; // small segments: the log below a snapshot is purged soon
        DirectoryConfig.Raft defaults = new DirectoryConfig.Raft(); // the raft timing the in-process group gets
        o.electionTimeoutMillis = defaults.electionTimeoutMillis;
        o.commitTimeoutMillis = defaults.commitTimeoutMillis;
        return new ProcessReplicaGroup(GroupProcesses.start(o));
    }

    /**
     * {@code java -cp} this JVM's class path, as {@link GroupProcesses#classPathLauncher}, with 512 MiB heaps: with
     * 256 MiB (the failover tools' size) the replicas' serial collections paused them for seconds on a busy machine.
     */
    public static List<String> launcher() {
        return GroupProcesses.classPathLauncher(JVM);
    }

    /** As {@link #launcher()}, the replicas' classes mapped from an archive made once under {@code archives} (tests). */
    public static List<String> launcher(Path archives) {
        return GroupProcesses.classPathLauncher(JVM, archives);
    }

    /** Whether replica processes on simulated hosts can run here, and why not. */
    public static SimulatedHosts.Availability available() {
        try {
            return SimulatedHosts.available();
        } catch (AssertionError e) {
            return new SimulatedHosts.Availability(false, e.getMessage());
        }
    }

    @Override
    public String addresses() {
        return g.directoryList();
    }

    @Override
    public int size() {
        return replicas.size();
    }

    @Override
    public String storeHost() {
        return g.net().testJvm().address();
    }

    @Override
    public Duration startTime() {
        return START_TIME;
    }

    @Override
    public boolean killsProcesses() {
        return true;
    }

    @Override
    public int leader() {
        GroupProcesses.Node l = g.leaderNow();
        return l == null ? -1 : replicas.indexOf(l);
    }

    @Override
    public int awaitLeader(Duration patience) throws InterruptedException {
        try {
            return replicas.indexOf(g.awaitLeader(patience));
        } catch (AssertionError e) {
            throw new NotWhole("replica processes: " + e.getMessage());
        }
    }

    @Override
    public void stop(int i) throws InterruptedException {
        g.stop(replicas.get(i));
    }

    @Override
    public void kill(int i) throws InterruptedException {
        g.kill9(replicas.get(i));
    }

    @Override
    public synchronized void start(int i) throws IOException {
        GroupProcesses.Node n = replicas.get(i);
        if (!n.alive()) {
            g.launch(n);
        }
    }

    @Override
    public void restart(int i) throws InterruptedException, IOException {
        stop(i);
        start(i);
    }

    @Override
    public int killLeader() throws InterruptedException, IOException {
        int l = awaitLeader(Duration.ofSeconds(30).plus(START_TIME));
        kill(l);
        start(l);
        return l;
    }

    @Override
    public void wipe(int i) throws InterruptedException, IOException {
        kill(i);
        g.wipe(replicas.get(i));
        start(i);
    }

    @Override
    public void restartAll() throws InterruptedException, IOException {
        for (int i = 0; i < replicas.size(); i++) {
            kill(i);
        }
        for (int i = 0; i < replicas.size(); i++) {
            start(i);
        }
    }

    @Override
    public long appliedIndex(int i) {
        return g.appliedIndex(replicas.get(i));
    }

    /** Counted in the replica's log since its last start (the state machine logs each snapshot it loads). */
    @Override
    public long installedSnapshots(int i) {
        return g.installedSnapshots(replicas.get(i));
    }

    @Override
    public boolean canCut() {
        return true;
    }

    @Override
    public void cut(int i) {
        g.net().cut(replicas.get(i).host());
    }

    @Override
    public void heal(int i) {
        g.net().heal(replicas.get(i).host());
    }

    /** Each replica's log, for a closer look after a failure. */
    public List<Path> logs() {
        return replicas.stream().map(GroupProcesses.Node::log).toList();
    }

    @Override
    public void close() {
        g.close();
    }
}
