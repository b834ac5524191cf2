package io.hayloft.raid;

import io.hayloft.cold.NeedleFormat;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.format.io.PositionalIo;
import io.hayloft.format.needle.Needle;
import io.hayloft.format.needle.Superblock;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.VolumeIndex;
import io.hayloft.format.wire.Wire;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Encodes one sealed volume into erasure-coded stripes. The protocol (docs/raid.md), with the
 * checkpoint each step reports:
 * <ol>
 *   <li>seal a replica and read its size; plan every block name and store; record the plan in the
 *       directory (volume → ENCODING) — {@code begun};</li>
 *   <li>per stripe, in parallel on the {@link JobRunner} ({@link StripeEncodeTask}): copy the
 *       {@code k} data blocks from the replica (through a local spool file per unit, bounded memory),
 *       compute the {@code r} parity blocks from the spool, upload all, return the candidate needle
 *       headers of the range — {@code stripe-N} as each finishes, any order; then walk the needle
 *       chain over the candidates ({@link #chain});</li>
 *   <li>check the index built from the encoded bytes against the replica's own index: every live
 *       (key, alt) at the same offset with the same size and CRC32C, the same live count (a
 *       difference aborts and rolls back, naming the needle, before any index block is written);</li>
 *   <li>write the needle index block on several stores — {@code index};</li>
 *   <li>list every target store and check each block's length and CRC32C — {@code verified};</li>
 *   <li>commit the stripe map and ERASURE_CODED in one directory batch — {@code committed};</li>
 *   <li>delete the replicas, then tell the directory — {@code dropped}.</li>
 * </ol>
 * An I/O failure before the commit rolls back: every planned block is deleted and the volume returns
 * to READ_ONLY. A crash leaves the plan in the directory; {@link RaidNode#recover()} finishes the
 * rollback, or the replica drop when the crash came after the commit.
 *
 * <p>Not thread-safe: one instance encodes one volume at a time (its stripes run on the runner's
 * threads; checkpoints are reported on the thread that called {@link #encode} or {@link #writeAll}).
 */
public final class EncodeJob {

    private static final Logger LOG = LoggerFactory.getLogger(EncodeJob.class);
    private static final SecureRandom RANDOM = new SecureRandom();

    /** What an encode did. */
    public record Result(int volume, String job, int stripes, long volumeBytes, long blockBytesWritten, long nanos) {
    }

    private final Cluster cluster;
    private final RaidConfig config;
    private final Checkpoints checkpoints;
    private final JobRunner runner;
    /** How the index block is written: {@link VolumeIndex#encode}; tests write older formats. */
    Function<VolumeIndex, byte[]> indexEncoder = VolumeIndex::encode;

    /** A job whose stripes run on a pool of {@code config.workers} threads made for each {@link #writeAll}. */
    public EncodeJob(Cluster cluster, RaidConfig config, Checkpoints checkpoints) {
        this(cluster, config, checkpoints, null);
    }

    /** A job whose stripes run on {@code runner} (null: a pool made for each {@link #writeAll}). */
    public EncodeJob(Cluster cluster, RaidConfig config, Checkpoints checkpoints, JobRunner runner) {
        this.cluster = cluster;
        this.config = config;
        this.checkpoints = checkpoints;
        this.runner = runner;
    }

    /**
     * Encodes volume {@code volumeId}, which must be READ_ONLY.
     *
     * @throws IllegalStateException when the volume is not READ_ONLY or the cluster has too few stores
     * @throws IOException when a replica or store fails (after rolling back what it wrote)
     */
    public Result encode(int volumeId) throws IOException {
        cluster.checkLease();
        long t0 = System.nanoTime();
        Set<String> failed = new HashSet<>();
        ReplicaSource.ReplicaFailedException last = null;
        while (true) {
            VolumeInfo v = cluster.volume(volumeId);
            if (!v.state().readOnly()) {
                VolumeState state = v.state();
                if (last != null) {
                    throw new IOException("volume " + volumeId + " is " + state + " after its encode from one replica failed; "
                            + "not started again", last);
                }
                throw new IllegalStateException("volume " + volumeId + " is " + state
                        + "; only a READ_ONLY volume can be encoded (mark it read-only first)");
            }
            Map<String, Cluster.StoreRef> stores = cluster.stores();
            List<String> replicas = new ArrayList<>();
            List<String> ids = new ArrayList<>(v.replicas());
            Collections.sort(ids); // the directory may list them in any order
            for (String id : ids) {
                Cluster.StoreRef s = stores.get(id);
                if (s != null && s.up() && !failed.contains(s.address())) {
                    replicas.add(s.address());
                }
            }
            if (replicas.isEmpty()) {
                throw new IOException("volume " + volumeId + ": no replica " + (failed.isEmpty() ? "" : "left ") + "is on a store that is up "
                        + "(replicas " + v.replicas() + (failed.isEmpty() ? "" : ", failed during this encode: " + failed) + ")", last);
            }
            // Every stripe comes from one replica: the one at (volume mod replicas) by store id, so the
            // encodes of many volumes spread over their holders.
            String replica = replicas.get(Math.floorMod(volumeId, replicas.size()));
            // A store whose replica failed takes no block of a new plan (it may be down).
            Map<String, Cluster.StoreRef> placeable = new LinkedHashMap<>(stores);
            placeable.values().removeIf(s -> failed.contains(s.address()));
            try {
                return encodeFrom(ReplicaSource.open(cluster, volumeId, replica), stores, placeable, t0);
            } catch (ReplicaSource.ReplicaFailedException e) {
                last = e;
                failed.add(e.replica());
                LOG.warn("volume {}: {}; starting the encode over from another replica", volumeId, e.getMessage());
            }
        }
    }

    /**
     * Steps 2-7 from one sealed replica. A failure of that replica ({@link ReplicaSource.ReplicaFailedException},
     * its reads failing or the replica changing under the encode) rolls the job back and aborts its plan
     * even when a block could not be deleted (the orphan sweep takes it), so the caller can start over
     * from another replica: the stripes already written hold this replica's bytes.
     *
     * @param stores    every store (addresses of the planned blocks)
     * @param placeable the stores the plan may place blocks on
     */
    private Result encodeFrom(ReplicaSource src, Map<String, Cluster.StoreRef> stores, Map<String, Cluster.StoreRef> placeable, long t0)
            throws IOException {
        int volumeId = src.volume();
        StripeMap plan = plan(volumeId, src.size(), placeable);
        cluster.beginEncoding(plan);
        checkpoints.reached("begun");
        StripeMap done;
        try {
            done = writeAll(plan, src, stores);
        } catch (IOException | RuntimeException e) {
            ReplicaSource.ReplicaFailedException replica = ReplicaSource.ReplicaFailedException.in(e);
            if (replica == null) {
                // a broken chain or a refused stripe may come from the replica changing under the encode
                try {
                    src.checkUnchanged();
                } catch (ReplicaSource.ReplicaFailedException changed) {
                    changed.addSuppressed(e);
                    replica = changed;
                }
            }
            LOG.warn("volume {}: encode job {} from the replica on {} failed ({}); rolling back", volumeId, plan.job(), src.replica(),
                    (replica != null ? replica : e).toString());
            try {
                RaidNode.rollback(cluster, plan, stores, replica != null);
            } catch (IOException rollback) {
                e.addSuppressed(rollback);
                throw e;
            }
            if (replica != null) {
                throw replica;
            }
            throw e;
        }
        commit(done, stores);
        checkpoints.reached("committed");
        RaidNode.dropReplicas(cluster, volumeId, stores);
        checkpoints.reached("dropped");
        long written = (long) done.stripes().size() * (config.k + config.r) * config.blockSize;
        LOG.info("volume {} encoded by job {} from the replica on {}: {} stripes, {} bytes", volumeId, plan.job(), src.replica(),
                done.stripes().size(), src.size());
        return new Result(volumeId, plan.job(), done.stripes().size(), src.size(), written, System.nanoTime() - t0);
    }

    /**
     * Step 6. When the directory's answer is lost, the commit may still have happened: the map is read
     * back, and only a map still planned is rolled back (a committed one must never lose its blocks);
     * when even that read fails, nothing is rolled back and {@link RaidNode#recover()} decides.
     */
    private void commit(StripeMap done, Map<String, Cluster.StoreRef> stores) throws IOException {
        try {
            cluster.commitEncoding(done);
        } catch (IOException e) {
            StripeMap now;
            try {
                now = cluster.stripeMap(done.volume());
            } catch (IOException unknown) {
                e.addSuppressed(unknown);
                LOG.warn("volume {}: the commit of job {} failed ({}) and its outcome is unknown; left to the next recovery", done.volume(),
                        done.job(), e.toString());
                throw e;
            }
            if (now != null && StripeMap.COMMITTED.equals(now.status()) && done.job().equals(now.job())) {
                LOG.info("volume {}: the answer to the commit of job {} was lost, but the directory committed it", done.volume(), done.job());
                return;
            }
            LOG.warn("volume {}: the commit of job {} failed ({}); rolling back", done.volume(), done.job(), e.toString());
            try {
                RaidNode.rollback(cluster, done, stores, false);
            } catch (IOException rollback) {
                e.addSuppressed(rollback);
            }
            throw e;
        }
    }

    /**
     * Writes every block of {@code plan} from {@code src} (data copied, parity computed, each block's
     * CRC32C recorded), then the needle index on its holders, and verifies every block from its
     * store's listing. Reports {@code stripe-N} as each stripe finishes (any order), then {@code index}
     * and {@code verified}.
     *
     * <p>The stripes are {@link StripeEncodeTask}s: with a {@link ReplicaSource} they run on this job's
     * {@link JobRunner} (Spark, say); any other source cannot leave this JVM and its stripes run on the
     * in-process pool (the runner's {@link JobRunner#runLocal}, or a pool of {@code workers} threads made
     * for the call when this job has no runner), its reads funnelled through one lock unless it is
     * {@link VolumeSource#threadSafe()}.
     *
     * @return the plan with every block's length and CRC32C and the index block filled in, still
     *         {@link StripeMap#PLANNED}: the caller commits it
     * @throws IOException when a source read, an upload or a verification fails, or the volume's needle
     *                     chain is broken; nothing is rolled back
     */
    public StripeMap writeAll(StripeMap plan, VolumeSource src, Map<String, Cluster.StoreRef> stores) throws IOException {
        return writeAll(plan, src, stores, src instanceof ReplicaSource rs ? againstReplica(rs) : built -> { });
    }

    /** Checks the index an encode built before anything is committed; throws naming the first difference. */
    @FunctionalInterface
    public interface IndexCheck {
        void check(VolumeIndex built) throws IOException;
    }

    /**
     * The encode's proof: the index built from the encoded bytes holds every live (key, alt) of the
     * replica's own index ({@code GET /admin/volumes/ID/index} on the one replica every stripe was cut
     * from) at the same offset, with the same data size and CRC32C, and no other live needle, except
     * needles the replica holds deleted at the same place whose key and cookie the volume's delete log
     * in the directory holds: a client's delete that reached the replica after the encode read the
     * needle (a client logs a delete before it deletes on the replicas, and cold reads and reclaim
     * honour the log). A needle deleted on the replica and not in the log still fails the proof. Then the
     * replica's size must still be the one the plan was made for: a sealed volume only shrinks, by a
     * compaction, which moves needles, so an unchanged size after the index was read means every stripe
     * saw the bytes the index describes; a changed one is a {@link ReplicaSource.ReplicaFailedException}
     * and the encode starts over.
     */
    IndexCheck againstReplica(ReplicaSource src) {
        return built -> {
            String replica = src.replica();
            VolumeIndex own;
            try {
                own = cluster.volumeIndex(replica, src.volume());
            } catch (IOException e) {
                throw new ReplicaSource.ReplicaFailedException(src.volume(), replica, "did not answer its index", e);
            }
            src.checkUnchanged();
            List<VolumeIndex.Entry> deletedSince = deletedSinceRead(built, own);
            Set<Long> logged = deletedSince.isEmpty() ? Set.of() : loggedWithOwnCookie(src, deletedSince);
            String diff = VolumeIndex.difference(own, withLoggedDeletes(built, logged), true);
            if (diff != null) {
                throw new IndexMismatchException("volume " + src.volume() + ": the encoded index does not match the replica on "
                        + replica + ": " + diff + "; encode aborted, the replicas are kept");
            }
        };
    }

    /** The needles live in {@code built} and deleted at the same offset in {@code source}. */
    static List<VolumeIndex.Entry> deletedSinceRead(VolumeIndex built, VolumeIndex source) {
        List<VolumeIndex.Entry> out = new ArrayList<>();
        for (int i = 0; i < built.size(); i++) {
            VolumeIndex.Entry e = built.entry(i);
            VolumeIndex.Entry s = e.deleted() ? null : source.find(e.key(), e.alt());
            if (s != null && s.deleted() && s.offset() == e.offset()) {
                out.add(e);
            }
        }
        return out;
    }

    /**
     * The offsets of the needles of {@code needles} whose (key, cookie) the volume's delete log holds,
     * the cookie read from the needle's header on the source replica (the log takes entries from
     * anyone: one with another cookie deletes nothing, as cold reads and reclaim also decide).
     */
    private Set<Long> loggedWithOwnCookie(ReplicaSource src, List<VolumeIndex.Entry> needles) throws IOException {
        Set<String> log = new HashSet<>();
        long after = 0;
        Wire.DeleteLog page;
        do {
            page = cluster.deleteLog(src.volume(), after, 10_000);
            for (Wire.DeleteEntry d : page.entries()) {
                after = Math.max(after, d.seq());
                try {
                    log.add(d.key() + "/" + Long.parseUnsignedLong(d.cookie(), 16));
                } catch (NumberFormatException | NullPointerException notACookie) {
                    // an entry no needle can match
                }
            }
        } while (page.more() && !page.entries().isEmpty());
        Set<Long> out = new HashSet<>();
        for (VolumeIndex.Entry e : needles) {
            long cookie = NeedleFormat.cookie(ByteBuffer.wrap(src.read(e.offset(), Needle.HEADER_SIZE)));
            if (log.contains(e.key() + "/" + cookie)) {
                out.add(e.offset());
            }
        }
        return out;
    }

    /**
     * {@code built} with the needles at {@code loggedOffsets} marked deleted: for the comparison only
     * (the index block keeps what the bytes say; cold reads honour the log).
     */
    static VolumeIndex withLoggedDeletes(VolumeIndex built, Set<Long> loggedOffsets) {
        if (loggedOffsets.isEmpty()) {
            return built;
        }
        List<VolumeIndex.Entry> out = new ArrayList<>(built.size());
        for (int i = 0; i < built.size(); i++) {
            VolumeIndex.Entry e = built.entry(i);
            if (!e.deleted() && loggedOffsets.contains(e.offset())) {
                e = new VolumeIndex.Entry(e.key(), e.alt(), e.flags() | VolumeIndex.FLAG_DELETED, e.offset(), e.length(), e.dataSize(),
                        e.crc32c());
            }
            out.add(e);
        }
        return VolumeIndex.of(built.volume(), out);
    }

    /** What an encode or reclaim built does not hold what its source held: nothing may be committed. */
    public static final class IndexMismatchException extends IOException {
        public IndexMismatchException(String message) {
            super(message);
        }
    }

    /** The volume's needles do not chain from the superblock to its end: not a clean sealed volume, so it is not encoded. */
    public static final class NotCleanVolumeException extends IOException {
        public NotCleanVolumeException(String message) {
            super(message);
        }
    }

    /**
     * As {@link #writeAll(StripeMap, VolumeSource, Map)}, with {@code check} run on the built index
     * before the index block is written: a failed check fails the job before anything is committed.
     */
    public StripeMap writeAll(StripeMap plan, VolumeSource src, Map<String, Cluster.StoreRef> stores, IndexCheck check)
            throws IOException {
        long size = src.size();
        int n = plan.k() + plan.r();
        List<StripeEncodeTask> tasks = new ArrayList<>();
        ReplicaSource.Spec spec = src instanceof ReplicaSource rs ? rs.spec() : null;
        for (StripeMap.Stripe s : plan.stripes()) {
            List<StripeEncodeTask.Target> targets = new ArrayList<>(n);
            for (StripeMap.Block b : s.blocks()) {
                Cluster.StoreRef ref = stores.get(b.store());
                if (ref == null) {
                    throw new IOException("block " + b.name() + " is planned on store " + b.store() + ", which the directory does not list");
                }
                targets.add(new StripeEncodeTask.Target(b.store(), ref.address(), b.name()));
            }
            tasks.add(new StripeEncodeTask(config, plan.volume(), plan.job(), plan.codec(), plan.k(), plan.r(), plan.blockSize(),
                    size, s.index(), targets, spec));
        }
        StripeMap.Stripe[] written = new StripeMap.Stripe[tasks.size()];
        Map<Long, VolumeIndex.Entry> candidates = new HashMap<>();
        JobRunner.Completion<StripeEncodeTask.Result> onDone = (i, r) -> {
            StripeMap.Stripe planned = plan.stripes().get(i);
            List<StripeMap.Block> blocks = new ArrayList<>(n);
            for (int u = 0; u < n; u++) {
                StripeMap.Block b = planned.blocks().get(u);
                blocks.add(new StripeMap.Block(b.store(), b.name(), plan.blockSize(), r.crc32c()[u]));
            }
            written[i] = new StripeMap.Stripe(planned.index(), blocks);
            r.candidates().forEach(e -> candidates.putIfAbsent(e.offset(), e));
            checkpoints.reached("stripe-" + planned.index());
        };
        runStripes(tasks, src, spec != null, onDone);
        List<VolumeIndex.Entry> entries = chain(plan.volume(), size, candidates);
        VolumeIndex built = VolumeIndex.of(plan.volume(), entries);
        check.check(built);
        byte[] index = indexEncoder.apply(built);
        for (String holder : plan.index().holders()) {
            cluster.putBlock(stores.get(holder).address(), plan.index().name(), index);
        }
        StripeMap done = new StripeMap(plan.volume(), plan.job(), plan.codec(), plan.k(), plan.r(), plan.blockSize(), size,
                StripeMap.PLANNED, List.of(written), new StripeMap.IndexBlock(plan.index().name(), plan.index().holders(),
                index.length, crc(index, 0, index.length)));
        checkpoints.reached("index");
        verify(done, stores);
        checkpoints.reached("verified");
        return done;
    }

    private void runStripes(List<StripeEncodeTask> tasks, VolumeSource src, boolean shippable,
                            JobRunner.Completion<StripeEncodeTask.Result> onDone) throws IOException {
        try {
            if (shippable && runner != null) {
                runner.run(tasks, onDone);
                return;
            }
            VolumeSource shared = src.threadSafe() ? src : new LockedSource(src);
            List<Callable<StripeEncodeTask.Result>> local = new ArrayList<>();
            for (StripeEncodeTask t : tasks) {
                local.add(() -> t.run(cluster, shared));
            }
            if (runner != null) {
                runner.runLocal(local, onDone);
            } else {
                try (ThreadPoolRunner pool = new ThreadPoolRunner(config.workers)) {
                    pool.runLocal(local, onDone);
                }
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("volume " + src.volume() + ": encode interrupted", e);
        } catch (Exception e) {
            throw new IOException("volume " + src.volume() + ": a stripe task failed: " + e, e);
        }
    }

    /**
     * Walks the needle chain from the superblock over the stripes' candidate headers: each needle
     * starts where the previous one ends, so false candidates inside photo data are never visited.
     *
     * @throws NotCleanVolumeException when the chain reaches an offset with no header before the end of the volume
     */
    static List<VolumeIndex.Entry> chain(int volume, long size, Map<Long, VolumeIndex.Entry> candidates) throws IOException {
        List<VolumeIndex.Entry> out = new ArrayList<>();
        long cursor = Superblock.SIZE;
        while (cursor < size) {
            VolumeIndex.Entry e = candidates.get(cursor);
            if (e == null || e.length() < Needle.HEADER_SIZE + Needle.FOOTER_SIZE) {
                throw new NotCleanVolumeException("volume " + volume + " is not a clean sealed volume: no needle (header and footer) at volume offset "
                        + cursor + (e == null ? "" : " (data size " + e.dataSize() + ")"));
            }
            out.add(e);
            cursor += e.length();
        }
        return out;
    }

    /** A source read by one thread at a time. */
    private record LockedSource(VolumeSource inner) implements VolumeSource {
        @Override
        public int volume() {
            return inner.volume();
        }

        @Override
        public long size() {
            return inner.size();
        }

        @Override
        public synchronized byte[] read(long offset, int length) throws IOException {
            return inner.read(offset, length);
        }
    }

    /**
     * Plans a new job for a volume of {@code size} bytes with this job's codec, shape and block size:
     * a fresh job id, every block's name and store (k + r distinct stores per stripe, distinct racks
     * while racks remain), and the index holders.
     */
    public StripeMap plan(int volumeId, long size, Map<String, Cluster.StoreRef> stores) {
        String job = String.format(Locale.ROOT, "%08x", RANDOM.nextInt());
        int n = config.k + config.r;
        long blocks = Math.max(1, (size + config.blockSize - 1) / config.blockSize);
        int stripes = (int) ((blocks + config.k - 1) / config.k);
        List<StripeMap.Stripe> out = new ArrayList<>();
        for (int s = 0; s < stripes; s++) {
            List<Cluster.StoreRef> chosen = BlockPlacement.choose(stores, n, volumeId * 7 + s * n, new HashSet<>());
            List<StripeMap.Block> bs = new ArrayList<>();
            for (int u = 0; u < n; u++) {
                bs.add(new StripeMap.Block(chosen.get(u).id(), blockName(volumeId, job, s, u, 0), 0, 0));
            }
            out.add(new StripeMap.Stripe(s, bs));
        }
        List<String> holders = BlockPlacement.choose(stores, Math.min(config.indexReplicas, n), volumeId * 3, new HashSet<>())
                .stream().map(Cluster.StoreRef::id).toList();
        return new StripeMap(volumeId, job, config.codecKind().wireName(), config.k, config.r, config.blockSize, size,
                StripeMap.PLANNED, out, new StripeMap.IndexBlock("v" + volumeId + "-" + job + "-index", holders, 0, 0));
    }

    static String blockName(int volume, String job, int stripe, int unit, int generation) {
        return "v" + volume + "-" + job + "-s" + stripe + "-u" + unit + (generation == 0 ? "" : "-g" + generation);
    }

    /** Streams a spooled block to its store in transfer-sized appends; returns its CRC32C. */
    long upload(String store, String name, FileChannel from, long length) throws IOException {
        return StripeEncodeTask.upload(cluster, config.transferBytes, store, name, from, length);
    }

    private void verify(StripeMap map, Map<String, Cluster.StoreRef> stores) throws IOException {
        Map<String, List<StripeMap.Block>> byStore = new HashMap<>();
        for (StripeMap.Block b : map.allBlocks()) {
            byStore.computeIfAbsent(b.store(), x -> new ArrayList<>()).add(b);
        }
        for (Map.Entry<String, List<StripeMap.Block>> e : byStore.entrySet()) {
            Map<String, Cluster.BlockInfo> listed = cluster.listBlocks(stores.get(e.getKey()).address());
            for (StripeMap.Block b : e.getValue()) {
                Cluster.BlockInfo got = listed.get(b.name());
                if (got == null || got.length() != b.length() || got.crc32c() != b.crc32c()) {
                    throw new IOException("block " + b.name() + " on store " + b.store() + " failed verification: expected "
                            + b.length() + " bytes with CRC32C " + b.crc32c() + ", store lists " + got);
                }
            }
        }
    }

    static long crc(byte[] b, int off, int len) {
        CRC32C c = new CRC32C();
        c.update(b, off, len);
        return c.getValue();
    }
}
