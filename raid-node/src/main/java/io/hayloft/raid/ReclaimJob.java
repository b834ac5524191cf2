package io.hayloft.raid;

import io.hayloft.cold.ColdReader;
import io.hayloft.cold.NeedleFormat;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.format.io.PositionalIo;
import io.hayloft.format.needle.Superblock;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.VolumeIndex;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Re-encodes an erasure-coded volume without its dead needles (docs/raid.md "Reclaim"). A needle is
 * dead when the sealed volume flagged it deleted, a later needle of the same (key, alt) overwrote it
 * (it is not in the needle index), or the directory says its photo is deleted (or unknown, or on
 * another volume: {@code POST /v1/volumes/<id>/dead-keys}). The protocol, with its checkpoints:
 * <ol>
 *   <li>survey: the committed map and needle index, the directory's dead keys; below the threshold
 *       nothing happens;</li>
 *   <li>copy the superblock and every live needle, verbatim and in volume order, from the cold blocks
 *       (degraded reads allowed, each needle's CRC checked) into a local spool file: a compacted
 *       volume image — {@code compacted};</li>
 *   <li>plan a new job for the image with the volume's codec, shape and block size, and record it in
 *       the directory as a pending reclaim beside the committed map, before any block is written —
 *       {@code reclaim-begun};</li>
 *   <li>{@link EncodeJob#writeAll}: every block, the index, verification (its own checkpoints);</li>
 *   <li>swap the committed map for the new one, compare-and-set on the old job id — {@code swapped};</li>
 *   <li>delete the old blocks and index copies — {@code old-deleted}.</li>
 * </ol>
 * The volume stays readable from its committed map throughout. An I/O failure before the swap rolls
 * back (the new blocks deleted, the plan dropped); a crash leaves the plan, which
 * {@link RaidNode#recover()} rolls back, or, after the swap, unreferenced old blocks that the orphan
 * sweep deletes.
 *
 * <p>Block image of the spool file: the format of a sealed volume (docs/formats.md "Store server
 * volumes"), the 32-byte superblock copied from the old image, then the live needles back to back;
 * each keeps its 8-byte-aligned length, so every needle starts 8-aligned.
 *
 * <p>Not thread-safe: one instance reclaims one volume on one thread.
 */
public final class ReclaimJob {

    private static final Logger LOG = LoggerFactory.getLogger(ReclaimJob.class);

    /**
     * Dead and live bytes of a coded volume.
     *
     * @param volumeBytes  bytes of the encoded volume image (superblock included)
     * @param liveBytes    bytes of the needles a reclaim would keep
     * @param deadBytes    {@code volumeBytes - 32 - liveBytes}: deleted and overwritten needles
     * @param liveNeedles  needles a reclaim would keep
     * @param deadNeedles  needles of the index that are dead (overwritten ones are not in the index)
     */
    public record Survey(int volume, String job, int stripes, long volumeBytes, long liveBytes, long deadBytes,
                         int liveNeedles, int deadNeedles) {
        /** Dead bytes as a fraction of the volume's bytes. */
        public double deadFraction() {
            return volumeBytes == 0 ? 0 : (double) deadBytes / volumeBytes;
        }
    }

    /**
     * What a reclaim did. {@code reclaimed} is false when the volume was under the threshold; then
     * only the survey fields mean anything.
     */
    public record Result(Survey before, boolean reclaimed, String newJob, int newStripes, long newVolumeBytes,
                         long blockBytesFreed, int oldBlocksDeleted, long nanos) {
    }

    private final Cluster cluster;
    private final RaidConfig config;
    private final Checkpoints checkpoints;
    private final Path spoolDir;
    private int runReads;

    public ReclaimJob(Cluster cluster, RaidConfig config, Checkpoints checkpoints) {
        this.cluster = cluster;
        this.config = config;
        this.checkpoints = checkpoints;
        this.spoolDir = Path.of(config.spoolDir == null ? System.getProperty("java.io.tmpdir") : config.spoolDir);
    }

    /** The survey with the live needles, in volume order. */
    private record Scan(Survey survey, StripeMap map, List<VolumeIndex.Entry> live) {
    }

    /**
     * Dead and live bytes of coded volume {@code volume}: reads its needle index (through
     * {@code cold}'s cache), asks the directory which of its keys are in the delete log, and reads
     * the needles of those keys to compare their cookies with the log's.
     */
    public static Survey survey(Cluster cluster, ColdReader cold, int volume) throws IOException {
        return scan(cluster, cold, volume).survey();
    }

    private static Scan scan(Cluster cluster, ColdReader cold, int volume) throws IOException {
        StripeMap map = cold.committedMap(volume);
        VolumeIndex index = cold.index(volume);
        if (!index.hasCrcs()) {
            throw new IllegalStateException("volume " + volume + " has a needle index of format version " + index.version()
                    + ", built before indexes were exact (it may lack needles whose (key, alt) collided); "
                    + "reclaim refuses it, since it would drop such needles for good: run 'hayloft raid reindex " + volume
                    + "' first");
        }
        List<VolumeIndex.Entry> entries = index.entries();
        Set<Long> keys = new HashSet<>();
        for (VolumeIndex.Entry e : entries) {
            if (!e.deleted()) {
                keys.add(e.key());
            }
        }
        Set<Long> dead = keys.isEmpty() ? Set.of() : cluster.deadKeys(volume, keys);
        List<VolumeIndex.Entry> live = new ArrayList<>();
        long liveBytes = 0;
        for (VolumeIndex.Entry e : entries) {
            // A key in the delete log is dead only with the needle's own cookie: the log takes entries
            // from any client, so one with a wrong cookie must not drop a live photo.
            if (!e.deleted() && !(dead.contains(e.key()) && cold.deletedByLog(volume, e))) {
                live.add(e);
                liveBytes += e.length();
            }
        }
        live.sort(Comparator.comparingLong(VolumeIndex.Entry::offset));
        long deadBytes = map.volumeBytes() - Superblock.SIZE - liveBytes;
        Survey s = new Survey(volume, map.job(), map.stripes().size(), map.volumeBytes(), liveBytes, deadBytes, live.size(),
                entries.size() - live.size());
        return new Scan(s, map, live);
    }

    /**
     * Reclaims {@code volume} if more than {@code threshold} of its bytes are dead.
     *
     * @throws IllegalStateException when the volume is not erasure-coded
     * @throws IllegalArgumentException when the threshold is not in [0, 1)
     * @throws IOException when a read, write or directory step fails (after rolling back what it wrote)
     */
    public Result reclaim(int volume, double threshold) throws IOException {
        if (!(threshold >= 0 && threshold < 1)) {
            throw new IllegalArgumentException("reclaim threshold must be in [0, 1), was " + threshold);
        }
        cluster.checkLease();
        long t0 = System.nanoTime();
        VolumeState state = cluster.volume(volume).state();
        if (!state.coded()) {
            throw new IllegalStateException("volume " + volume + " is " + state + "; only an erasure-coded volume can be reclaimed");
        }
        try (ColdReader cold = new ColdReader(cluster)) {
            Scan scan = scan(cluster, cold, volume);
            Survey s = scan.survey();
            if (s.deadFraction() <= threshold) {
                LOG.info("volume {}: {} of {} bytes dead ({}), not over the reclaim threshold {}", volume, s.deadBytes(),
                        s.volumeBytes(), String.format(Locale.ROOT, "%.3f", s.deadFraction()), threshold);
                return new Result(s, false, null, s.stripes(), s.volumeBytes(), 0, 0, System.nanoTime() - t0);
            }
            return withImage(volume, ch -> {
                long size = compact(cold, volume, scan.live(), ch);
                checkpoints.reached("compacted");
                return encodeAndSwap(scan, new ImageSource(volume, ch, size), t0);
            });
        }
    }

    /** Work on a reclaim image: a spool file deleted afterwards, whatever happens. */
    @FunctionalInterface
    private interface ImageWork {
        Result run(FileChannel image) throws IOException;
    }

    private Result withImage(int volume, ImageWork work) throws IOException {
        Path image = SpoolDisk.tempFile(spoolDir, "hayloft-reclaim-v" + volume + "-", ".img");
        try (FileChannel ch = SpoolDisk.get().open(image, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            return work.run(ch);
        } finally {
            SpoolDisk.get().deleteIfExists(image);
        }
    }

    /**
     * Writes the superblock and every live needle into {@code ch}; returns the image's size. Live
     * needles that follow one another in the old volume are read together, up to {@code
     * transferBytes} a read (one request per block they cross instead of one per needle), and each is
     * checked (magic, CRC32C, key, alt) within the run; one that fails is read again on its own,
     * which rebuilds it around a corrupt block. A needle longer than a run is read alone.
     */
    private long compact(ColdReader cold, int volume, List<VolumeIndex.Entry> live, FileChannel ch) throws IOException {
        long at = 0;
        at += write(ch, cold.rawRange(volume, 0, Superblock.SIZE), at);
        int i = 0;
        while (i < live.size()) {
            VolumeIndex.Entry first = live.get(i);
            long start = first.offset();
            long end = start + first.length();
            int j = i;
            while (j + 1 < live.size() && live.get(j + 1).offset() == end
                    && end - start + live.get(j + 1).length() <= config.transferBytes) {
                j++;
                end += live.get(j).length();
            }
            if (j == i) {
                at += write(ch, cold.rawNeedle(volume, first), at);
                i++;
                continue;
            }
            byte[] run = cold.rawRange(volume, start, (int) (end - start));
            runReads++;
            for (int n = i; n <= j; n++) {
                VolumeIndex.Entry e = live.get(n);
                ByteBuffer needle = ByteBuffer.wrap(run, (int) (e.offset() - start), (int) e.length());
                try {
                    NeedleFormat.check(needle, e.key(), e.alt());
                    PositionalIo.writeFully(ch, ByteBuffer.wrap(run, (int) (e.offset() - start), (int) e.length()), at);
                    at += e.length();
                } catch (NeedleFormat.CorruptNeedleException corrupt) {
                    LOG.info("volume {}: needle {} failed its check in a run read ({}); reading it alone", volume, e.key(),
                            corrupt.getMessage());
                    at += write(ch, cold.rawNeedle(volume, e), at);
                }
            }
            i = j + 1;
        }
        return at;
    }

    /** Reads of runs of several live needles by this job's compactions (for tests). */
    int runReads() {
        return runReads;
    }

    /**
     * Rebuilds the needle index of coded volume {@code volume} from its own stripes: copies the whole
     * encoded volume image from the cold blocks (degraded reads allowed) into a spool file and
     * re-encodes it through the reclaim protocol (pending plan, blocks, swap, old blocks deleted), so
     * the new job's index is exact. For volumes whose index is format version 1, which may lack
     * needles whose (key, alt) collided: those needles become readable again. Before the swap the
     * new index must hold every live needle of the old one at the same offset with the same data
     * size (and CRC32C when the old index has them); the needles it adds are counted and logged.
     */
    public Result reindex(int volume) throws IOException {
        cluster.checkLease();
        long t0 = System.nanoTime();
        VolumeState state = cluster.volume(volume).state();
        if (!state.coded()) {
            throw new IllegalStateException("volume " + volume + " is " + state + "; only an erasure-coded volume can be reindexed");
        }
        try (ColdReader cold = new ColdReader(cluster)) {
            StripeMap map = cold.committedMap(volume);
            VolumeIndex old = cold.index(volume);
            Survey s = new Survey(volume, map.job(), map.stripes().size(), map.volumeBytes(), 0, 0, old.liveCount(),
                    old.size() - old.liveCount());
            Scan scan = new Scan(s, map, List.of());
            return withImage(volume, ch -> {
                long at = 0;
                while (at < map.volumeBytes()) {
                    int n = (int) Math.min(config.transferBytes, map.volumeBytes() - at);
                    at += write(ch, cold.rawRange(volume, at, n), at);
                }
                checkpoints.reached("compacted");
                int[] added = {0};
                Result r = encodeAndSwap(scan, new ImageSource(volume, ch, at), t0, built -> {
                    String diff = VolumeIndex.difference(old, built, true, false);
                    if (diff != null) {
                        throw new EncodeJob.IndexMismatchException("volume " + volume + ": the rebuilt index does not hold "
                                + "every needle of the old index as it was: " + diff + "; reindex aborted");
                    }
                    added[0] = built.liveCount() - old.liveCount();
                });
                LOG.info("volume {} reindexed: index version {} → {}, {} live needles, {} of them missing from the old index",
                        volume, old.version(), VolumeIndex.VERSION, old.liveCount() + added[0], added[0]);
                return r;
            });
        }
    }

    private Result encodeAndSwap(Scan scan, ImageSource src, long t0) throws IOException {
        VolumeIndex expected = VolumeIndex.of(scan.map().volume(), scan.live());
        return encodeAndSwap(scan, src, t0, built -> {
            String diff = VolumeIndex.difference(expected, built, false);
            if (diff != null) {
                throw new EncodeJob.IndexMismatchException("volume " + scan.map().volume() + ": the reclaimed index does not "
                        + "hold every live needle of job " + scan.map().job() + ": " + diff
                        + "; reclaim aborted, the old stripes are kept");
            }
        });
    }

    private Result encodeAndSwap(Scan scan, ImageSource src, long t0, EncodeJob.IndexCheck check) throws IOException {
        StripeMap old = scan.map();
        int volume = old.volume();
        EncodeJob enc = new EncodeJob(cluster, shapeOf(old), checkpoints);
        Map<String, Cluster.StoreRef> stores = cluster.stores();
        StripeMap plan = enc.plan(volume, src.size(), stores);
        cluster.beginReclaim(plan, old.job());
        checkpoints.reached("reclaim-begun");
        StripeMap replaced;
        StripeMap done;
        try {
            done = enc.writeAll(plan, src, stores, check);
            replaced = cluster.commitReclaim(done, old.job());
        } catch (IOException | RuntimeException e) {
            StripeMap now = cluster.stripeMap(volume);
            if (now != null && now.job().equals(plan.job())) {
                done = now; // the swap landed but its answer was lost
                replaced = old;
            } else {
                LOG.warn("volume {}: reclaim job {} failed ({}); rolling back", volume, plan.job(), e.toString());
                RaidNode.rollbackReclaim(cluster, plan, stores);
                throw e;
            }
        }
        checkpoints.reached("swapped");
        int deleted = 0;
        for (StripeMap.Block b : (replaced == null ? old : replaced).allBlocks()) {
            Cluster.StoreRef ref = stores.get(b.store());
            try {
                if (ref == null) {
                    throw new IOException("store " + b.store() + " is unknown");
                }
                cluster.deleteBlock(ref.address(), b.name());
                deleted++;
            } catch (IOException e) {
                LOG.warn("volume {}: old block {} on {} not deleted ({}); the orphan sweep will", volume, b.name(), b.store(),
                        e.toString());
            }
        }
        checkpoints.reached("old-deleted");
        long freed = blockBytes(old) - blockBytes(done);
        LOG.info("volume {} reclaimed by job {} (was {}): {} → {} bytes, {} → {} stripes, {} block bytes freed", volume,
                done.job(), old.job(), old.volumeBytes(), src.size(), old.stripes().size(), done.stripes().size(), freed);
        return new Result(scan.survey(), true, done.job(), done.stripes().size(), src.size(), freed, deleted,
                System.nanoTime() - t0);
    }

    /**
     * Deletes compacted images a killed raid-node left in the spool directory (a running job's open
     * image keeps working: the file is only unlinked).
     */
    static void deleteStaleImages(RaidConfig config) {
        Path dir = Path.of(config.spoolDir == null ? System.getProperty("java.io.tmpdir") : config.spoolDir);
        try {
            for (String name : SpoolDisk.get().list(dir)) {
                if (name.startsWith("hayloft-reclaim-v") && name.endsWith(".img")) {
                    SpoolDisk.get().deleteIfExists(dir.resolve(name));
                    LOG.info("deleted stale reclaim image {}", dir.resolve(name));
                }
            }
        } catch (IOException e) {
            LOG.warn("cannot clean reclaim images in {} ({})", dir, e.toString());
        }
    }

    /** Bytes of every block a map names, index copies included. */
    static long blockBytes(StripeMap m) {
        return m.allBlocks().stream().mapToLong(StripeMap.Block::length).sum();
    }

    /** This job's settings with the old map's codec, shape and block size: a reclaim keeps the volume's code. */
    private RaidConfig shapeOf(StripeMap old) {
        RaidConfig c = new RaidConfig();
        c.directory = config.directory;
        c.adminToken = config.adminToken;
        c.codec = old.codec();
        c.k = old.k();
        c.r = old.r();
        c.blockSize = old.blockSize();
        c.transferBytes = config.transferBytes;
        c.indexReplicas = config.indexReplicas;
        c.requestTimeoutMillis = config.requestTimeoutMillis;
        c.workers = config.workers;
        c.spoolDir = config.spoolDir;
        c.encodeAt = config.encodeAt;
        c.tlsFrom(config);
        return c.validate();
    }

    private static int write(FileChannel ch, byte[] bytes, long at) throws IOException {
        PositionalIo.writeFully(ch, ByteBuffer.wrap(bytes), at);
        return bytes.length;
    }

    /** The compacted image in the spool file. Thread-safe: positional reads only. */
    private record ImageSource(int volume, FileChannel ch, long size) implements VolumeSource {
        @Override
        public byte[] read(long offset, int length) throws IOException {
            if (offset < 0 || length < 0 || offset + length > size) {
                throw new IOException("read of " + length + " bytes at " + offset + " outside the " + size
                        + "-byte compacted image of volume " + volume);
            }
            ByteBuffer b = ByteBuffer.allocate(length);
            PositionalIo.readFully(ch, b, offset);
            return b.array();
        }
    }
}
