package io.hayloft.cli.ec;

import io.hayloft.erasure.ErasureCodec;
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
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.zip.CRC32C;

/**
 * {@code hayloft ec decode}: streams the original file back out of an {@code hayloft ec} directory.
 * Intact data blocks are copied (their CRC32C checked on the way); missing, short or corrupt data
 * blocks are rebuilt with {@link ErasureCodec#decode} from {@code k} intact blocks of their stripe. The
 * output is written to {@code FILE.hayloft-tmp}, fsynced, checked against the CRC32C of the whole
 * original file recorded in the manifest, then renamed to {@code FILE}. A stripe with more than
 * {@code r} unusable blocks stops the decode with an {@link UnrecoverableException} naming the stripe
 * and its blocks, and no output file is left behind. Memory is bounded by the codec's chunk size per
 * unit. Not thread-safe.
 */
public final class EcDecoder {

    /** Too many blocks of one stripe are missing or damaged to rebuild it. */
    public static final class UnrecoverableException extends IOException {
        private static final long serialVersionUID = 1L;

        public UnrecoverableException(String message) {
            super(message);
        }
    }

    /** What a decode wrote and which blocks it had to rebuild. */
    public record Result(long length, List<BlockScanner.Damage> rebuilt, long nanos) {
    }

    private final Progress.Factory progress;

    public EcDecoder(Progress.Factory progress) {
        this.progress = progress;
    }

    /**
     * Decodes the directory {@code dir} into {@code out}.
     *
     * @param overwrite whether an existing {@code out} may be replaced
     * @throws UnrecoverableException if a stripe has more than {@code r} unusable blocks
     */
    public Result decode(Path dir, Path out, boolean overwrite) throws IOException {
        long start = System.nanoTime();
        Manifest m = Manifest.read(dir);
        if (Files.isDirectory(out)) {
            throw new IllegalArgumentException(out + " is a directory; give the path of the file to write");
        }
        if (Files.exists(out) && !overwrite) {
            throw new IllegalArgumentException(out + " already exists; use --force to overwrite it");
        }
        Path parent = out.toAbsolutePath().getParent();
        if (!Files.isDirectory(parent)) {
            throw new NoSuchFileException(parent + " (no such directory for the output file)");
        }
        StripeLayout layout = m.layout();
        // Cheap first pass: refuse before writing anything if block files are missing or of the wrong size.
        for (long s = 0; s < layout.stripes(); s++) {
            List<BlockScanner.Damage> gone = new ArrayList<>();
            for (int u = 0; u < layout.totalUnits(); u++) {
                BlockScanner.Damage d = presence(dir, m.block(s, u));
                if (d != null) {
                    gone.add(d);
                }
            }
            if (gone.size() > layout.r()) {
                throw unrecoverable(layout, s, gone);
            }
        }
        Path tmp = out.resolveSibling(out.getFileName() + ".hayloft-tmp");
        List<BlockScanner.Damage> rebuilt = new ArrayList<>();
        boolean ok = false;
        try {
            try (ErasureCodec codec = ErasureCodec.create(m.codec(), layout.k(), layout.r());
                    FileChannel dst = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.READ);
                    Progress bar = progress.start("decode", layout.length())) {
                ByteBuffer buf = ByteBuffer.allocateDirect(BlockScanner.BUFFER_SIZE);
                for (long s = 0; s < layout.stripes(); s++) {
                    rebuilt.addAll(decodeStripe(dir, m, codec, s, dst, buf, bar));
                }
                dst.force(true);
                if (dst.size() != layout.length()) {
                    throw new IOException("decoded " + dst.size() + " bytes, the manifest says " + layout.length());
                }
                int crc = BlockScanner.crc32c(dst, 0, layout.length(), buf, Progress.none());
                if (crc != m.fileCrc32c()) {
                    throw new IOException("the decoded file has CRC32C " + Manifest.hex(crc) + " but the original had "
                            + Manifest.hex(m.fileCrc32c()) + "; nothing was written to " + out);
                }
            }
            FileSync.commit(tmp, out);
            ok = true;
        } finally {
            if (!ok) {
                FileSync.deleteQuietly(tmp);
            }
        }
        return new Result(layout.length(), rebuilt, System.nanoTime() - start);
    }

    private List<BlockScanner.Damage> decodeStripe(Path dir, Manifest m, ErasureCodec codec, long s, FileChannel dst,
            ByteBuffer buf, Progress bar) throws IOException {
        StripeLayout layout = m.layout();
        List<BlockScanner.Damage> bad = new ArrayList<>();
        for (int j = 0; j < layout.k(); j++) {
            Manifest.Block b = m.block(s, j);
            if (b == null) {
                continue;
            }
            BlockScanner.Damage d = presence(dir, b);
            if (d == null) {
                d = copy(dir, b, layout.fileOffset(s, j), dst, buf, bar);
            }
            if (d != null) {
                bad.add(d);
            }
        }
        if (bad.isEmpty()) {
            return bad;
        }
        List<BlockScanner.Damage> unusable = new ArrayList<>(bad);
        BlockScanner scanner = new BlockScanner(dir, m, Progress.none());
        for (int u = layout.k(); u < layout.totalUnits(); u++) {
            BlockScanner.Damage d = scanner.checkFile(m.block(s, u));
            if (d != null) {
                unusable.add(d);
            }
        }
        if (unusable.size() > layout.r()) {
            throw unrecoverable(layout, s, unusable);
        }
        Set<Integer> erased = new TreeSet<>();
        unusable.forEach(d -> erased.add(d.block().unit()));
        UnitWriter writer = (unit, offset, src) -> {
            if (unit >= layout.k()) {
                return; // a damaged parity block rebuilt on the way: not part of the file
            }
            Manifest.Block b = m.block(s, unit);
            if (b != null && offset < b.length()) {
                ByteBuffer part = src.duplicate();
                part.limit(part.position() + (int) Math.min(part.remaining(), b.length() - offset));
                PositionalIo.writeFully(dst, part, layout.fileOffset(s, unit) + offset);
            }
        };
        try (StripeFiles files = new StripeFiles(dir, m, s, erased, Progress.none())) {
            codec.decode(layout.blockSize(), erased.stream().mapToInt(Integer::intValue).toArray(), files, writer);
        }
        bad.forEach(d -> bar.add(d.block().length()));
        return bad;
    }

    /** Copies an intact data block into the output, checking its CRC32C; returns the damage if it fails. */
    private static BlockScanner.Damage copy(Path dir, Manifest.Block b, long fileOffset, FileChannel dst, ByteBuffer buf,
            Progress bar) {
        CRC32C crc = new CRC32C();
        try (FileChannel in = FileChannel.open(dir.resolve(b.file()), StandardOpenOption.READ)) {
            long pos = 0;
            while (pos < b.length()) {
                buf.clear().limit((int) Math.min(buf.capacity(), b.length() - pos));
                PositionalIo.readFully(in, buf, pos);
                buf.flip();
                crc.update(buf.duplicate());
                PositionalIo.writeFully(dst, buf, fileOffset + pos);
                pos += buf.limit();
            }
        } catch (IOException e) {
            return new BlockScanner.Damage(b, BlockScanner.Problem.UNREADABLE, String.valueOf(e.getMessage()));
        }
        if ((int) crc.getValue() != b.crc32c()) {
            return new BlockScanner.Damage(b, BlockScanner.Problem.CRC_MISMATCH,
                    "expected " + b.crcHex() + ", found " + Manifest.hex((int) crc.getValue()));
        }
        bar.add(b.length());
        return null;
    }

    /** A missing or wrong-sized block file, found without reading it; {@code null} if it looks present. */
    static BlockScanner.Damage presence(Path dir, Manifest.Block b) throws IOException {
        if (b == null) {
            return null;
        }
        Path p = dir.resolve(b.file());
        if (!Files.exists(p)) {
            return new BlockScanner.Damage(b, BlockScanner.Problem.MISSING, "");
        }
        long size = Files.size(p);
        if (size != b.length()) {
            return new BlockScanner.Damage(b, BlockScanner.Problem.WRONG_SIZE, size + " bytes, expected " + b.length());
        }
        return null;
    }

    private static UnrecoverableException unrecoverable(StripeLayout layout, long s, List<BlockScanner.Damage> gone) {
        return new UnrecoverableException("cannot decode: stripe " + s + " has " + gone.size() + " of "
                + layout.totalUnits() + " blocks missing or damaged ("
                + gone.stream().map(d -> d.block().file() + " " + d.problem()).collect(Collectors.joining(", "))
                + "); at most " + layout.r() + " blocks of a stripe can be lost");
    }
}
