package io.hayloft.cli.chaos;

import io.hayloft.cli.chaos.History.Kind;
import io.hayloft.cli.chaos.History.Outcome;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.ThreadPoolRunner;
import io.hayloft.serverkit.io.Disk;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The fault thread of a concurrent schedule: every 1 to 3.5 s (its own random generator) one of
 * the faults of the sequential checker strikes in the middle of the clients' operations and the
 * background jobs: a store restarted, crashed ({@code kill -9}), or held down 1 to 4 s; a store's
 * disk losing power, idle or at the first fsync of whatever is being written (with power cuts on);
 * the directory restarted; the whole cluster crashed; a block file deleted or corrupted (the
 * background repairs and scrubs find it); the raid-node crashed at a checkpoint of whatever job
 * reaches it, then recovered. A fault's window (from its start until the cluster is whole again)
 * goes into {@link FaultWindows}, the fault into the history. The thread leaves every store running.
 * With a directory group ({@code --directories N}) the directory faults strike its replicas: a
 * replica restarted, the leader stopped and started again (a new leader elected meanwhile), a
 * follower's data wiped (it must catch up within a minute, installing a snapshot), all replicas
 * restarted with the stores in a cluster crash; where the replicas run on hosts of their own
 * ({@link ReplicaGroup#canCut()}), a replica's host (the leader's or a follower's) cut off the network
 * for 2 to 5 s, then healed (the group must then have one leader and the cut replica catch up).
 * A group that does not come back whole within its bound ({@link ReplicaGroup.NotWhole}) is a violation.
 *
 * <p>Not thread-safe: one thread runs it; {@link #stop} from another.
 */
final class FaultInjector implements Runnable {
    /** Fault kinds, with their weights. */
    enum Fault {
        STORE_RESTART(2), STORE_CRASH(3), STORE_DOWN(2), POWER_CUT(3), DIRECTORY_RESTART(2), CLUSTER_CRASH(1),
        BLOCK_DELETE(3), BLOCK_CORRUPT(3), RAID_CRASH(3), LEADER_KILL(4, true), FOLLOWER_WIPE(2, true),
        /** Last, so the draws of groups that cannot cut (weight 0) are those of before. */
        PARTITION(4, true);

        final int weight;
        /** Only with a directory group ({@code --directories N}). */
        final boolean groupOnly;

        Fault(int weight) {
            this(weight, false);
        }

        Fault(int weight, boolean groupOnly) {
            this.weight = weight;
            this.groupOnly = groupOnly;
        }

        String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /** How long a directory group may go without a leader after a fault. */
    private static final Duration LEADER_PATIENCE = Duration.ofSeconds(30);
    /** How long a wiped replica may take to catch up. */
    private static final Duration CATCH_UP = Duration.ofSeconds(60);

    private static final Pattern BLOCK = Pattern.compile("v(\\d+)-[0-9a-f]{8}-s\\d+-u\\d+\\.blk");

    private final ConcurrentChaosRun run;
    private final Random rnd;
    private volatile boolean stopping;

    FaultInjector(ConcurrentChaosRun run) {
        this.run = run;
        this.rnd = ConcurrentChaosRun.random(run.seed(), run.options().clients() + 100);
    }

    void stop() {
        stopping = true;
    }

    /** Faults injected (not skipped) so far; this thread's own. */
    private int injected;

    /** Stopped, and the schedule's minimum of faults ({@link ChaosOptions#minFaults()}) injected. */
    private boolean done() {
        return stopping && injected >= run.options().minFaults();
    }

    @Override
    public void run() {
        try (ThreadPoolRunner runner = new ThreadPoolRunner(2)) {
            while (!done() && !run.aborted()) {
                Thread.sleep(1000 + rnd.nextInt(2500)); // pacing between faults
                if (done()) {
                    break;
                }
                Fault f = pick();
                int store = rnd.nextInt(run.cluster().storeCount());
                long seed = rnd.nextLong();
                if (f == Fault.POWER_CUT && !run.options().powerCuts()) {
                    continue;
                }
                long invoke = System.nanoTime();
                long[] window = run.windows().begin();
                String what;
                Outcome outcome = Outcome.OK;
                ReplicaGroup.NotWhole notWhole = null;
                try {
                    what = inject(f, store, new Random(seed), runner);
                } catch (ReplicaGroup.NotWhole e) {
                    notWhole = e;
                    what = "the directory group did not come back whole: " + ConcurrentChaosRun.brief(e);
                    outcome = Outcome.FAILED;
                } catch (Exception e) {
                    what = "failed to inject: " + ConcurrentChaosRun.brief(e);
                    outcome = Outcome.FAILED;
                } finally {
                    run.windows().end(window);
                }
                History.Event event = run.history().record("faults", Kind.FAULT, f.label(), List.of(), invoke, outcome, what);
                if (notWhole != null) {
                    run.groupNotWhole(event, notWhole.getMessage());
                }
                if (what.contains("skipped")) {
                    continue;
                }
                run.fault(f.label());
                injected++;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private Fault pick() {
        boolean group = run.group() != null;
        boolean cuts = group && run.group().canCut();
        return ChaosRun.weighted(rnd, Fault.values(), f -> f.groupOnly && !group || f == Fault.PARTITION && !cuts ? 0 : f.weight);
    }

    private String inject(Fault f, int i, Random r, ThreadPoolRunner runner) throws Exception {
        EmbeddedCluster cluster = run.cluster();
        StoreFaults faults = run.storeFaults();
        return switch (f) {
            case STORE_RESTART -> {
                cluster.restartStore(i);
                yield "store " + i + " restarted";
            }
            case STORE_CRASH -> {
                faults.crash(cluster, i);
                cluster.startStore(i);
                yield "store " + i + " killed (kill -9) and started";
            }
            case STORE_DOWN -> {
                boolean crash = r.nextBoolean();
                int millis = 1000 + r.nextInt(3000);
                if (crash) {
                    faults.crash(cluster, i);
                } else {
                    cluster.stopStore(i);
                }
                Thread.sleep(millis); // the store stays down that long: the fault itself, not a synchronisation
                cluster.startStore(i);
                yield "store " + i + (crash ? " killed" : " stopped") + " for " + millis + " ms";
            }
            case POWER_CUT -> {
                if (r.nextBoolean()) {
                    faults.powerCut(cluster, i);
                    cluster.startStore(i);
                    yield "store " + i + " lost power and restarted";
                }
                int cut = faults.powerCutDuringWrites(cluster, () -> { }, i); // the clients are writing
                cluster.startStore(cut);
                yield "store " + cut + " lost power at its next fsync and restarted";
            }
            case DIRECTORY_RESTART -> {
                if (run.group() != null) {
                    int d = r.nextInt(run.group().size());
                    run.group().restart(d);
                    run.group().awaitLeader(leaderPatience());
                    yield "directory replica " + d + " restarted";
                }
                cluster.restartDirectory();
                yield "directory restarted";
            }
            case LEADER_KILL -> {
                long t0 = System.nanoTime();
                int killed = run.group().killLeader();
                int leader = run.group().awaitLeader(leaderPatience());
                yield "directory leader " + killed + (run.group().killsProcesses() ? " killed (kill -9)" : " stopped")
                        + " and started; leader now " + leader + " (" + (System.nanoTime() - t0) / 1_000_000 + " ms)";
            }
            case FOLLOWER_WIPE -> wipeFollower(r);
            case PARTITION -> partition(r);
            case CLUSTER_CRASH -> {
                for (int s = 0; s < cluster.storeCount(); s++) {
                    if (cluster.store(s) != null) {
                        faults.crash(cluster, s);
                    }
                }
                if (run.group() != null) {
                    run.group().restartAll();
                    run.group().awaitLeader(leaderPatience());
                } else {
                    cluster.stopDirectory();
                    cluster.startDirectory();
                }
                for (int s = 0; s < cluster.storeCount(); s++) {
                    cluster.startStore(s);
                }
                cluster.heartbeat();
                yield "every store killed, the directory stopped; all started";
            }
            case BLOCK_DELETE, BLOCK_CORRUPT -> damageBlock(f == Fault.BLOCK_CORRUPT, r);
            case RAID_CRASH -> run.raid().crash(r, new RaidNode(run.raidConfig("rs", ChaosRun.BLOCK_SIZES[0]),
                    runner));
        };
    }

    /**
     * Stops a follower of the directory group, deletes its data and starts it with the same
     * configuration; it must catch up with the leader (by a snapshot: the log below it is purged) within
     * {@link #CATCH_UP}, or the fault fails.
     */
    private String wipeFollower(Random r) throws Exception {
        ReplicaGroup g = run.group();
        int leader = g.awaitLeader(leaderPatience());
        int victim = (leader + 1 + r.nextInt(g.size() - 1)) % g.size();
        long t0 = System.nanoTime();
        g.wipe(victim);
        long target = g.appliedIndex(g.awaitLeader(leaderPatience()));
        catchUp(g, victim, target, t0 + g.startTime().plus(CATCH_UP).toNanos(), "wiped");
        long snapshots = g.installedSnapshots(victim);
        return "directory follower " + victim + " wiped and started; caught up to index " + target + " in "
                + (System.nanoTime() - t0) / 1_000_000 + " ms (" + (snapshots < 0 ? "snapshots installed not known"
                : snapshots + " snapshot installed") + ")";
    }

    /** Waits until replica {@code i} applied {@code target}; {@link ReplicaGroup.NotWhole} past {@code deadline}. */
    private static void catchUp(ReplicaGroup g, int i, long target, long deadline, String what) throws InterruptedException {
        while (g.appliedIndex(i) < target) {
            if (System.nanoTime() > deadline) {
                throw new ReplicaGroup.NotWhole(what + " directory replica " + i + " applied " + g.appliedIndex(i) + " < "
                        + target + " (the leader's) " + CATCH_UP.toSeconds() + " s after");
            }
            Thread.sleep(20); // poll the replica's applied index
        }
    }

    /** How long a group may go without a leader after a fault: {@link #LEADER_PATIENCE}, plus a replica's start. */
    private Duration leaderPatience() {
        return LEADER_PATIENCE.plus(run.group().startTime());
    }

    /**
     * Cuts the host of one replica (the leader's or a follower's, half and half) off the network for 2 to
     * 5 s, then heals it; the group must then have one leader within {@link #LEADER_PATIENCE} and the cut
     * replica catch up with the leader's applied index within {@link #CATCH_UP}, else
     * {@link ReplicaGroup.NotWhole}. A cut leader loses its quorum: the others elect one of them
     * meanwhile, and it rejoins as a follower.
     */
    private String partition(Random r) throws Exception {
        ReplicaGroup g = run.group();
        int leader = g.awaitLeader(leaderPatience());
        boolean ofLeader = r.nextBoolean();
        int victim = ofLeader ? leader : (leader + 1 + r.nextInt(g.size() - 1)) % g.size();
        int millis = 2000 + r.nextInt(3000);
        int during;
        g.cut(victim);
        try {
            Thread.sleep(millis); // the host stays cut off that long: the fault itself, not a synchronisation
            during = g.leader(); // as this process sees it: the cut replica does not answer
        } finally {
            g.heal(victim);
        }
        long healed = System.nanoTime();
        int now = g.awaitLeader(LEADER_PATIENCE);
        long target = g.appliedIndex(now);
        catchUp(g, victim, target, healed + CATCH_UP.toNanos(), "cut-off");
        return "directory " + (ofLeader ? "leader " : "follower ") + victim + " cut off for " + millis + " ms (leader seen then: "
                + (during < 0 ? "none" : during) + "), healed; leader now " + now + ", replica " + victim + " caught up to index "
                + target + " " + (System.nanoTime() - healed) / 1_000_000 + " ms after the heal";
    }

    /** Deletes or corrupts one block file on a store's disk; the background fixer and scrubber are to find it. */
    private String damageBlock(boolean corrupt, Random r) throws Exception {
        EmbeddedCluster cluster = run.cluster();
        List<Path> blocks = new ArrayList<>();
        List<Integer> owners = new ArrayList<>();
        ChaosRun.blockFiles(cluster, BLOCK, blocks, owners);
        if (blocks.isEmpty()) {
            return "skipped (no block)";
        }
        int pick = r.nextInt(blocks.size());
        Path victim = blocks.get(pick);
        Disk disk = cluster.disk(owners.get(pick));
        Matcher m = BLOCK.matcher(victim.getFileName().toString());
        m.matches();
        String where = "store " + owners.get(pick) + " " + victim.getFileName();
        if (!corrupt) {
            disk.deleteIfExists(victim);
            disk.syncDirectory(victim.getParent());
            return "deleted " + where;
        }
        long size = disk.size(victim);
        byte[] garbage = new byte[1 + r.nextInt(64)];
        r.nextBytes(garbage);
        if (size == 0) {
            return "skipped (empty block " + where + ")";
        }
        try (FileChannel ch = disk.open(victim, StandardOpenOption.WRITE, StandardOpenOption.READ)) {
            long at = Math.floorMod(r.nextLong(), Math.max(1, size - garbage.length));
            ch.write(ByteBuffer.wrap(garbage, 0, (int) Math.min(garbage.length, size - at)), at);
            ch.force(true);
            return "corrupted " + garbage.length + " bytes at " + at + " of " + where;
        }
    }
}
