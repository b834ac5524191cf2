package io.hayloft.cli.ec;

import io.hayloft.erasure.ErasureCodec;
import io.hayloft.erasure.UnitWriter;
import io.hayloft.format.io.PositionalIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * {@code hayloft ec repair}: finds blocks that are missing, of the wrong size or fail their CRC32C and
 * rebuilds them. A stripe with one damaged block uses {@link ErasureCodec#repair} (Hitchhiker's reduced
 * reads for a data block); a stripe with several uses {@link ErasureCodec#decode}, which rebuilds them
 * together from {@code k} whole blocks. A stripe with more than {@code r} damaged blocks is reported
 * and skipped; the other stripes are still repaired.
 *
 * <p>Each rebuilt block is written to {@code NAME.repair.tmp}, fsynced, checked against the manifest's
 * length and CRC32C (a rebuilt block is byte-identical to the original, so its CRC must match; if not,
 * a helper block was bad and nothing is replaced), then renamed over {@code NAME} and the directory is
 * fsynced. The manifest is never rewritten. Parity that is consistent with its CRC but not with its data
 * (which only {@code ec verify} detects) is not repaired here. Not thread-safe.
 */
public final class EcRepairer {

    /** One rebuilt block: the bytes the codec read for it and what Reed-Solomon would have read. */
    public record Rebuilt(BlockScanner.Damage damage, long bytesRead, long rsBytesRead, long nanos, int rebuiltTogether) {
    }

    /** Everything a repair found and did. */
    public record Result(int blocks, List<BlockScanner.Damage> damaged, List<Rebuilt> rebuilt, List<String> failures,
            long nanos) {
        public boolean ok() {
            return failures.isEmpty();
        }
    }

    private final Progress.Factory progress;

    public EcRepairer(Progress.Factory progress) {
        this.progress = progress;
    }

    public Result repair(Path dir) throws IOException {
        long start = System.nanoTime();
        Manifest m = Manifest.read(dir);
        StripeLayout layout = m.layout();
        try (ErasureCodec codec = ErasureCodec.create(m.codec(), layout.k(), layout.r())) {
            return repair(dir, m, codec, start);
        }
    }

    private Result repair(Path dir, Manifest m, ErasureCodec codec, long start) throws IOException {
        StripeLayout layout = m.layout();
        List<BlockScanner.Damage> damaged = new ArrayList<>();
        List<Rebuilt> rebuilt = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        long total = m.blocks().stream().mapToLong(Manifest.Block::length).sum();
        try (Progress bar = progress.start("scan", total)) {
            BlockScanner scanner = new BlockScanner(dir, m, bar);
            for (long s = 0; s < layout.stripes(); s++) {
                List<BlockScanner.Damage> d = scanner.checkStripeFiles(s);
                damaged.addAll(d);
            }
        }
        for (long s = 0; s < layout.stripes(); s++) {
            final long stripe = s;
            List<BlockScanner.Damage> d = damaged.stream().filter(x -> x.block().stripe() == stripe)
                    .collect(Collectors.toList());
            if (d.isEmpty()) {
                continue;
            }
            if (d.size() > layout.r()) {
                failures.add("stripe " + s + " cannot be rebuilt: " + d.size() + " of " + layout.totalUnits()
                        + " blocks are damaged (" + describe(layout, d) + "); at most " + layout.r() + " can be lost");
                continue;
            }
            try {
                rebuilt.addAll(rebuildStripe(dir, m, codec, s, d));
            } catch (IOException | RuntimeException e) {
                failures.add("stripe " + s + ": rebuilding " + describe(layout, d) + " failed: " + e.getMessage());
            }
        }
        return new Result(m.blocks().size(), damaged, rebuilt, failures, System.nanoTime() - start);
    }

    private List<Rebuilt> rebuildStripe(Path dir, Manifest m, ErasureCodec codec, long s, List<BlockScanner.Damage> d)
            throws IOException {
        StripeLayout layout = m.layout();
        long blockSize = layout.blockSize();
        int n = layout.totalUnits();
        Set<Integer> lost = new HashSet<>();
        d.forEach(x -> lost.add(x.block().unit()));
        Path[] tmp = new Path[n];
        FileChannel[] out = new FileChannel[n];
        boolean committed = false;
        long t0 = System.nanoTime();
        long bytesRead;
        try {
            for (int u : lost) {
                tmp[u] = dir.resolve(m.block(s, u).file() + ".repair.tmp");
                out[u] = FileChannel.open(tmp[u], StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                        StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.READ);
            }
            UnitWriter writer = (unit, offset, src) -> {
                if (out[unit] == null) {
                    throw new IOException("codec wrote unit " + unit + ", which was not lost");
                }
                long stored = m.block(s, unit).length();
                if (offset < stored) {
                    ByteBuffer part = src.duplicate();
                    part.limit(part.position() + (int) Math.min(part.remaining(), stored - offset));
                    PositionalIo.writeFully(out[unit], part, offset);
                }
            };
            try (Progress bar = progress.start("repair stripe " + s, (long) layout.k() * blockSize);
                    StripeFiles files = new StripeFiles(dir, m, s, lost, bar)) {
                if (lost.size() == 1) {
                    int u = lost.iterator().next();
                    bytesRead = codec.repair(blockSize, u, new int[0], files, writer);
                } else {
                    int[] erased = lost.stream().mapToInt(Integer::intValue).sorted().toArray();
                    codec.decode(blockSize, erased, files, writer);
                    bytesRead = files.bytesRead();
                }
            }
            ByteBuffer buf = ByteBuffer.allocateDirect(BlockScanner.BUFFER_SIZE);
            for (int u : lost) {
                Manifest.Block b = m.block(s, u);
                out[u].force(true);
                if (out[u].size() != b.length()) {
                    throw new IOException("rebuilt " + b.file() + " has " + out[u].size() + " bytes, expected "
                            + b.length());
                }
                int crc = BlockScanner.crc32c(out[u], 0, b.length(), buf, Progress.none());
                if (crc != b.crc32c()) {
                    throw new IOException("rebuilt " + b.file() + " has CRC32C " + Manifest.hex(crc) + ", the manifest says "
                            + b.crcHex() + "; a block it was rebuilt from is bad, nothing was replaced");
                }
            }
            for (int u : lost) {
                out[u].close();
                FileSync.commit(tmp[u], dir.resolve(m.block(s, u).file()));
            }
            committed = true;
        } finally {
            for (int u = 0; u < n; u++) {
                if (out[u] != null) {
                    out[u].close();
                }
                if (!committed && tmp[u] != null) {
                    FileSync.deleteQuietly(tmp[u]);
                }
            }
        }
        long nanos = System.nanoTime() - t0;
        List<Rebuilt> result = new ArrayList<>();
        for (BlockScanner.Damage x : d) {
            result.add(new Rebuilt(x, bytesRead, (long) layout.k() * blockSize, nanos, d.size()));
        }
        return result;
    }

    static String describe(StripeLayout layout, List<BlockScanner.Damage> d) {
        return d.stream().map(x -> layout.unitLabel(x.block().unit()) + " " + x.problem())
                .collect(Collectors.joining(", "));
    }
}
