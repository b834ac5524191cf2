package io.hayloft.cli.ec;

import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import io.hayloft.erasure.UnitReader;
import io.hayloft.erasure.UnitWriter;
import io.hayloft.format.io.PositionalIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * {@code hayloft ec encode}: cuts a file into block files and parity block files of stripes, then
 * writes the manifest. Every block file is fsynced, then the directory, then the manifest is written
 * atomically: a directory with a manifest is complete. On failure the block files written so far are
 * removed. Memory is bounded by the codec's chunk size per unit plus one copy buffer, whatever the
 * block size. Not thread-safe: one encode per instance.
 *
 * <p>Block file format (no header, no footer: raw bytes; integrity is the CRC32C in the manifest):
 * <pre>
 * | file                 | bytes                 | content                                                  |
 * |----------------------|-----------------------|----------------------------------------------------------|
 * | s{S:06}-d{j:02}.blk  | [0, len)              | original file bytes [(S*k+j)*B, (S*k+j)*B + len),        |
 * |                      |                       | len = min(B, L - (S*k+j)*B); not written when len <= 0   |
 * | s{S:06}-p{i:02}.blk  | [0, B)                | parity unit k+i of stripe S over the k data units, each  |
 * |                      |                       | taken as B bytes with missing bytes read as zeros        |
 * | (hh-* codecs)        | [0, B/2) and [B/2, B) | substripes a and b of the unit (hop-and-couple, docs/erasure.md)|
 * </pre>
 * ({@code B} block size, {@code L} file length, {@code S} stripe, {@code k} data units.) A file shorter than
 * the requested block size gets {@code B = L} (rounded up to even for Hitchhiker codes), so that its
 * parity is not padded to a full block: {@link #effectiveBlockSize}.
 */
public final class EcEncoder {

    /** What an encode produced and how long it took. */
    public record Result(Manifest manifest, long nanos) {
    }

    private final CodecKind kind;
    private final int k;
    private final int r;
    private final long blockSize;
    private final Progress.Factory progress;
    private final ByteBuffer buf = ByteBuffer.allocateDirect(BlockScanner.BUFFER_SIZE);

    /**
     * @throws IllegalArgumentException naming the bad value when the codec parameters or block size are
     *     invalid (a Hitchhiker code needs an even block size)
     */
    public EcEncoder(CodecKind kind, int k, int r, long blockSize, Progress.Factory progress) {
        if (blockSize < 1) {
            throw new IllegalArgumentException("block size must be positive, got " + blockSize);
        }
        Manifest.checkBlockSize(kind, blockSize);
        new StripeLayout(k, r, blockSize, 0); // validates k and r with a clear message
        ErasureCodec.create(kind, k, r).close(); // validates the code's own constraints (r >= 2 for hh-*)
        this.kind = kind;
        this.k = k;
        this.r = r;
        this.blockSize = blockSize;
        this.progress = progress;
    }

    /**
     * Encodes {@code input} into {@code dir}, which is created if needed and must not hold a manifest.
     *
     * @throws NoSuchFileException if {@code input} does not exist
     * @throws IllegalArgumentException if {@code input} is not a regular file or {@code dir} already holds
     *     an encoding
     */
    public Result encode(Path input, Path dir) throws IOException {
        if (!Files.exists(input)) {
            throw new NoSuchFileException(input + " (no such file)");
        }
        if (!Files.isRegularFile(input)) {
            throw new IllegalArgumentException(input + " is not a regular file");
        }
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new IllegalArgumentException(dir + " exists and is not a directory");
        }
        if (Files.exists(dir.resolve(Manifest.FILE_NAME))) {
            throw new IllegalArgumentException(dir + " already holds an encoding (" + Manifest.FILE_NAME
                    + "); choose an empty directory");
        }
        Files.createDirectories(dir);
        long start = System.nanoTime();
        List<Path> written = new ArrayList<>();
        boolean ok = false;
        try (FileChannel in = FileChannel.open(input, StandardOpenOption.READ);
                ErasureCodec codec = ErasureCodec.create(kind, k, r)) {
            long length = in.size();
            StripeLayout layout = new StripeLayout(k, r, effectiveBlockSize(kind, blockSize, length), length);
            checkSpace(dir, layout);
            List<Manifest.Block> blocks = new ArrayList<>();
            CRC32C fileCrc = new CRC32C();
            try (Progress bar = progress.start("encode", length + layout.stripes() * layout.k() * layout.blockSize())) {
                for (long s = 0; s < layout.stripes(); s++) {
                    encodeStripe(codec, in, dir, layout, s, fileCrc, blocks, written, bar);
                }
            }
            if (in.size() != length) {
                throw new IOException(input + " changed size while it was being encoded (" + length + " -> "
                        + in.size() + " bytes)");
            }
            FileSync.syncDirectory(dir);
            Manifest manifest = new Manifest(kind, layout, (int) fileCrc.getValue(),
                    input.getFileName().toString(), blocks);
            manifest.write(dir);
            ok = true;
            return new Result(manifest, System.nanoTime() - start);
        } finally {
            if (!ok) {
                written.forEach(FileSync::deleteQuietly);
            }
        }
    }

    private void encodeStripe(ErasureCodec codec, FileChannel in, Path dir, StripeLayout layout, long s, CRC32C fileCrc,
            List<Manifest.Block> blocks, List<Path> written, Progress bar) throws IOException {
        int n = layout.totalUnits();
        for (int j = 0; j < k; j++) {
            long len = layout.storedLength(s, j);
            if (len == 0) {
                continue;
            }
            Path p = dir.resolve(layout.fileName(s, j));
            written.add(p);
            int crc = copy(in, layout.fileOffset(s, j), len, p, fileCrc, bar);
            blocks.add(new Manifest.Block(p.getFileName().toString(), s, j, true, len, crc));
        }
        FileChannel[] out = new FileChannel[n];
        try {
            for (int u = k; u < n; u++) {
                Path p = dir.resolve(layout.fileName(s, u));
                written.add(p);
                out[u] = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                        StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.READ);
            }
            UnitReader reader = (unit, offset, dst) -> {
                int want = dst.remaining();
                long stored = layout.storedLength(s, unit);
                if (offset < stored) {
                    int limit = dst.limit();
                    dst.limit(dst.position() + (int) Math.min(want, stored - offset));
                    PositionalIo.readFully(in, dst, layout.fileOffset(s, unit) + offset);
                    dst.limit(limit);
                }
                StripeFiles.fillZeros(dst);
                bar.add(want);
            };
            UnitWriter writer = (unit, offset, src) -> {
                if (unit < k || unit >= n) {
                    throw new IOException("codec wrote unit " + unit + ", not a parity unit");
                }
                PositionalIo.writeFully(out[unit], src.duplicate(), offset);
            };
            codec.encode(layout.blockSize(), reader, writer);
            for (int u = k; u < n; u++) {
                out[u].force(true);
                if (out[u].size() != layout.blockSize()) {
                    throw new IOException("codec wrote " + out[u].size() + " bytes of parity unit " + u
                            + ", expected " + layout.blockSize());
                }
                int crc = BlockScanner.crc32c(out[u], 0, layout.blockSize(), buf, Progress.none());
                blocks.add(new Manifest.Block(layout.fileName(s, u), s, u, false, layout.blockSize(), crc));
            }
        } finally {
            for (FileChannel c : out) {
                if (c != null) {
                    c.close();
                }
            }
        }
    }

    /** Copies {@code len} bytes of {@code in} at {@code from} into a new file {@code p}, fsynced; returns its CRC32C. */
    private int copy(FileChannel in, long from, long len, Path p, CRC32C fileCrc, Progress bar) throws IOException {
        CRC32C crc = new CRC32C();
        try (FileChannel out = FileChannel.open(p, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            long pos = 0;
            while (pos < len) {
                buf.clear().limit((int) Math.min(buf.capacity(), len - pos));
                PositionalIo.readFully(in, buf, from + pos);
                buf.flip();
                crc.update(buf.duplicate());
                fileCrc.update(buf.duplicate());
                PositionalIo.writeFully(out, buf, pos);
                pos += buf.limit();
                bar.add(buf.limit());
            }
            out.force(true);
        }
        return (int) crc.getValue();
    }

    /**
     * The block size actually used: the requested one, except for a file shorter than one block, whose
     * single stripe would otherwise carry {@code r} parity blocks of the full requested size; then the
     * file's length (rounded up to even for Hitchhiker codes).
     */
    public static long effectiveBlockSize(CodecKind kind, long requested, long length) {
        if (length == 0 || length >= requested) {
            return requested;
        }
        return kind.isHitchhiker() && length % 2 != 0 ? length + 1 : length;
    }

    private static void checkSpace(Path dir, StripeLayout layout) throws IOException {
        long need = layout.length() + layout.stripes() * layout.r() * layout.blockSize();
        long free = Files.getFileStore(dir).getUsableSpace();
        if (free < need) {
            throw new IOException("not enough space in " + dir + ": the blocks need " + SizeConverter.format(need)
                    + ", " + SizeConverter.format(free) + " is free");
        }
    }
}
