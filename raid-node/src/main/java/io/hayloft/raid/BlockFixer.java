package io.hayloft.raid;

import io.hayloft.cold.RangeFetch;
import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import io.hayloft.erasure.ReadRange;
import io.hayloft.erasure.TooManyErasuresException;
import io.hayloft.erasure.UnitWriter;
import io.hayloft.format.io.PositionalIo;
import io.hayloft.format.wire.StripeMap;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds lost and corrupt blocks and rebuilds them onto new stores (docs/raid.md "Repair").
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
 * <p>Stripes to repair go into one shared queue drained by one worker per damaged stripe, at most
 * {@code repairWorkers} (FDS: no static split, so no stragglers; targets rotate over the healthy
 * stores). Each repair fetches the ranges the codec plans ({@link ErasureCodec#planRepair},
 * {@link ErasureCodec#planDecode}) from all its sources at once, a window of {@code
 * repairWindowBytes} per unit at a time with the next window fetched while the current one
 * decodes (at most {@code 2 × k × repairWindowBytes} held per repair). Every source read is paced
 * by a {@link Throttle} on the source's egress and the repairer's ingress, and each rebuilt block's
 * upload on the repairer's egress and its target's ingress (as a NIC on each would impose). The
 * repair is modelled as running on a <em>repairer</em> store, chosen apart from the target: the
 * store with the fewest repairs in flight (decoding or receiving), the target itself on a tie, so
 * its upload is local. Tying the repair to its target put every source read through one store's
 * ingress when one store was the only legal target of many stripes (a replacement store in a
 * cluster of {@code k + r + 1}: it is the one store outside every stripe), about nine times the
 * bytes of the blocks it receives.
 *
 * <p>Thread-safe: counters are atomic; each repair works on its own spool files.
 */
public final class BlockFixer {

    private static final Logger LOG = LoggerFactory.getLogger(BlockFixer.class);

    /** Blocks of one stripe to rebuild. */
    public record Damage(int volume, int stripe, int[] units, String why) implements Serializable {
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
    /** Source bytes received by repairs, counted as each read completes (attempts that failed included). */
    private final AtomicLong inFlightBytesRead = new AtomicLong();
    /** The most source bytes one repair held at once (the window decoding plus the next one), over every repair. */
    private final AtomicLong maxHeld = new AtomicLong();
    private final AtomicLong streamsOpened = new AtomicLong();
    /** Bytes of lost blocks decoded so far by attempts that did not fail (a failed attempt takes its bytes back). */
    private final AtomicLong decoded = new AtomicLong();
    private final AtomicInteger repairsRunning = new AtomicInteger();
    private volatile boolean streamSources = true;
    private volatile long epoch;
    /** Most windows a repair plans before reading (for streamed sources); more read each window's ranges. */
    static final long MAX_PLANNED_WINDOWS = 1 << 16;
    private volatile LongConsumer received = n -> { };
    /** Repairs in flight per target store: new repairs go to the least busy targets. */
    private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
    /** Repairs in flight per repairer store (whose ingress carries their source reads). */
    private final Map<String, AtomicInteger> decoding = new ConcurrentHashMap<>();

    public BlockFixer(Cluster cluster, RaidConfig config) {
        this.cluster = cluster;
        this.config = config;
        this.throttle = new Throttle(config.repairBytesPerSecondPerStore);
        this.spoolDir = Path.of(config.spoolDir == null ? System.getProperty("java.io.tmpdir") : config.spoolDir);
    }

    public void checkpoints(Checkpoints c) {
        this.checkpoints = c;
    }

    /**
     * Fences this fixer's block replacements by raid lease epoch {@code epoch} (a repair task carrying
     * its driver's epoch into another process); 0, the default: by the cluster client's own lease.
     */
    BlockFixer fencedAt(long epoch) {
        this.epoch = epoch;
        return this;
    }

    /** The cluster this fixer works on. */
    Cluster cluster() {
        return cluster;
    }

    /** The per-store link budget of this fixer's repairs (bytes reserved per link, for tests and benchmarks). */
    public Throttle throttle() {
        return throttle;
    }

    /** Bytes read and rebuilt by this fixer since it was made. */
    public long bytesRead() {
        return totalRead.get();
    }

    public long bytesWritten() {
        return totalWritten.get();
    }

    /** Source bytes received so far, counted as each read completes (a running repair's included). */
    public long bytesReceived() {
        return inFlightBytesRead.get();
    }

    /**
     * The most source bytes any one repair of this fixer held at once: the window being decoded plus
     * the next one in flight, at most {@code 2 × k × repairWindowBytes} whatever the block size.
     */
    public long maxBytesHeld() {
        return maxHeld.get();
    }

    /**
     * Bytes of lost blocks decoded so far, window by window (an attempt that fails takes its bytes
     * back): a progress bar's measure finer than whole blocks ({@code hayloft raid fix}).
     */
    public long bytesDecoded() {
        return decoded.get();
    }

    /** Streamed source reads opened (one per source and substripe piece of each repair attempt). */
    public long streamsOpened() {
        return streamsOpened.get();
    }

    /** Told of source bytes as each read completes (the daemon's {@code hayloft_raid_repair_bytes_received}). */
    public void onReceived(LongConsumer listener) {
        this.received = Objects.requireNonNull(listener, "listener");
    }

    /** Repairs running now. */
    public int repairsInFlight() {
        return repairsRunning.get();
    }

    /**
     * Whether sources are read as one streamed GET per (source, piece) (the default) or as one
     * ranged GET per window and range (the way before streams; for comparisons).
     */
    public void streamSources(boolean on) {
        this.streamSources = on;
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

    /** Scans, then repairs every damaged stripe with up to {@code config.repairWorkers} threads pulling from one queue. */
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
        // One worker per damaged stripe up to the bound: with throttled links a repair mostly waits,
        // so more stores (more sources and targets) need more repairs in flight to go faster.
        int threads = Math.max(1, Math.min(queue.size(), config.repairWorkers));
        for (int w = 0; w < threads; w++) {
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
        try (ThreadPoolRunner runner = new ThreadPoolRunner(threads)) {
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
            tasks.add(new StripeRepairTask(config, d, cluster.fenceEpoch()));
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
        repairsRunning.incrementAndGet();
        try {
            return repairStripe(d);
        } finally {
            repairsRunning.decrementAndGet();
        }
    }

    private long repairStripe(Damage d) throws IOException {
        cluster.checkLease();
        StripeMap m = cluster.stripeMap(d.volume());
        Map<String, Cluster.StoreRef> stores = cluster.stores();
        List<StripeMap.Block> blocks = m.stripes().get(d.stripe()).blocks();
        TreeSet<Integer> lost = new TreeSet<>();
        for (int u : d.units()) {
            lost.add(u);
        }
        // Targets first, then the repairer whose ingress the repair's reads cross (as if it ran there).
        // A store may take a rebuilt block if it holds no surviving block of the stripe.
        Set<String> exclude = new HashSet<>();
        for (int u = 0; u < blocks.size(); u++) {
            if (!lost.contains(u)) {
                exclude.add(blocks.get(u).store());
            }
        }
        List<Cluster.StoreRef> chosen = chooseTargets(stores, lost.size(), exclude);
        Map<Integer, Cluster.StoreRef> targets = new HashMap<>();
        for (int u : lost) {
            targets.put(u, chosen.get(targets.size()));
        }
        Set<String> lostStores = new HashSet<>();
        lost.forEach(u -> lostStores.add(blocks.get(u).store()));
        String ingress = chooseRepairer(stores, chosen.get(0), lostStores).id();
        Set<Integer> unreadable = new TreeSet<>();
        Path dir;
        try {
            dir = SpoolDisk.tempDirectory(spoolDir, "hayloft-repair-v" + d.volume() + "-s" + d.stripe() + "-");
        } catch (IOException e) {
            chosen.forEach(t -> inFlight.get(t.id()).decrementAndGet());
            decoding.get(ingress).decrementAndGet();
            throw e;
        }
        try (ErasureCodec codec = ErasureCodec.create(CodecKind.fromWireName(m.codec()), m.k(), m.r())) {
            while (true) {
                Map<Integer, FileChannel> out = new HashMap<>();
                AtomicLong read = new AtomicLong();
                try {
                    for (int u : lost) {
                        out.put(u, SpoolDisk.get().open(dir.resolve("u" + u), StandardOpenOption.CREATE, StandardOpenOption.READ,
                                StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.DELETE_ON_CLOSE));
                    }
                    rebuild(codec, m, blocks, stores, lost, unreadable, ingress, out, read);
                    totalRead.addAndGet(read.get());
                    for (int u : lost) {
                        replace(m, d.stripe(), u, out.get(u), stores, blocks, targets.get(u), ingress);
                    }
                    return read.get();
                } catch (RangeFetch.SourcesFailed f) {
                    totalRead.addAndGet(read.get());
                    for (int u : f.units) {
                        if (lost.contains(u) || !unreadable.add(u)) {
                            throw f;
                        }
                    }
                    LOG.info("repair of volume {} stripe {}: units {} unreadable ({}); retrying without them", d.volume(),
                            d.stripe(), f.units, f.getMessage());
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
            SpoolDisk.get().deleteIfExists(dir);
            chosen.forEach(t -> inFlight.get(t.id()).decrementAndGet());
            decoding.get(ingress).decrementAndGet();
        }
    }

    /**
     * {@code n} targets outside {@code exclude}: the stores on racks the stripe does not use come
     * first (as {@link BlockPlacement} orders them), and within each group the stores with the
     * fewest repairs in flight, ties broken by a rotating start. Spreading targets by load, not by a
     * static rotation alone, keeps one target's ingress from becoming the straggler (FDS).
     */
    private synchronized List<Cluster.StoreRef> chooseTargets(Map<String, Cluster.StoreRef> stores, int n, Set<String> exclude) {
        long eligible = stores.values().stream().filter(s -> s.placeable() && !exclude.contains(s.id())).count();
        List<Cluster.StoreRef> ordered = BlockPlacement.choose(stores, (int) Math.max(n, eligible), rotation.getAndIncrement(), exclude);
        Set<String> usedRacks = new HashSet<>();
        exclude.forEach(id -> {
            Cluster.StoreRef s = stores.get(id);
            if (s != null) {
                usedRacks.add(s.rack());
            }
        });
        List<Cluster.StoreRef> out = new ArrayList<>();
        List<Cluster.StoreRef> left = new ArrayList<>(ordered);
        while (out.size() < n) {
            Cluster.StoreRef best = null;
            for (Cluster.StoreRef s : left) {
                if (best == null || better(s, best, usedRacks)) {
                    best = s;
                }
            }
            left.remove(best);
            usedRacks.add(best.rack());
            out.add(best);
            inFlight.computeIfAbsent(best.id(), id -> new AtomicInteger()).incrementAndGet();
        }
        return out;
    }

    /**
     * The store the repair is modelled to run on (its ingress carries the source reads): a healthy
     * store not holding one of the lost blocks, with the fewest repairs in flight there (decoding
     * plus receiving), {@code target} first on a tie (its upload is then local), then in a
     * per-repair pseudo-random order. Separate from the target so that a store which is the only
     * legal target of many stripes receives only their rebuilt blocks.
     */
    private synchronized Cluster.StoreRef chooseRepairer(Map<String, Cluster.StoreRef> stores, Cluster.StoreRef target,
                                                         Set<String> lostStores) {
        List<Cluster.StoreRef> order = new ArrayList<>();
        order.add(target);
        Set<String> skip = new HashSet<>(lostStores);
        skip.add(target.id());
        long others = stores.values().stream().filter(s -> s.placeable() && !skip.contains(s.id())).count();
        if (others > 0) {
            order.addAll(BlockPlacement.choose(stores, (int) others, rotation.getAndIncrement(), skip));
        }
        Cluster.StoreRef best = null;
        int bestLoad = Integer.MAX_VALUE;
        for (Cluster.StoreRef s : order) {
            // The target's own count includes this repair: it would receive the block either way.
            int l = load(s) - (s == target ? 1 : 0);
            if (l < bestLoad) {
                best = s;
                bestLoad = l;
            }
        }
        decoding.computeIfAbsent(best.id(), id -> new AtomicInteger()).incrementAndGet();
        return best;
    }

    /** New rack first, then fewer repairs in flight; earlier in rotation order wins ties (strictly better only). */
    private boolean better(Cluster.StoreRef s, Cluster.StoreRef best, Set<String> usedRacks) {
        boolean newRack = !usedRacks.contains(s.rack());
        boolean bestNewRack = !usedRacks.contains(best.rack());
        if (newRack != bestNewRack) {
            return newRack;
        }
        return load(s) < load(best);
    }

    /** Repairs in flight on a store's ingress: those it receives a block of, plus those it decodes. */
    private int load(Cluster.StoreRef s) {
        AtomicInteger n = inFlight.get(s.id());
        AtomicInteger d = decoding.get(s.id());
        return (n == null ? 0 : n.get()) + (d == null ? 0 : d.get());
    }

    /**
     * Rebuilds the lost units into {@code out} window by window: each window's source ranges (the
     * codec's plan for units of {@code substripes × window} bytes, mapped back to the blocks) are
     * fetched concurrently while the previous window decodes, so at most two windows are held.
     * Hitchhiker's couplings are position-wise, so a window of every substripe is a small stripe.
     */
    private void rebuild(ErasureCodec codec, StripeMap m, List<StripeMap.Block> blocks, Map<String, Cluster.StoreRef> stores,
                         Set<Integer> lost, Set<Integer> unreadable, String ingress, Map<Integer, FileChannel> out,
                         AtomicLong read) throws IOException {
        int sub = codec.substripes();
        long piece = m.blockSize() / sub;
        long window = Math.max(1, config.repairWindowBytes / sub);
        boolean single = lost.size() == 1 && unreadable.isEmpty();
        int lostUnit = lost.iterator().next();
        int[] others = unreadable.stream().mapToInt(Integer::intValue).toArray();
        TreeSet<Integer> all = new TreeSet<>(lost);
        all.addAll(unreadable);
        int[] erased = all.stream().mapToInt(Integer::intValue).toArray();
        // Every window's plan and offset map, first: when each (source, piece) is read contiguously
        // from window to window (every codec's plans are), one streamed GET per (source, piece) serves them all.
        long count = (piece + window - 1) / window;
        LongFunction<Map.Entry<List<ReadRange>, RangeFetch.OffsetMap>> windowAt = w -> {
            long x = w * window;
            long c = Math.min(window, piece - x);
            return Map.entry(single ? codec.planRepair(sub * c, lostUnit, others) : codec.planDecode(sub * c, erased),
                    RangeFetch.OffsetMap.window(piece, x, c));
        };
        // Planned up front only when there are not absurdly many windows (a tiny repairWindowBytes): ranged reads then.
        boolean stream = streamSources && count <= MAX_PLANNED_WINDOWS;
        List<Map.Entry<List<ReadRange>, RangeFetch.OffsetMap>> windows = new ArrayList<>();
        for (long w = 0; stream && w < count; w++) {
            windows.add(windowAt.apply(w));
        }
        SourceStreams streams = !stream ? null : SourceStreams.plan(piece, sub, windows, (u, start, length) -> {
            StripeMap.Block blk = blocks.get(u);
            Cluster.StoreRef ref = stores.get(blk.store());
            if (ref == null || !ref.up()) {
                throw new IOException("store " + blk.store() + " is down");
            }
            streamsOpened.incrementAndGet();
            return cluster.openBlock(ref.address(), blk.name(), start, length);
        }, new SourceStreams.Pacer() {
            @Override
            public long reserve(int unit, long bytes) {
                String src = blocks.get(unit).store();
                return src.equals(ingress) ? System.nanoTime() : throttle.reserve(src, ingress, bytes);
            }

            @Override
            public void release(int unit, long bytes) {
                String src = blocks.get(unit).store();
                if (!src.equals(ingress)) {
                    throttle.release(src, ingress, bytes);
                }
            }
        });
        RangeFetch next = null;
        long heldMax = 0;
        long decodedHere = 0;
        try {
            Map.Entry<List<ReadRange>, RangeFetch.OffsetMap> nextWindow = null;
            for (long w = 0; w < count; w++) {
                Map.Entry<List<ReadRange>, RangeFetch.OffsetMap> thisWindow = nextWindow != null ? nextWindow
                        : stream ? windows.get((int) w) : windowAt.apply(w);
                RangeFetch.OffsetMap map = thisWindow.getValue();
                RangeFetch current = next != null ? next : fetch(thisWindow, streams, blocks, stores, ingress, read);
                nextWindow = w + 1 >= count ? null : stream ? windows.get((int) w + 1) : windowAt.apply(w + 1);
                next = nextWindow == null ? null : fetch(nextWindow, streams, blocks, stores, ingress, read);
                // What this repair holds at most: the window being decoded and the next one in flight.
                heldMax = Math.max(heldMax, current.bytes() + (next == null ? 0 : next.bytes()));
                current.await();
                UnitWriter writer = (u, off, src) -> {
                    FileChannel ch = out.get(u);
                    if (ch != null) {
                        PositionalIo.writeFully(ch, src, map.toReal(off));
                    }
                };
                long size = sub * Math.min(window, piece - w * window);
                if (single) {
                    codec.repair(size, lostUnit, others, current.reader(), writer);
                } else {
                    codec.decode(size, erased, current.reader(), writer);
                }
                decodedHere += size * lost.size();
                decoded.addAndGet(size * lost.size());
                checkpoints.reached("window");
            }
            next = null;
            decodedHere = 0; // kept
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted repairing volume " + m.volume());
        } finally {
            decoded.addAndGet(-decodedHere); // a failed attempt: its windows will be decoded again
            if (next != null) {
                next.cancel();
            }
            if (streams != null) {
                streams.close();
            }
            maxHeld.accumulateAndGet(heldMax, Math::max);
        }
    }

    /** Starts fetching the sources of one window ({@code [x, x + c)} of every substripe): from the streams, or ranged GETs. */
    private RangeFetch fetch(Map.Entry<List<ReadRange>, RangeFetch.OffsetMap> window, SourceStreams streams,
                             List<StripeMap.Block> blocks, Map<String, Cluster.StoreRef> stores, String ingress,
                             AtomicLong read) {
        if (streams != null) {
            return new RangeFetch(window.getKey(), window.getValue(), streams.fetcher(), n -> {
                read.addAndGet(n);
                inFlightBytesRead.addAndGet(n);
                received.accept(n);
            });
        }
        return new RangeFetch(window.getKey(), window.getValue(), r -> {
            StripeMap.Block blk = blocks.get(r.unit());
            Cluster.StoreRef ref = stores.get(blk.store());
            if (ref == null || !ref.up()) {
                return CompletableFuture.failedFuture(new IOException("store " + blk.store() + " is down"));
            }
            if (ref.id().equals(ingress)) { // the repairer's own block: read locally, no link crossed
                return cluster.readBlockAsync(ref.address(), blk.name(), r.offset(), (int) r.length());
            }
            long wait = throttle.reserve(ref.id(), ingress, r.length()) - System.nanoTime();
            Executor paced = wait <= 0 ? Runnable::run : CompletableFuture.delayedExecutor(wait, TimeUnit.NANOSECONDS);
            return CompletableFuture.supplyAsync(() -> ref, paced)
                    .thenCompose(s -> cluster.readBlockAsync(s.address(), blk.name(), r.offset(), (int) r.length()))
                    .whenComplete((b, e) -> {
                        if (e != null) { // nothing carried: give the links their time back
                            throttle.release(ref.id(), ingress, r.length());
                        }
                    });
        }, n -> {
            read.addAndGet(n);
            inFlightBytesRead.addAndGet(n);
            received.accept(n);
        });
    }

    private void replace(StripeMap m, int stripe, int unit, FileChannel rebuilt, Map<String, Cluster.StoreRef> stores,
                         List<StripeMap.Block> blocks, Cluster.StoreRef target, String repairer) throws IOException {
        StripeMap.Block old = blocks.get(unit);
        String name = EncodeJob.blockName(m.volume(), m.job(), stripe, unit, generation(old.name()) + 1);
        if (!repairer.equals(target.id())) { // the rebuilt block crosses the repairer's egress and the target's ingress
            Throttle.pace(throttle.reserve(repairer, target.id(), m.blockSize()));
        }
        long crc = new EncodeJob(cluster, config, Checkpoints.NONE).upload(target.address(), name, rebuilt, m.blockSize());
        Cluster.BlockInfo listed = cluster.listBlocks(target.address()).get(name);
        if (listed == null || listed.length() != m.blockSize() || listed.crc32c() != crc) {
            throw new IOException("rebuilt block " + name + " on " + target.id() + " failed verification: " + listed);
        }
        totalWritten.addAndGet(m.blockSize());
        checkpoints.reached("rebuilt");
        cluster.replaceBlock(m.volume(), stripe, unit, old, new StripeMap.Block(target.id(), name, m.blockSize(), crc), epoch);
        checkpoints.reached("replaced");
        Cluster.StoreRef oldStore = stores.get(old.store());
        if (oldStore != null && oldStore.up()) {
            try {
                cluster.deleteBlock(oldStore.address(), old.name());
            } catch (IOException e) {
                LOG.info("old block {} on {} not deleted ({}); the orphan sweep will", old.name(), old.store(), e.toString());
            }
        }
        LOG.info("volume {} block {}/{} rebuilt on {} as {} (decoded on {})", m.volume(), stripe, unit, target.id(), name,
                repairer);
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
}
