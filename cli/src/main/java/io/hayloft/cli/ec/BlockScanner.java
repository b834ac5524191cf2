package io.hayloft.cli.ec;

import io.hayloft.erasure.ErasureCodec;
import io.hayloft.erasure.UnitWriter;
import io.hayloft.format.io.PositionalIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.zip.CRC32C;

/**
 * Finds damaged blocks of an {@code hayloft ec} directory: a missing file, a file of the wrong size, a
 * CRC32C that does not match the manifest, an unreadable file, and parity that does not match its data
 * (re-encoded in chunks and compared). Reads through a bounded buffer, never a whole block. Not
 * thread-safe: one scanner per thread.
 */
public final class BlockScanner {

    /** What is wrong with a block. */
    public enum Problem {
        MISSING("missing"),
        WRONG_SIZE("wrong size"),
        CRC_MISMATCH("CRC mismatch"),
        UNREADABLE("unreadable"),
        PARITY_MISMATCH("parity mismatch");

        private final String text;

        Problem(String text) {
            this.text = text;
        }

        @Override
        public String toString() {
            return text;
        }
    }

    /** A damaged block and what was found. */
    public record Damage(Manifest.Block block, Problem problem, String detail) {
        @Override
        public String toString() {
            return block.file() + ": " + problem + (detail.isEmpty() ? "" : " (" + detail + ")");
        }
    }

    static final int BUFFER_SIZE = 1 << 20;

    private final Path dir;
    private final Manifest manifest;
    private final Progress progress;
    private final ByteBuffer buf = ByteBuffer.allocateDirect(BUFFER_SIZE);

    public BlockScanner(Path dir, Manifest manifest, Progress progress) {
        this.dir = dir;
        this.manifest = manifest;
        this.progress = progress;
    }

    /** Checks one block file's presence, size and CRC32C; {@code null} when it is intact. */
    public Damage checkFile(Manifest.Block b) {
        Path p = dir.resolve(b.file());
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size != b.length()) {
                progress.add(b.length());
                return new Damage(b, Problem.WRONG_SIZE, size + " bytes, expected " + b.length());
            }
            int crc = crc32c(ch, 0, size, buf, progress);
            if (crc != b.crc32c()) {
                return new Damage(b, Problem.CRC_MISMATCH, "expected " + b.crcHex() + ", found " + Manifest.hex(crc));
            }
            return null;
        } catch (NoSuchFileException e) {
            progress.add(b.length());
            return new Damage(b, Problem.MISSING, "");
        } catch (IOException e) {
            progress.add(b.length());
            return new Damage(b, Problem.UNREADABLE, String.valueOf(e.getMessage()));
        }
    }

    /** Checks every block file of {@code stripe}; returns the damaged ones, in unit order. */
    public List<Damage> checkStripeFiles(long stripe) {
        List<Damage> damaged = new ArrayList<>();
        for (int u = 0; u < manifest.layout().totalUnits(); u++) {
            Manifest.Block b = manifest.block(stripe, u);
            if (b != null) {
                Damage d = checkFile(b);
                if (d != null) {
                    damaged.add(d);
                }
            }
        }
        return damaged;
    }

    /**
     * Re-encodes {@code stripe} from its data blocks and compares the result with every parity block not
     * in {@code skip}, chunk by chunk. Every data block must be intact (the caller checked). Returns
     * the parity blocks whose bytes differ.
     */
    public List<Damage> checkParity(ErasureCodec codec, long stripe, Set<Integer> skip) throws IOException {
        int k = manifest.layout().k();
        int n = manifest.layout().totalUnits();
        Set<Integer> unavailable = new HashSet<>();
        for (int u = k; u < n; u++) {
            unavailable.add(u);
        }
        FileChannel[] parity = new FileChannel[n];
        boolean[] differs = new boolean[n];
        long[] firstDiff = new long[n];
        try (StripeFiles data = new StripeFiles(dir, manifest, stripe, unavailable, progress)) {
            for (int u = k; u < n; u++) {
                if (!skip.contains(u)) {
                    parity[u] = FileChannel.open(dir.resolve(manifest.block(stripe, u).file()), StandardOpenOption.READ);
                }
            }
            UnitWriter compare = (unit, offset, src) -> {
                if (unit < k || unit >= n) {
                    throw new IOException("codec wrote unit " + unit + ", not a parity unit");
                }
                if (parity[unit] == null || differs[unit]) {
                    return;
                }
                ByteBuffer expected = src.duplicate();
                ByteBuffer actual = buf;
                long pos = offset;
                while (expected.hasRemaining()) {
                    actual.clear().limit(Math.min(actual.capacity(), expected.remaining()));
                    PositionalIo.readFully(parity[unit], actual, pos);
                    actual.flip();
                    ByteBuffer slice = expected.slice().limit(actual.remaining());
                    int mismatch = slice.mismatch(actual);
                    if (mismatch >= 0) {
                        differs[unit] = true;
                        firstDiff[unit] = pos + mismatch;
                        return;
                    }
                    expected.position(expected.position() + actual.remaining());
                    pos += actual.remaining();
                }
            };
            codec.encode(manifest.layout().blockSize(), data, compare);
        } finally {
            for (FileChannel c : parity) {
                if (c != null) {
                    c.close();
                }
            }
        }
        List<Damage> bad = new ArrayList<>();
        for (int u = k; u < n; u++) {
            if (differs[u]) {
                bad.add(new Damage(manifest.block(stripe, u), Problem.PARITY_MISMATCH,
                        "does not match its data from byte " + firstDiff[u]));
            }
        }
        return bad;
    }

    /** CRC32C of {@code length} bytes of {@code ch} from {@code offset}, read through {@code buf}. */
    public static int crc32c(FileChannel ch, long offset, long length, ByteBuffer buf, Progress progress)
            throws IOException {
        CRC32C crc = new CRC32C();
        long pos = offset;
        long end = offset + length;
        while (pos < end) {
            buf.clear().limit((int) Math.min(buf.capacity(), end - pos));
            PositionalIo.readFully(ch, buf, pos);
            buf.flip();
            int n = buf.remaining();
            crc.update(buf);
            pos += n;
            progress.add(n);
        }
        return (int) crc.getValue();
    }

    /** CRC32C of a whole file. */
    public static int crc32c(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            return crc32c(ch, 0, ch.size(), ByteBuffer.allocateDirect(BUFFER_SIZE), Progress.none());
        }
    }
}
