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
 * restarted with the stores in a cluster crash.
 *
 * <p>Not thread-safe: one thread runs it; {@link #stop} from another.
 */
final class FaultInjector implements Runnable {
    /** Fault kinds, with their weights. */
    enum Fault {
        STORE_RESTART(2), STORE_CRASH(3), STORE_DOWN(2), POWER_CUT(3), DIRECTORY_RESTART(2), CLUSTER_CRASH(1),
        BLOCK_DELETE(3), BLOCK_CORRUPT(3), RAID_CRASH(3), LEADER_KILL(4, true), FOLLOWER_WIPE(2, true);

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

    @Override
    public void run() {
        try (ThreadPoolRunner runner = new ThreadPoolRunner(2)) {
            while (!stopping && !run.aborted()) {
                Thread.sleep(1000 + rnd.nextInt(2500)); // pacing between faults
                if (stopping) {
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
                try {
                    what = inject(f, store, new Random(seed), runner);
                } catch (Exception e) {
                    what = "failed to inject: " + ConcurrentChaosRun.brief(e);
                    outcome = Outcome.FAILED;
                } finally {
                    run.windows().end(window);
                }
                run.history().record("faults", Kind.FAULT, f.label(), List.of(), invoke, outcome, what);
                if (what.contains("skipped")) {
                    continue;
                }
                run.fault(f.label());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private Fault pick() {
        boolean group = run.group() != null;
        return ChaosRun.weighted(rnd, Fault.values(), f -> f.groupOnly && !group ? 0 : f.weight);
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
                    run.group().awaitLeader(LEADER_PATIENCE);
                    yield "directory replica " + d + " restarted";
                }
                cluster.restartDirectory();
                yield "directory restarted";
            }
            case LEADER_KILL -> {
                long t0 = System.nanoTime();
                int killed = run.group().killLeader();
                int leader = run.group().awaitLeader(LEADER_PATIENCE);
                yield "directory leader " + killed + " stopped and started; leader now " + leader + " ("
                        + (System.nanoTime() - t0) / 1_000_000 + " ms)";
            }
            case FOLLOWER_WIPE -> wipeFollower(r);
            case CLUSTER_CRASH -> {
                for (int s = 0; s < cluster.storeCount(); s++) {
                    if (cluster.store(s) != null) {
                        faults.crash(cluster, s);
                    }
                }
                if (run.group() != null) {
                    run.group().restartAll();
                    run.group().awaitLeader(LEADER_PATIENCE);
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
        DirectoryGroup g = run.group();
        int leader = g.awaitLeader(LEADER_PATIENCE);
        int victim = (leader + 1 + r.nextInt(g.size() - 1)) % g.size();
        long t0 = System.nanoTime();
        g.wipe(victim);
        long target = g.appliedIndex(g.awaitLeader(LEADER_PATIENCE));
        long deadline = t0 + CATCH_UP.toNanos();
        while (g.appliedIndex(victim) < target) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("wiped directory replica " + victim + " applied " + g.appliedIndex(victim)
                        + " < " + target + " after " + CATCH_UP.toSeconds() + " s");
            }
            Thread.sleep(20); // poll the replica's applied index
        }
        return "directory follower " + victim + " wiped and started; caught up to index " + target + " in "
                + (System.nanoTime() - t0) / 1_000_000 + " ms (" + g.installedSnapshots(victim) + " snapshot installed)";
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
