package io.hayloft.raid;

import io.hayloft.common.wire.StripeMap;
import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import io.hayloft.erasure.TooManyErasuresException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds lost and corrupt blocks and rebuilds them onto new stores (DESIGN.md "Repair").
 *
 * <p>A block is lost when its store is not UP in the directory, the store's listing cannot be read,
 * or the listing lacks it; corrupt when the listed length or CRC32C differs from the stripe map.
 * One lost block is rebuilt with {@link ErasureCodec#repair} (Hitchhiker's reduced reads for a
 * data block), several with a full {@link ErasureCodec#decode}. Every rebuilt block goes to a store
 * that holds no other block of its stripe (another rack when possible), is verified from that
 * store's listing, and only then replaces the old one in the directory (compare-and-set on the old
 * name); the old block is deleted last. A crash between the steps leaves at most an unreferenced
 * block, which {@link RaidNode#recover()} sweeps.
 *
 * <p>Stripes to repair go into one shared queue that {@code workers} threads drain (FDS: no static
 * split, so no stragglers), reading through a per-store {@link Throttle}.
 *
 * <p>Thread-safe: counters are atomic; each repair works on its own spool files.
 */
public final class BlockFixer {

    private static final Logger LOG = LoggerFactory.getLogger(BlockFixer.class);

    /** Blocks of one stripe to rebuild. */
    public record Damage(int volume, int stripe, int[] units, String why) implements java.io.Serializable {
    }

    /** What one {@link #repairAll()} did. */
    public record Report(int stripes, int blocks, long bytesRead, long bytesWritten, List<Long> singleRepairReads,
                         List<String> failures, long nanos) {
        /** Bytes read per byte rebuilt: what a repair costs the cluster. */
        public double readAmplification() {
            return bytesWritten == 0 ? 0 : (double) bytesRead / bytesWritten;
        }
    }

    private final Cluster cluster;
    private final RaidConfig config;
    private final Throttle throttle;
    private final Path spoolDir;
    private volatile Checkpoints checkpoints = Checkpoints.NONE;
    private final AtomicLong totalRead = new AtomicLong();
    private final AtomicLong totalWritten = new AtomicLong();
    private final AtomicInteger rotation = new AtomicInteger();

    public BlockFixer(Cluster cluster, RaidConfig config) {
        this.cluster = cluster;
        this.config = config;
        this.throttle = new Throttle(config.repairBytesPerSecondPerStore);
        this.spoolDir = Path.of(config.spoolDir == null ? System.getProperty("java.io.tmpdir") : config.spoolDir);
    }

    public void checkpoints(Checkpoints c) {
        this.checkpoints = c;
    }

    /** Bytes read and rebuilt by this fixer since it was made. */
    public long bytesRead() {
        return totalRead.get();
    }

    public long bytesWritten() {
        return totalWritten.get();
    }

    /** Every damaged stripe of every committed stripe map. */
    public List<Damage> scan() throws IOException {
        Map<String, Cluster.StoreRef> stores = cluster.stores();
        Map<String, Map<String, Cluster.BlockInfo>> listings = new HashMap<>();
        for (Cluster.StoreRef s : stores.values()) {
            if (s.up()) {
                try {
                    listings.put(s.id(), cluster.listBlocks(s.address()));
                } catch (IOException e) {
                    LOG.warn("store {} cannot list its blocks ({}); treating its blocks as lost", s.id(), e.toString());
                }
            }
        }
        List<Damage> out = new ArrayList<>();
        for (StripeMap m : cluster.stripeMaps()) {
            if (!StripeMap.COMMITTED.equals(m.status())) {
                continue;
            }
            for (StripeMap.Stripe s : m.stripes()) {
                List<Integer> units = new ArrayList<>();
                StringBuilder why = new StringBuilder();
                for (int u = 0; u < s.blocks().size(); u++) {
                    StripeMap.Block b = s.blocks().get(u);
                    Map<String, Cluster.BlockInfo> listing = listings.get(b.store());
                    Cluster.BlockInfo got = listing == null ? null : listing.get(b.name());
                    String problem = listing == null ? "store " + b.store() + " down"
                            : got == null ? "missing from " + b.store()
                            : got.length() != b.length() || got.crc32c() != b.crc32c() ? "corrupt on " + b.store() : null;
                    if (problem != null) {
                        units.add(u);
                        why.append(why.length() == 0 ? "" : "; ").append("unit ").append(u).append(": ").append(problem);
                    }
                }
                if (!units.isEmpty()) {
                    out.add(new Damage(m.volume(), s.index(), units.stream().mapToInt(Integer::intValue).toArray(), why.toString()));
                }
            }
        }
        return out;
    }

    /** Scans, then repairs every damaged stripe with {@code config.workers} threads pulling from one queue. */
    public Report repairAll() throws Exception {
        return repairAll(scan());
    }

    /** Repairs the given damage (a filtered {@link #scan()}) with {@code config.workers} threads pulling from one queue. */
    public Report repairAll(List<Damage> damage) throws Exception {
        long t0 = System.nanoTime();
        long read0 = totalRead.get();
        long written0 = totalWritten.get();
        ConcurrentLinkedQueue<Damage> queue = new ConcurrentLinkedQueue<>(damage);
        List<Long> singles = new CopyOnWriteArrayList<>();
        List<String> failures = new CopyOnWriteArrayList<>();
        AtomicInteger stripes = new AtomicInteger();
        AtomicInteger blocks = new AtomicInteger();
        List<Callable<Void>> workers = new ArrayList<>();
        for (int w = 0; w < config.workers; w++) {
            workers.add(() -> {
                Damage d;
                while ((d = queue.poll()) != null) {
                    try {
                        long read = repair(d);
                        if (d.units().length == 1) {
                            singles.add(read);
                        }
                        stripes.incrementAndGet();
                        blocks.addAndGet(d.units().length);
                    } catch (IOException | RuntimeException e) {
                        LOG.warn("repair of volume {} stripe {} failed: {}", d.volume(), d.stripe(), e.toString());
                        failures.add("volume " + d.volume() + " stripe " + d.stripe() + ": " + e.getMessage());
                    }
                }
                return null;
            });
        }
        try (ThreadPoolRunner runner = new ThreadPoolRunner(config.workers)) {
            runner.runAll(workers);
        }
        return new Report(stripes.get(), blocks.get(), totalRead.get() - read0, totalWritten.get() - written0,
                List.copyOf(singles), List.copyOf(failures), System.nanoTime() - t0);
    }

    /**
     * Scans, then repairs every damaged stripe as one {@link StripeRepairTask} per stripe on
     * {@code runner} (Spark, say). Each task enforces the per-store read budget on its own; a failed
     * stripe is reported, not thrown.
     */
    public Report repairAll(JobRunner runner) throws Exception {
        long t0 = System.nanoTime();
        List<StripeRepairTask> tasks = new ArrayList<>();
        for (Damage d : scan()) {
            tasks.add(new StripeRepairTask(config, d));
        }
        List<Long> singles = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        int stripes = 0;
        int blocks = 0;
        long read = 0;
        long written = 0;
        for (StripeRepairTask.Outcome o : runner.run(tasks)) {
            read += o.bytesRead();
            written += o.bytesWritten();
            if (o.failure() != null) {
                failures.add(o.failure());
                continue;
            }
            stripes++;
            blocks += o.blocks();
            if (o.blocks() == 1) {
                singles.add(o.bytesRead());
            }
        }
        totalRead.addAndGet(read);
        totalWritten.addAndGet(written);
        return new Report(stripes, blocks, read, written, List.copyOf(singles), List.copyOf(failures), System.nanoTime() - t0);
    }

    /**
     * Rebuilds the damaged units of one stripe onto new stores.
     *
     * @return bytes read from the surviving blocks
     */
    public long repair(Damage d) throws IOException {
        StripeMap m = cluster.stripeMap(d.volume());
        Map<String, Cluster.StoreRef> stores = cluster.stores();
        List<StripeMap.Block> blocks = m.stripes().get(d.stripe()).blocks();
        long b = m.blockSize();
        TreeSet<Integer> lost = new TreeSet<>();
        for (int u : d.units()) {
            lost.add(u);
        }
        Set<Integer> unreadable = new TreeSet<>();
        Path dir = Files.createTempDirectory(spoolDir, "hayloft-repair-v" + d.volume() + "-s" + d.stripe() + "-");
        try (ErasureCodec codec = ErasureCodec.create(CodecKind.fromWireName(m.codec()), m.k(), m.r())) {
            while (true) {
                Map<Integer, FileChannel> out = new HashMap<>();
                AtomicLong read = new AtomicLong();
                try {
                    for (int u : lost) {
                        out.put(u, FileChannel.open(dir.resolve("u" + u), StandardOpenOption.CREATE, StandardOpenOption.READ,
                                StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.DELETE_ON_CLOSE));
                    }
                    io.hayloft.erasure.UnitReader reader = (u, off, dst) -> {
                        StripeMap.Block blk = blocks.get(u);
                        Cluster.StoreRef ref = stores.get(blk.store());
                        try {
                            if (ref == null || !ref.up()) {
                                throw new IOException("store " + blk.store() + " is down");
                            }
                            throttle.acquire(ref.id(), dst.remaining());
                            byte[] got = cluster.readBlock(ref.address(), blk.name(), off, dst.remaining());
                            read.addAndGet(got.length);
                            dst.put(got);
                        } catch (IOException e) {
                            throw new UnitFailed(u, e);
                        }
                    };
                    io.hayloft.erasure.UnitWriter writer = (u, off, src) -> EncodeJob.writeFully(out.get(u), src, off);
                    int[] others = unreadable.stream().mapToInt(Integer::intValue).toArray();
                    if (lost.size() == 1 && unreadable.isEmpty()) {
                        codec.repair(b, lost.first(), others, reader, writer);
                    } else {
                        TreeSet<Integer> all = new TreeSet<>(lost);
                        all.addAll(unreadable);
                        int[] erased = all.stream().mapToInt(Integer::intValue).toArray();
                        codec.decode(b, erased, reader, (u, off, src) -> {
                            if (out.containsKey(u)) {
                                EncodeJob.writeFully(out.get(u), src, off);
                            }
                        });
                    }
                    totalRead.addAndGet(read.get());
                    for (int u : lost) {
                        replace(m, d.stripe(), u, out.get(u), stores, blocks);
                    }
                    return read.get();
                } catch (UnitFailed f) {
                    totalRead.addAndGet(read.get());
                    if (!unreadable.add(f.unit) || lost.contains(f.unit)) {
                        throw f;
                    }
                    LOG.info("repair of volume {} stripe {}: unit {} unreadable ({}); retrying without it", d.volume(),
                            d.stripe(), f.unit, f.getMessage());
                } catch (TooManyErasuresException e) {
                    throw new IOException("volume " + d.volume() + " stripe " + d.stripe() + ": units " + lost
                            + " lost and " + unreadable + " unreadable, more than the " + m.r() + " the code tolerates", e);
                } finally {
                    for (FileChannel c : out.values()) {
                        c.close();
                    }
                }
            }
        } finally {
            Files.deleteIfExists(dir);
        }
    }

    private void replace(StripeMap m, int stripe, int unit, FileChannel rebuilt, Map<String, Cluster.StoreRef> stores,
                         List<StripeMap.Block> blocks) throws IOException {
        Set<String> exclude = new HashSet<>();
        blocks.forEach(x -> exclude.add(x.store()));
        Cluster.StoreRef target = BlockPlacement.choose(stores, 1, rotation.getAndIncrement(), exclude).get(0);
        StripeMap.Block old = blocks.get(unit);
        String name = EncodeJob.blockName(m.volume(), m.job(), stripe, unit, generation(old.name()) + 1);
        long crc = new EncodeJob(cluster, config, Checkpoints.NONE).upload(target.address(), name, rebuilt, m.blockSize());
        Cluster.BlockInfo listed = cluster.listBlocks(target.address()).get(name);
        if (listed == null || listed.length() != m.blockSize() || listed.crc32c() != crc) {
            throw new IOException("rebuilt block " + name + " on " + target.id() + " failed verification: " + listed);
        }
        totalWritten.addAndGet(m.blockSize());
        checkpoints.reached("rebuilt");
        cluster.replaceBlock(m.volume(), stripe, unit, old, new StripeMap.Block(target.id(), name, m.blockSize(), crc));
        checkpoints.reached("replaced");
        Cluster.StoreRef oldStore = stores.get(old.store());
        if (oldStore != null && oldStore.up()) {
            try {
                cluster.deleteBlock(oldStore.address(), old.name());
            } catch (IOException e) {
                LOG.info("old block {} on {} not deleted ({}); the orphan sweep will", old.name(), old.store(), e.toString());
            }
        }
        LOG.info("volume {} block {}/{} rebuilt on {} as {}", m.volume(), stripe, unit, target.id(), name);
    }

    static int generation(String name) {
        int g = name.lastIndexOf("-g");
        if (g < 0) {
            return 0;
        }
        try {
            return Integer.parseInt(name.substring(g + 2));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** One surviving block failed while being read. */
    private static final class UnitFailed extends IOException {
        final int unit;

        UnitFailed(int unit, IOException cause) {
            super("unit " + unit + ": " + cause.getMessage(), cause);
            this.unit = unit;
        }
    }
}
