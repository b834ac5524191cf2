package io.hayloft.erasure;

import io.hayloft.erasure.kernel.Kernels;
import java.util.Arrays;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** Properties over random codes, unit sizes and loss patterns, on the default backend. */
class CodecPropertiesTest {

    record Case(CodecKind kind, int k, int r, int unitSize, long seed) {
    }

    @Provide
    Arbitrary<Case> cases() {
        return Combinators.combine(
                Arbitraries.of(CodecKind.values()),
                Arbitraries.integers().between(1, 20),
                Arbitraries.integers().between(1, 6),
                Arbitraries.integers().between(0, 700),
                Arbitraries.longs())
                .as((kind, k, r, size, seed) -> {
                    int rr = kind.isHitchhiker() ? Math.max(2, r) : r;
                    int kk = kind.isHitchhiker() ? Math.max(k, rr) : k;
                    int n = kind.isHitchhiker() ? size & ~1 : size;
                    return new Case(kind, kk, rr, n, seed);
                });
    }

    @Property(tries = 150)
    void anyRLossesDecodeAndRepair(@ForAll("cases") Case c) throws Exception {
        Random rnd = new Random(c.seed());
        try (ErasureCodec codec = ErasureCodec.create(c.kind(), c.k(), c.r(),
                Kernels.best(), 16 * (1 + rnd.nextInt(8)))) {
            byte[][] stripe = Stripes.encode(codec, Stripes.random(rnd, c.k(), c.unitSize()));
            int n = c.k() + c.r();
            List<Integer> units = new ArrayList<>();
            for (int u = 0; u < n; u++) {
                units.add(u);
            }
            Collections.shuffle(units, rnd);
            int losses = 1 + rnd.nextInt(c.r());
            int[] lost = units.subList(0, losses).stream().mapToInt(Integer::intValue).toArray();

            byte[][] work = new byte[n][];
            for (int u = 0; u < n; u++) {
                work[u] = stripe[u].clone();
            }
            for (int u : lost) {
                Arrays.fill(work[u], (byte) 0x5a);
            }
            codec.decode(Stripes.wrap(work), lost);
            assertThat(work).isDeepEqualTo(stripe);

            byte[][] out = new byte[n][c.unitSize()];
            int[] others = Arrays.copyOfRange(lost, 1, lost.length);
            codec.repair(c.unitSize(), lost[0], others, new Stripes.CountingReader(stripe, lost), Stripes.into(out));
            assertThat(out[lost[0]]).isEqualTo(stripe[lost[0]]);

            if (c.unitSize() > 0) {
                int off = rnd.nextInt(c.unitSize());
                int len = rnd.nextInt(c.unitSize() - off + 1);
                ByteBuffer dst = ByteBuffer.allocate(len);
                long read = codec.readRange(c.unitSize(), lost[0], off, dst, others, new Stripes.CountingReader(stripe, lost));
                assertThat(dst.array()).isEqualTo(Arrays.copyOfRange(stripe[lost[0]], off, off + len));
                assertThat(read).isLessThanOrEqualTo(2L * c.k() * len);
            }
        }
    }
}
