package io.hayloft.raid;

import io.hayloft.store.volume.Needle;
import io.hayloft.common.wire.VolumeIndex;
import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import java.io.IOException;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.CRC32C;

/**
 * Encodes one stripe of a volume (step 3 of the encode protocol, docs/raid.md): copies its {@code k}
 * data blocks from the volume source into local spool files (transfer-sized reads, zero-padded past
 * the end of the volume), computes the {@code r} parity blocks from the spool with the streaming
 * codec, and uploads all {@code k + r} blocks to their planned stores computing each one's CRC32C.
 *
 * <p>While copying it also collects the <em>candidate</em> needle headers of its range: every
 * 8-byte-aligned volume offset in {@code [stripe start, stripe end)} holding the needle header magic,
 * parsed with {@link NeedleFormat#header} (a header that crosses a copy chunk or the stripe's end is
 * read whole from the source). Candidates may include false positives inside photo data; the driver
 * keeps only those on the needle chain ({@link EncodeJob#chain}), so stripes need no order. Each
 * candidate carries the CRC32C of its needle's footer (read from the spool, or from the source when
 * the footer lies past the stripe); a candidate with no footer magic where its header says is no
 * needle and is dropped.
 *
 * <p>The task holds only serializable values (configuration, the stripe's shape and block targets, a
 * {@link ReplicaSource.Spec}), so any {@link JobRunner} can run it; {@link #encode(Cluster, VolumeSource)}
 * runs the same logic on a source that cannot travel (a reclaim's local image). It is idempotent: a
 * block left by an earlier attempt is replaced. Needs {@code (k + r) × blockSize} bytes of spool disk
 * while it runs.
 *
 * <p>Immutable; thread-safe. Each run works on its own spool directory.
 */
public final class StripeEncodeTask implements RaidTask<StripeEncodeTask.Result> {

    private static final long serialVersionUID = 1L;
    private static final Map<String, Cluster> CLUSTERS = new ConcurrentHashMap<>();

    /** Where one unit of the stripe goes. */
    public record Target(String store, String address, String name) implements Serializable {
    }

    /**
     * What a stripe task sends back: each unit's CRC32C (every block is {@code blockSize} long), the
     * candidate needles of its range (header fields and footer CRC32C), and the bytes it read from the source.
     */
    public record Result(int stripe, long[] crc32c, List<VolumeIndex.Entry> candidates, long bytesRead) implements Serializable {
    }

    private final RaidConfig config;
    private final int volume;
    private final String codec;
    private final int k;
    private final int r;
    private final long blockSize;
    private final long size;
    private final int stripe;
    private final List<Target> targets;
    private final ReplicaSource.Spec source;

    /**
     * @param config  transfer size, spool directory and how to reach the cluster
     * @param source  where the volume's bytes are read, or null when only {@link #encode} is called
     * @param targets the planned block of each of the {@code k + r} units, in unit order
     */
    public StripeEncodeTask(RaidConfig config, int volume, String codec, int k, int r, long blockSize, long size, int stripe,
                            List<Target> targets, ReplicaSource.Spec source) {
        if (targets.size() != k + r) {
            throw new IllegalArgumentException("stripe " + stripe + " of volume " + volume + " needs " + (k + r)
                    + " block targets, got " + targets.size());
        }
        this.config = config;
        this.volume = volume;
        this.codec = codec;
        this.k = k;
        this.r = r;
        this.blockSize = blockSize;
        this.size = size;
        this.stripe = stripe;
        this.targets = List.copyOf(targets);
        this.source = source;
    }

    public int stripe() {
        return stripe;
    }

    /** Runs where it lands: opens the replicas through a per-JVM cluster client and encodes. */
    @Override
    public Result call() throws IOException {
        if (source == null) {
            throw new IllegalStateException("stripe task of volume " + volume + " carries no source; call encode(cluster, source)");
        }
        Cluster cluster = cluster(config);
        return encode(cluster, source.open(cluster));
    }

    /** One HTTP client per configuration per JVM, shared by the tasks that land there. */
    static Cluster cluster(RaidConfig c) {
        return CLUSTERS.computeIfAbsent(c.directory + "|" + c.adminToken + "|" + c.requestTimeoutMillis + "|" + c.tlsTrustStore + "|" + c.tlsKeyStore,
                x -> c.cluster());
    }

    /** Encodes the stripe from {@code src}, uploading through {@code cluster}. */
    public Result encode(Cluster cluster, VolumeSource src) throws IOException {
        int n = k + r;
        long b = blockSize;
        long stripeStart = (long) stripe * k * b;
        Path spoolDir = Path.of(config.spoolDir == null ? System.getProperty("java.io.tmpdir") : config.spoolDir);
        FileChannel[] spool = new FileChannel[n];
        Path dir = SpoolDisk.tempDirectory(spoolDir, "hayloft-spool-v" + volume + "-s" + stripe + "-");
        List<VolumeIndex.Entry> candidates = new ArrayList<>();
        List<Long> split = new ArrayList<>();
        long read = 0;
        // 8-aligned chunks: a header magic at an aligned offset never straddles two chunks.
        int step = Math.max(8, config.transferBytes & -8);
        try (ErasureCodec coder = ErasureCodec.create(CodecKind.fromWireName(codec), k, r)) {
            for (int u = 0; u < n; u++) {
                spool[u] = SpoolDisk.get().open(dir.resolve("u" + u), StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                        StandardOpenOption.WRITE, StandardOpenOption.DELETE_ON_CLOSE);
            }
            for (int u = 0; u < k; u++) {
                long base = stripeStart + u * b;
                for (long off = 0; off < b; off += step) {
                    int len = (int) Math.min(step, b - off);
                    byte[] chunk = new byte[len];
                    long avail = Math.min(len, size - (base + off));
                    if (avail > 0) {
                        byte[] raw = src.read(base + off, (int) avail);
                        System.arraycopy(raw, 0, chunk, 0, raw.length);
                        read += raw.length;
                        scan(chunk, (int) avail, base + off, candidates, split);
                    }
                    EncodeJob.writeFully(spool[u], ByteBuffer.wrap(chunk), off);
                }
            }
            for (long at : split) { // headers across a chunk or the stripe's end: read whole from the source
                ByteBuffer h = ByteBuffer.wrap(src.read(at, Needle.HEADER_SIZE));
                read += Needle.HEADER_SIZE;
                candidates.add(NeedleFormat.header(h, at));
            }
            List<VolumeIndex.Entry> withFooters = new ArrayList<>(candidates.size());
            long stripeEnd = Math.min(size, stripeStart + k * b);
            for (VolumeIndex.Entry c : candidates) {
                long footer = c.offset() + Needle.HEADER_SIZE + (long) c.dataSize();
                if (c.dataSize() < 0 || footer + Needle.FOOTER_SIZE > size) {
                    continue; // no needle there: a false candidate inside photo data
                }
                ByteBuffer f;
                if (footer + Needle.FOOTER_SIZE <= stripeEnd) {
                    f = ByteBuffer.allocate(Needle.FOOTER_SIZE);
                    readSpool(spool, b, footer - stripeStart, f);
                    f.flip();
                } else { // a needle running into the next stripe: its footer from the source
                    f = ByteBuffer.wrap(src.read(footer, Needle.FOOTER_SIZE));
                    read += Needle.FOOTER_SIZE;
                }
                if (f.getInt(0) == Needle.FOOTER_MAGIC) {
                    withFooters.add(c.withCrc(f.getInt(4)));
                }
            }
            coder.encode(b, (unit, off, dst) -> EncodeJob.readFully(spool[unit], dst, off),
                    (unit, off, s) -> EncodeJob.writeFully(spool[unit], s, off));
            long[] crcs = new long[n];
            for (int u = 0; u < n; u++) {
                Target t = targets.get(u);
                crcs[u] = upload(cluster, config.transferBytes, t.address(), t.name(), spool[u], b);
            }
            return new Result(stripe, crcs, withFooters, read);
        } finally {
            for (FileChannel c : spool) {
                if (c != null) {
                    c.close();
                }
            }
            SpoolDisk.get().deleteIfExists(dir);
        }
    }

    /** Reads {@code dst.remaining()} bytes at {@code pos} of the stripe's data (units of {@code b} bytes, back to back). */
    private static void readSpool(FileChannel[] spool, long b, long pos, ByteBuffer dst) throws IOException {
        while (dst.hasRemaining()) {
            int u = (int) (pos / b);
            long off = pos % b;
            int n = (int) Math.min(dst.remaining(), b - off);
            ByteBuffer part = dst.slice().limit(n);
            EncodeJob.readFully(spool[u], part, off);
            dst.position(dst.position() + n);
            pos += n;
        }
    }

    /**
     * Adds the headers at 8-aligned offsets of {@code chunk} (volume offset {@code at}, {@code avail}
     * real bytes) that hold the magic; offsets whose 32 header bytes run past the chunk go to
     * {@code split} when the volume holds them.
     */
    private void scan(byte[] chunk, int avail, long at, List<VolumeIndex.Entry> out, List<Long> split) {
        ByteBuffer buf = ByteBuffer.wrap(chunk);
        int from = (int) Math.max(0, NeedleFormat.SUPERBLOCK_SIZE - at);
        for (int p = (from + 7) & -8; p + 4 <= avail; p += 8) {
            if (buf.getInt(p) != Needle.HEADER_MAGIC) {
                continue;
            }
            if (p + Needle.HEADER_SIZE <= avail) {
                out.add(NeedleFormat.header(buf.position(p), at + p));
            } else if (at + p + Needle.HEADER_SIZE <= size) {
                split.add(at + p);
            }
        }
    }

    /**
     * Streams a spooled block to its store in transfer-sized appends; returns its CRC32C. A block of
     * that name left by an earlier attempt of the same task is deleted and written again.
     */
    static long upload(Cluster cluster, int transferBytes, String store, String name, FileChannel from, long length)
            throws IOException {
        CRC32C crc = new CRC32C();
        try {
            cluster.createBlock(store, name);
        } catch (Cluster.HttpStatusException e) {
            if (e.status() != 409) {
                throw e;
            }
            cluster.deleteBlock(store, name);
            cluster.createBlock(store, name);
        }
        for (long off = 0; off < length; off += transferBytes) {
            int len = (int) Math.min(transferBytes, length - off);
            ByteBuffer chunk = ByteBuffer.allocate(len);
            EncodeJob.readFully(from, chunk, off);
            crc.update(chunk.array(), 0, len);
            cluster.appendBlock(store, name, chunk.array());
        }
        return crc.getValue();
    }
}
