package io.hayloft.cold;

import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import io.hayloft.erasure.UnitReader;
import io.hayloft.erasure.UnitWriter;
import io.hayloft.format.io.PositionalIo;
import io.hayloft.format.needle.Needle;
import io.hayloft.format.needle.Superblock;
import io.hayloft.format.wire.VolumeIndex;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.zip.CRC32C;

/**
 * The one stripe-encode core of the cold tier (step 3 of the encode protocol, docs/raid.md), used by
 * the raid-node's {@code StripeEncodeTask} (bytes fetched from a replica into spool files) and by a
 * store encoding its own sealed replica ({@code POST /admin/volumes/{id}/encode-stripe}):
 * <ol>
 *   <li>{@link #copyData}: reads the stripe's {@code k} data units from the volume once, in
 *       transfer-sized 8-aligned chunks, zero-padded past the end of the volume, hands each chunk to a
 *       {@link DataSink} in order and computes each unit's CRC32C; while reading it collects the
 *       <em>candidate</em> needle headers of its range: every 8-byte-aligned volume offset in
 *       {@code [stripe start, stripe end)} holding the header magic, parsed with
 *       {@link NeedleFormat#header} (a header across a chunk or the stripe's end is read whole from the
 *       volume). Each candidate gets the CRC32C of its needle's footer; one with no footer magic where
 *       its header says is no needle and is dropped. Candidates may still include false positives
 *       inside photo data: the raid-node keeps only those on the needle chain.</li>
 *   <li>{@link #encodeParity}: computes the {@code r} parity units with the streaming codec from a
 *       reader of the data units ({@link #volumeUnits} reads them straight from the volume).</li>
 *   <li>{@link #copy}: streams a finished unit (a parity spool file) to its destination a chunk at a
 *       time computing its CRC32C; {@link #upload} does so to a store's block over HTTP
 *       ({@link BlockWrites#openBlock}: one streamed {@code PUT /blocks/<name>} whose answer carries the
 *       CRC32C the store computed, compared with the sender's), replacing a block of that name left by an
 *       earlier attempt.</li>
 * </ol>
 * Memory: one chunk per unit being copied, plus the codec's {@link ErasureCodec#chunkSize()} tiles.
 *
 * <p>Immutable and thread-safe; the methods may run concurrently on different units.
 */
public final class StripeEncoder {

    /** Reads {@code dst.remaining()} bytes of the volume at {@code offset} (always inside the volume) into {@code dst}. */
    @FunctionalInterface
    public interface VolumeReader {
        void read(long offset, ByteBuffer dst) throws IOException;
    }

    /**
     * Takes the bytes of data unit {@code unit} in order ({@code offset} is where {@code chunk} starts in
     * the unit); called from one thread per unit at a time. The buffer is reused once it returns.
     */
    @FunctionalInterface
    public interface DataSink {
        void accept(int unit, long offset, ByteBuffer chunk) throws IOException;

        /**
         * Data unit {@code unit} is complete (its last chunk was accepted) and has CRC32C {@code crc32c};
         * called on the unit's thread right after its last {@link #accept}. Does nothing by default.
         */
        default void unitDone(int unit, long crc32c) throws IOException {
        }
    }

    /** Takes the next chunk of a unit streamed by {@link #copy}; the buffer is reused once it returns. */
    @FunctionalInterface
    public interface ChunkSink {
        void accept(ByteBuffer chunk) throws IOException;
    }

    /**
     * A block being written on a store, its bytes given in order as they are produced
     * ({@link BlockWrites#openBlock}). Used by one thread at a time.
     */
    public interface BlockUpload extends Closeable {
        /** The next bytes of the block: {@code chunk}'s remaining bytes (the buffer is reused once this returns). */
        void write(ByteBuffer chunk) throws IOException;

        /**
         * Ends the block, whose CRC32C the sender computed as {@code crc32c}: fails when the CRC32C the
         * store answers differs (the block is then wrong and the job that wrote it fails its
         * verification; the sender learns the CRC only at the end, so the store cannot refuse it first).
         */
        void finish(long crc32c) throws IOException;

        /** Abandons the block unless it finished. Idempotent; never throws. */
        @Override
        void close();
    }

    /** Block writes on one store, as {@link #upload} needs them (the raid-node's Cluster, a store's peer client). */
    public interface BlockWrites {
        void createBlock(String store, String name) throws IOException;

        void appendBlock(String store, String name, byte[] data, int length) throws IOException;

        boolean deleteBlock(String store, String name) throws IOException;

        /**
         * Starts writing block {@code name} of {@code length} bytes on {@code store}, replacing one of
         * that name left by an earlier attempt. By default the way stores have always taken blocks:
         * {@link #startBlock create} (after deleting a leftover), then one {@code ?op=append} request per
         * chunk written. Clients that can stream a request body override it to send the whole block as
         * one streamed {@code PUT /blocks/<name>} ({@link ClusterReads#putBlockStream}).
         */
        default BlockUpload openBlock(String store, String name, long length) throws IOException {
            startBlock(this, store, name);
            return new BlockUpload() {
                @Override
                public void write(ByteBuffer chunk) throws IOException {
                    int n = chunk.remaining();
                    byte[] a;
                    if (chunk.hasArray() && chunk.arrayOffset() + chunk.position() == 0) {
                        a = chunk.array();
                    } else {
                        a = new byte[n];
                        chunk.duplicate().get(a);
                    }
                    appendBlock(store, name, a, n);
                    chunk.position(chunk.limit());
                }

                @Override
                public void finish(long crc32c) {
                    // the appends are the block; the raid-node verifies it from the store's listing
                }

                @Override
                public void close() {
                }
            };
        }
    }

    /**
     * What {@link #copyData} found: the CRC32C of each data unit (index {@code 0..k-1}), the candidate
     * needles of the stripe's range with their footer CRC32C, and the bytes read from the volume.
     */
    public record Data(long[] crc32c, List<VolumeIndex.Entry> candidates, long bytesRead) {
    }

    private final CodecKind codec;
    private final int k;
    private final int r;
    private final long blockSize;
    private final long size;
    private final int stripe;
    private final int step;

    /**
     * @param codec         codec wire name (rs, hh-xor, hh-xor+, hh-nonxor)
     * @param size          the volume's size in bytes
     * @param transferBytes bytes per chunk read and sent (rounded down to a multiple of 8, at least 8)
     * @throws IllegalArgumentException naming the bad value
     */
    public StripeEncoder(String codec, int k, int r, long blockSize, long size, int stripe, int transferBytes) {
        this.codec = CodecKind.fromWireName(codec);
        if (k < 1 || r < 1 || k + r > 64) {
            throw new IllegalArgumentException("k and r must be >= 1 with k + r <= 64, were k=" + k + " r=" + r);
        }
        if (blockSize < 8 || blockSize % 8 != 0) {
            throw new IllegalArgumentException("blockSize must be a positive multiple of 8, was " + blockSize);
        }
        if (size < 0 || stripe < 0) {
            throw new IllegalArgumentException("volume size and stripe must be >= 0, were " + size + " and " + stripe);
        }
        long blocks = Math.max(1, (size + blockSize - 1) / blockSize);
        long stripes = (blocks + k - 1) / k;
        if (stripe >= stripes) {
            throw new IllegalArgumentException("stripe " + stripe + " is past the last stripe (" + (stripes - 1)
                    + ") of a volume of " + size + " bytes with k=" + k + " and blockSize " + blockSize);
        }
        this.k = k;
        this.r = r;
        this.blockSize = blockSize;
        this.size = size;
        this.stripe = stripe;
        // 8-aligned chunks: a header magic at an aligned offset never straddles two chunks.
        this.step = Math.max(8, transferBytes & -8);
    }

    /** Where the stripe starts in the volume. */
    public long stripeStart() {
        return (long) stripe * k * blockSize;
    }

    /** Bytes per chunk. */
    public int chunkBytes() {
        return step;
    }

    /**
     * Reads the data units from {@code src} once, hands every chunk to {@code sink} (unit by unit, in
     * order; units concurrently on {@code pool} when it is not null) and collects the candidate needles.
     *
     * @param stripeData reads back the stripe's data units for footer checks (spool files), or null to
     *                   read footers from {@code src}
     */
    public Data copyData(VolumeReader src, DataSink sink, UnitReader stripeData, ExecutorService pool) throws IOException {
        UnitScan[] scans = new UnitScan[k];
        if (pool == null) {
            for (int u = 0; u < k; u++) {
                scans[u] = copyUnit(u, src, sink);
            }
        } else {
            List<Future<UnitScan>> futures = new ArrayList<>(k);
            for (int u = 0; u < k; u++) {
                int unit = u;
                futures.add(pool.submit(() -> copyUnit(unit, src, sink)));
            }
            try {
                for (int u = 0; u < k; u++) {
                    scans[u] = futures.get(u).get();
                }
            } catch (InterruptedException e) {
                futures.forEach(f -> f.cancel(true));
                Thread.currentThread().interrupt();
                throw new IOException("stripe " + stripe + ": interrupted", e);
            } catch (ExecutionException e) {
                futures.forEach(f -> f.cancel(true));
                Throwable c = e.getCause();
                if (c instanceof IOException io) {
                    throw io;
                }
                if (c instanceof RuntimeException re) {
                    throw re;
                }
                throw new IOException("stripe " + stripe + ": " + c, c);
            }
        }
        long read = 0;
        long[] crcs = new long[k];
        List<VolumeIndex.Entry> candidates = new ArrayList<>();
        List<Long> split = new ArrayList<>();
        for (int u = 0; u < k; u++) {
            crcs[u] = scans[u].crc;
            read += scans[u].read;
            candidates.addAll(scans[u].candidates);
            split.addAll(scans[u].split);
        }
        for (long at : split) { // headers across a chunk or the stripe's end: read whole from the source
            ByteBuffer h = ByteBuffer.allocate(Needle.HEADER_SIZE);
            src.read(at, h);
            read += Needle.HEADER_SIZE;
            candidates.add(NeedleFormat.header(h.flip(), at));
        }
        long stripeStart = stripeStart();
        long stripeEnd = Math.min(size, stripeStart + k * blockSize);
        List<VolumeIndex.Entry> withFooters = new ArrayList<>(candidates.size());
        for (VolumeIndex.Entry c : candidates) {
            long footer = c.offset() + Needle.HEADER_SIZE + (long) c.dataSize();
            if (c.dataSize() < 0 || footer + Needle.FOOTER_SIZE > size) {
                continue; // no needle there: a false candidate inside photo data
            }
            ByteBuffer f = ByteBuffer.allocate(Needle.FOOTER_SIZE);
            if (stripeData != null && footer + Needle.FOOTER_SIZE <= stripeEnd) {
                readUnits(stripeData, footer - stripeStart, f);
            } else { // a needle running into the next stripe, or no local copy: its footer from the source
                src.read(footer, f);
                read += Needle.FOOTER_SIZE;
            }
            f.flip();
            if (f.getInt(0) == Needle.FOOTER_MAGIC) {
                withFooters.add(c.withCrc(f.getInt(4)));
            }
        }
        return new Data(crcs, withFooters, read);
    }

    /** What one data unit's pass found. */
    private record UnitScan(long crc, List<VolumeIndex.Entry> candidates, List<Long> split, long read) {
    }

    /** Zeros to copy from (absolute gets only: shared by every thread). */
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(64 << 10);

    /** Sets bytes {@code [from, to)} of {@code b} to zero (absolute puts: its position stays). */
    private static void zero(ByteBuffer b, int from, int to) {
        for (int i = from; i < to; i += ZEROS.capacity()) {
            b.put(i, ZEROS, 0, Math.min(to - i, ZEROS.capacity()));
        }
    }

    private UnitScan copyUnit(int u, VolumeReader src, DataSink sink) throws IOException {
        long base = stripeStart() + u * blockSize;
        CRC32C crc = new CRC32C();
        List<VolumeIndex.Entry> candidates = new ArrayList<>();
        List<Long> split = new ArrayList<>();
        long read = 0;
        // direct: a file read fills it and a socket write sends it with no copy through a JDK temporary buffer
        ByteBuffer chunk = ByteBuffer.allocateDirect((int) Math.min(step, blockSize));
        for (long off = 0; off < blockSize; off += step) {
            int len = (int) Math.min(step, blockSize - off);
            chunk.clear().limit(len);
            long avail = Math.max(0, Math.min(len, size - (base + off)));
            if (avail > 0) {
                src.read(base + off, chunk.slice(0, (int) avail));
                read += avail;
                scan(chunk, (int) avail, base + off, candidates, split);
            }
            zero(chunk, (int) avail, len); // past the volume's end
            crc.update(chunk.position(0).limit(len));
            sink.accept(u, off, chunk.position(0).limit(len));
        }
        sink.unitDone(u, crc.getValue());
        return new UnitScan(crc.getValue(), candidates, split, read);
    }

    /**
     * Adds the headers at 8-aligned offsets of {@code chunk} (volume offset {@code at}, {@code avail}
     * real bytes) that hold the magic; offsets whose 32 header bytes run past the chunk go to
     * {@code split} when the volume holds them.
     */
    private void scan(ByteBuffer buf, int avail, long at, List<VolumeIndex.Entry> out, List<Long> split) {
        int from = (int) Math.max(0, Superblock.SIZE - at);
        for (int p = (from + 7) & -8; p + 4 <= avail; p += 8) {
            if (buf.getInt(p) != Needle.HEADER_MAGIC) {
                continue;
            }
            if (p + Needle.HEADER_SIZE <= avail) {
                out.add(NeedleFormat.header(buf.duplicate().position(p), at + p));
            } else if (at + p + Needle.HEADER_SIZE <= size) {
                split.add(at + p);
            }
        }
    }

    /** Reads {@code dst.remaining()} bytes at {@code pos} of the stripe's data (units of {@code blockSize} bytes, back to back). */
    private void readUnits(UnitReader units, long pos, ByteBuffer dst) throws IOException {
        while (dst.hasRemaining()) {
            int u = (int) (pos / blockSize);
            long off = pos % blockSize;
            int n = (int) Math.min(dst.remaining(), blockSize - off);
            units.read(u, off, dst.slice().limit(n));
            dst.position(dst.position() + n);
            pos += n;
        }
    }

    /** The stripe's data units read straight from the volume: unit {@code u} at {@code off}, zeros past the volume's end. */
    public UnitReader volumeUnits(VolumeReader src) {
        long start = stripeStart();
        return (unit, off, dst) -> {
            long at = start + unit * blockSize + off;
            int n = dst.remaining();
            int avail = (int) Math.max(0, Math.min(n, size - at));
            if (avail > 0) {
                src.read(at, dst.slice().limit(avail));
            }
            zero(dst, dst.position() + avail, dst.limit());
            dst.position(dst.limit());
        };
    }

    /** Computes the parity units ({@code k..k+r-1}) from {@code data} with the streaming codec. */
    public void encodeParity(UnitReader data, UnitWriter parity) throws IOException {
        try (ErasureCodec coder = ErasureCodec.create(codec, k, r)) {
            coder.encode(blockSize, data, parity);
        }
    }

    /**
     * Streams {@code length} bytes of {@code from} (from offset 0) to {@code sink} in chunks of
     * {@code chunkBytes}, reusing one heap buffer; returns their CRC32C.
     */
    public static long copy(FileChannel from, long length, int chunkBytes, ChunkSink sink) throws IOException {
        CRC32C crc = new CRC32C();
        ByteBuffer chunk = ByteBuffer.allocate((int) Math.max(1, Math.min(chunkBytes, length)));
        for (long off = 0; off < length; off += chunkBytes) {
            int len = (int) Math.min(chunkBytes, length - off);
            chunk.clear().limit(len);
            PositionalIo.readFully(from, chunk, off);
            crc.update(chunk.array(), 0, len);
            sink.accept(chunk.flip());
        }
        return crc.getValue();
    }

    /**
     * Streams a finished unit (a spool or parity file) to block {@code name} on {@code store},
     * {@code chunkBytes} read at a time, through {@link BlockWrites#openBlock} (one streamed PUT where
     * the client can, else create and appends); returns its CRC32C, compared with the one the store
     * answers.
     */
    public static long upload(BlockWrites to, String store, String name, FileChannel from, long length, int chunkBytes)
            throws IOException {
        try (BlockUpload up = to.openBlock(store, name, length)) {
            long crc = copy(from, length, chunkBytes, up::write);
            up.finish(crc);
            return crc;
        }
    }

    /** Creates block {@code name} on {@code store} empty, replacing one left by an earlier attempt. */
    public static void startBlock(BlockWrites to, String store, String name) throws IOException {
        try {
            to.createBlock(store, name);
        } catch (ClusterReads.HttpStatusException e) {
            if (e.status() != 409) {
                throw e;
            }
            to.deleteBlock(store, name);
            to.createBlock(store, name);
        }
    }
}
