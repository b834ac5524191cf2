package io.hayloft.raid;

import io.hayloft.common.wire.StripeMap;
import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Encodes one sealed volume into erasure-coded stripes. The protocol (docs/raid.md), with the
 * checkpoint each step reports:
 * <ol>
 *   <li>seal a replica and read its size; plan every block name and store; record the plan in the
 *       directory (volume → ENCODING) — {@code begun};</li>
 *   <li>per stripe: copy the {@code k} data blocks from the replica (through a local spool file per
 *       unit, bounded memory), compute the {@code r} parity blocks from the spool, upload all —
 *       {@code stripe-N};</li>
 *   <li>write the needle index block on several stores — {@code index};</li>
 *   <li>list every target store and check each block's length and CRC32C — {@code verified};</li>
 *   <li>commit the stripe map and ERASURE_CODED in one directory batch — {@code committed};</li>
 *   <li>delete the replicas, then tell the directory — {@code dropped}.</li>
 * </ol>
 * An I/O failure before the commit rolls back: every planned block is deleted and the volume returns
 * to READ_ONLY. A crash leaves the plan in the directory; {@link RaidNode#recover()} finishes the
 * rollback, or the replica drop when the crash came after the commit.
 *
 * <p>Not thread-safe: one instance encodes one volume on one thread.
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
    private final Path spoolDir;
    private VolumeSource source;
    private long cursor = NeedleFormat.SUPERBLOCK_SIZE;
    private final List<VolumeIndex.Entry> entries = new ArrayList<>();

    public EncodeJob(Cluster cluster, RaidConfig config, Checkpoints checkpoints) {
        this.cluster = cluster;
        this.config = config;
        this.checkpoints = checkpoints;
        this.spoolDir = Path.of(config.spoolDir == null ? System.getProperty("java.io.tmpdir") : config.spoolDir);
    }

    /**
     * Encodes volume {@code volumeId}, which must be READ_ONLY.
     *
     * @throws IllegalStateException when the volume is not READ_ONLY or the cluster has too few stores
     * @throws IOException when a replica or store fails (after rolling back what it wrote)
     */
    public Result encode(int volumeId) throws IOException {
        long t0 = System.nanoTime();
        JsonNode v = cluster.volume(volumeId);
        if (!"READ_ONLY".equals(v.get("state").asText())) {
            throw new IllegalStateException("volume " + volumeId + " is " + v.get("state").asText()
                    + "; only a READ_ONLY volume can be encoded (mark it read-only first)");
        }
        Map<String, Cluster.StoreRef> stores = cluster.stores();
        List<String> replicas = new ArrayList<>();
        for (JsonNode id : v.get("replicas")) {
            Cluster.StoreRef s = stores.get(id.asText());
            if (s != null && s.up()) {
                replicas.add(s.address());
            }
        }
        ReplicaSource src = ReplicaSource.open(cluster, volumeId, replicas);
        StripeMap plan = plan(volumeId, src.size(), stores);
        cluster.beginEncoding(plan);
        checkpoints.reached("begun");
        StripeMap done;
        try {
            done = writeAll(plan, src, stores);
            cluster.commitEncoding(done);
        } catch (IOException | RuntimeException e) {
            LOG.warn("volume {}: encode job {} failed ({}); rolling back", volumeId, plan.job(), e.toString());
            RaidNode.rollback(cluster, plan, stores);
            throw e;
        }
        checkpoints.reached("committed");
        RaidNode.dropReplicas(cluster, volumeId, stores);
        checkpoints.reached("dropped");
        long written = (long) done.stripes().size() * (config.k + config.r) * config.blockSize;
        LOG.info("volume {} encoded by job {}: {} stripes, {} bytes", volumeId, plan.job(), done.stripes().size(), src.size());
        return new Result(volumeId, plan.job(), done.stripes().size(), src.size(), written, System.nanoTime() - t0);
    }

    /**
     * Writes every block of {@code plan} from {@code src} (data copied, parity computed, each block's
     * CRC32C recorded), then the needle index on its holders, and verifies every block from its
     * store's listing. Reports {@code stripe-N}, {@code index} and {@code verified}.
     *
     * @return the plan with every block's length and CRC32C and the index block filled in, still
     *         {@link StripeMap#PLANNED}: the caller commits it
     * @throws IOException when a source read, an upload or a verification fails; nothing is rolled back
     */
    public StripeMap writeAll(StripeMap plan, VolumeSource src, Map<String, Cluster.StoreRef> stores) throws IOException {
        this.source = src;
        this.cursor = NeedleFormat.SUPERBLOCK_SIZE;
        this.entries.clear();
        long size = src.size();
        try (ErasureCodec codec = ErasureCodec.create(CodecKind.fromWireName(plan.codec()), plan.k(), plan.r())) {
            List<StripeMap.Stripe> written = new ArrayList<>();
            for (StripeMap.Stripe s : plan.stripes()) {
                written.add(writeStripe(codec, plan, s, size, stores));
                checkpoints.reached("stripe-" + s.index());
            }
            byte[] index = VolumeIndex.of(plan.volume(), entries).encode();
            for (String holder : plan.index().holders()) {
                cluster.putBlock(stores.get(holder).address(), plan.index().name(), index);
            }
            StripeMap done = new StripeMap(plan.volume(), plan.job(), plan.codec(), plan.k(), plan.r(), plan.blockSize(), size,
                    StripeMap.PLANNED, written, new StripeMap.IndexBlock(plan.index().name(), plan.index().holders(),
                    index.length, crc(index, 0, index.length)));
            checkpoints.reached("index");
            verify(done, stores);
            checkpoints.reached("verified");
            return done;
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

    private StripeMap.Stripe writeStripe(ErasureCodec codec, StripeMap plan, StripeMap.Stripe s, long size,
                                         Map<String, Cluster.StoreRef> stores) throws IOException {
        int k = config.k;
        int n = k + config.r;
        long b = config.blockSize;
        long stripeStart = (long) s.index() * k * b;
        FileChannel[] spool = new FileChannel[n];
        Path dir = Files.createTempDirectory(spoolDir, "hayloft-spool-v" + plan.volume() + "-s" + s.index() + "-");
        try {
            for (int u = 0; u < n; u++) {
                spool[u] = FileChannel.open(dir.resolve("u" + u), StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                        StandardOpenOption.WRITE, StandardOpenOption.DELETE_ON_CLOSE);
            }
            // Data: replica → spool, zero-padded past the end of the volume.
            for (int u = 0; u < k; u++) {
                long base = stripeStart + u * b;
                for (long off = 0; off < b; off += config.transferBytes) {
                    int len = (int) Math.min(config.transferBytes, b - off);
                    byte[] chunk = new byte[len];
                    long avail = Math.min(len, size - (base + off));
                    if (avail > 0) {
                        byte[] raw = source.read(base + off, (int) avail);
                        System.arraycopy(raw, 0, chunk, 0, raw.length);
                    }
                    writeFully(spool[u], ByteBuffer.wrap(chunk), off);
                }
            }
            scanNeedles(plan.volume(), spool, stripeStart, Math.min(stripeStart + k * b, size));
            codec.encode(b, (unit, off, dst) -> readFully(spool[unit], dst, off),
                    (unit, off, src) -> writeFully(spool[unit], src, off));
            List<StripeMap.Block> blocks = new ArrayList<>();
            for (int u = 0; u < n; u++) {
                StripeMap.Block planned = s.blocks().get(u);
                long crc = upload(stores.get(planned.store()).address(), planned.name(), spool[u], b);
                blocks.add(new StripeMap.Block(planned.store(), planned.name(), b, crc));
            }
            return new StripeMap.Stripe(s.index(), blocks);
        } finally {
            for (FileChannel c : spool) {
                if (c != null) {
                    c.close();
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    /** Streams a spooled block to its store in transfer-sized appends; returns its CRC32C. */
    long upload(String store, String name, FileChannel from, long length) throws IOException {
        CRC32C crc = new CRC32C();
        cluster.createBlock(store, name);
        for (long off = 0; off < length; off += config.transferBytes) {
            int len = (int) Math.min(config.transferBytes, length - off);
            ByteBuffer chunk = ByteBuffer.allocate(len);
            readFully(from, chunk, off);
            crc.update(chunk.array(), 0, len);
            cluster.appendBlock(store, name, chunk.array());
        }
        return crc.getValue();
    }

    /** Adds to the index every needle whose header starts in {@code [stripeStart, end)}. */
    private void scanNeedles(int volume, FileChannel[] spool, long stripeStart, long end) throws IOException {
        ByteBuffer h = ByteBuffer.allocate(NeedleFormat.HEADER_SIZE);
        while (cursor < end) {
            h.clear();
            if (cursor + NeedleFormat.HEADER_SIZE <= end) {
                long rel = cursor - stripeStart;
                while (h.hasRemaining()) {
                    int unit = (int) ((rel + h.position()) / config.blockSize);
                    long inBlock = (rel + h.position()) % config.blockSize;
                    ByteBuffer part = h.slice().limit((int) Math.min(h.remaining(), config.blockSize - inBlock));
                    readFully(spool[unit], part, inBlock);
                    h.position(h.position() + part.limit());
                }
                h.flip();
            } else {
                h.put(source.read(cursor, NeedleFormat.HEADER_SIZE)).flip();
            }
            VolumeIndex.Entry e;
            try {
                e = NeedleFormat.header(h, cursor);
            } catch (IllegalStateException bad) {
                throw new IOException("volume " + volume + " is not a clean sealed volume: " + bad.getMessage());
            }
            entries.add(e);
            cursor += e.length();
        }
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

    static void readFully(FileChannel c, ByteBuffer dst, long offset) throws IOException {
        long pos = offset;
        while (dst.hasRemaining()) {
            int n = c.read(dst, pos);
            if (n < 0) {
                throw new IOException("spool file ended at " + pos);
            }
            pos += n;
        }
    }

    static void writeFully(FileChannel c, ByteBuffer src, long offset) throws IOException {
        long pos = offset;
        while (src.hasRemaining()) {
            pos += c.write(src, pos);
        }
    }
}
