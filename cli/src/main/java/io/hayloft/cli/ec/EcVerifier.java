package io.hayloft.cli.ec;

import io.hayloft.erasure.ErasureCodec;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * {@code hayloft ec verify}: checks every block of an {@code hayloft ec} directory (present, right size,
 * CRC32C as in the manifest) and, for every stripe whose data blocks are intact, that the parity blocks
 * equal a fresh encoding of the data (compared chunk by chunk, never a whole block in memory). A stripe
 * with a damaged data block cannot have its parity checked; its damage is reported and {@code ec repair}
 * fixes it. Not thread-safe.
 */
public final class EcVerifier {

    /** What one stripe looks like. */
    public record StripeReport(long stripe, List<BlockScanner.Damage> damaged, boolean parityChecked,
            boolean recoverable) {
    }

    /** Everything verify found. */
    public record Result(Manifest manifest, List<StripeReport> stripes, long nanos) {
        public List<BlockScanner.Damage> damaged() {
            List<BlockScanner.Damage> all = new ArrayList<>();
            stripes.forEach(s -> all.addAll(s.damaged()));
            return all;
        }

        public boolean clean() {
            return stripes.stream().allMatch(s -> s.damaged().isEmpty());
        }
    }

    private final Progress.Factory progress;
    private final boolean checkParity;

    /** @param checkParity whether to re-encode each stripe and compare its parity (not just CRCs) */
    public EcVerifier(Progress.Factory progress, boolean checkParity) {
        this.progress = progress;
        this.checkParity = checkParity;
    }

    public Result verify(Path dir) throws IOException {
        long start = System.nanoTime();
        Manifest m = Manifest.read(dir);
        StripeLayout layout = m.layout();
        long total = m.blocks().stream().mapToLong(Manifest.Block::length).sum();
        if (checkParity) {
            total += layout.stripes() * layout.k() * layout.blockSize();
        }
        List<StripeReport> reports = new ArrayList<>();
        try (Progress bar = progress.start("verify", total);
                ErasureCodec codec = ErasureCodec.create(m.codec(), layout.k(), layout.r())) {
            BlockScanner scanner = new BlockScanner(dir, m, bar);
            for (long s = 0; s < layout.stripes(); s++) {
                List<BlockScanner.Damage> damaged = new ArrayList<>(scanner.checkStripeFiles(s));
                boolean dataIntact = damaged.stream().allMatch(d -> !d.block().data());
                boolean checked = false;
                if (checkParity && dataIntact) {
                    Set<Integer> skip = new HashSet<>();
                    damaged.forEach(d -> skip.add(d.block().unit()));
                    damaged.addAll(scanner.checkParity(codec, s, skip));
                    checked = true;
                } else if (checkParity) {
                    bar.add(layout.k() * layout.blockSize());
                }
                reports.add(new StripeReport(s, damaged, checked, damaged.size() <= layout.r()));
            }
        }
        return new Result(m, reports, System.nanoTime() - start);
    }
}
