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
 *
 * <p>Not thread-safe: one thread runs it; {@link #stop} from another.
 */
final class FaultInjector implements Runnable {
    /** Fault kinds, with their weights. */
    enum Fault {
        STORE_RESTART(2), STORE_CRASH(3), STORE_DOWN(2), POWER_CUT(3), DIRECTORY_RESTART(2), CLUSTER_CRASH(1),
        BLOCK_DELETE(3), BLOCK_CORRUPT(3), RAID_CRASH(3);

        final int weight;

        Fault(int weight) {
            this.weight = weight;
        }

        String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

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
        return ChaosRun.weighted(rnd, Fault.values(), f -> f.weight);
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
                cluster.restartDirectory();
                yield "directory restarted";
            }
            case CLUSTER_CRASH -> {
                for (int s = 0; s < cluster.storeCount(); s++) {
                    if (cluster.store(s) != null) {
                        faults.crash(cluster, s);
                    }
                }
                cluster.stopDirectory();
                cluster.startDirectory();
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
