package io.hayloft.erasure;

import java.util.Arrays;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.erasure.gf.Gf256;
import io.hayloft.erasure.kernel.GfKernel;
import io.hayloft.erasure.kernel.Kernels;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The fused encode (every parity piece, piggybacks and coupling of a tile in one pass) against a
 * byte-at-a-time reference written straight from docs/erasure.md, for every codec and every backend that
 * loads here: the streaming encode (chunks of every size, a partial last chunk) and the in-memory
 * encode (heap and direct buffers mixed, at non-zero positions) must both give the reference's bytes.
 * Piece sizes sit on and around the kernels' tiles (16 KiB Java, 32 KiB native steps, 4 KiB native
 * piggyback loop) and the vector length, and include 1 byte and odd sizes.
 */
class FusedEncodePropertiesTest {

    static final List<GfKernel> BACKENDS = Backends.all().toList();

    /** Bytes per substripe (= unit size for RS, half of it for Hitchhiker). */
    static final int[] PIECES = {1, 2, 3, 63, 64, 65, 127, 128, 129, 4096 - 1, 4096, 4096 + 1, 16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1,
        32 * 1024 - 1, 32 * 1024, 32 * 1024 + 1, 48 * 1024 + 77};

    record Case(CodecKind kind, int k, int r, int piece, int backend, int chunk, long seed) {
    }

    @Provide
    Arbitrary<Case> cases() {
        Arbitrary<Integer> piece = Arbitraries.oneOf(Arbitraries.of(Arrays.stream(PIECES).boxed().toList()),
                Arbitraries.integers().between(1, 70_000).filter(n -> n % 2 == 1));
        Arbitrary<Integer> shape = Arbitraries.integers().between(0, 3);
        return Combinators.combine(Arbitraries.of(CodecKind.values()), shape, piece,
                        Arbitraries.integers().between(0, BACKENDS.size() - 1),
                        Arbitraries.of(16, 48, 1000, 4096, 65_536, ErasureCodec.DEFAULT_CHUNK_SIZE), Arbitraries.longs())
                .as((kind, s, p, b, chunk, seed) -> {
                    int[][] shapes = {{10, 4}, {6, 3}, {3, 2}, {12, 4}};
                    return new Case(kind, shapes[s][0], shapes[s][1], p, b, chunk, seed);
                });
    }

    @Property(tries = 250)
    void streamingAndInMemoryEncodeMatchTheReference(@ForAll("cases") Case c) throws Exception {
        Random rnd = new Random(c.seed());
        int s = c.kind().isHitchhiker() ? 2 : 1;
        int unit = s * c.piece();
        byte[][] data = Stripes.random(rnd, c.k(), unit);
        byte[][] expected = Reference.parity(c.kind(), c.k(), c.r(), data);
        GfKernel kernel = BACKENDS.get(c.backend());
        try (ErasureCodec codec = ErasureCodec.create(c.kind(), c.k(), c.r(), kernel, c.chunk())) {
            byte[][] all = new byte[c.k() + c.r()][];
            System.arraycopy(data, 0, all, 0, c.k());
            for (int i = 0; i < c.r(); i++) {
                all[c.k() + i] = new byte[unit];
            }
            codec.encode(unit, new Stripes.CountingReader(all), Stripes.into(all));
            for (int i = 0; i < c.r(); i++) {
                assertThat(all[c.k() + i]).as("streaming parity %d of %s on %s, unit %d", i, codec, kernel.name(), unit)
                        .isEqualTo(expected[i]);
            }

            ByteBuffer[] d = new ByteBuffer[c.k()];
            for (int j = 0; j < c.k(); j++) {
                d[j] = place(rnd, data[j]);
            }
            ByteBuffer[] p = new ByteBuffer[c.r()];
            for (int i = 0; i < c.r(); i++) {
                p[i] = place(rnd, new byte[unit]);
            }
            codec.encode(d, p);
            for (int i = 0; i < c.r(); i++) {
                byte[] got = new byte[unit];
                p[i].duplicate().get(got);
                assertThat(got).as("in-memory parity %d of %s on %s, unit %d", i, codec, kernel.name(), unit)
                        .isEqualTo(expected[i]);
            }
        }
    }

    /** The reference itself reproduces docs/erasure.md's vectors (P0 and P1 of every Hitchhiker variant). */
    @net.jqwik.api.Example
    void referenceReproducesTheErasureMdVectors() {
        int[] seq = new int[80];
        seq[0] = 1;
        for (int x = 1; x < 80; x++) {
            seq[x] = (73 * seq[x - 1] + 41) & 0xff;
        }
        byte[][] data = new byte[10][8];
        for (int j = 0; j < 10; j++) {
            for (int t = 0; t < 4; t++) {
                data[j][t] = (byte) seq[4 * j + t];
                data[j][4 + t] = (byte) seq[40 + 4 * j + t];
            }
        }
        assertThat(Stripes.hex(Reference.parity(CodecKind.HH_XOR_PLUS, 10, 4, data)[1], 0, 8)).isEqualTo("5d 2e 47 28 29 da f3 e4");
        assertThat(Stripes.hex(Reference.parity(CodecKind.HH_XOR, 10, 4, data)[3], 0, 8)).isEqualTo("cb 00 ce c5 a9 7d 4c ce");
        assertThat(Stripes.hex(Reference.parity(CodecKind.HH_NONXOR, 10, 4, data)[1], 0, 8)).isEqualTo("56 36 b5 0b 67 17 52 2c");
        assertThat(Stripes.hex(Reference.parity(CodecKind.HH_NONXOR, 10, 4, data)[2], 0, 8)).isEqualTo("c8 63 25 5e 69 b8 dd f3");
    }

    /** The bytes at a random position of a heap or direct buffer with garbage around them. */
    private static ByteBuffer place(Random rnd, byte[] bytes) {
        int at = rnd.nextInt(8);
        ByteBuffer b = rnd.nextBoolean() ? ByteBuffer.allocateDirect(at + bytes.length + 3) : ByteBuffer.allocate(at + bytes.length + 3);
        while (b.hasRemaining()) {
            b.put((byte) rnd.nextInt());
        }
        b.position(at);
        b.put(bytes);
        b.position(at).limit(at + bytes.length);
        return b;
    }

    /** docs/erasure.md, one byte at a time, with none of the codec's code: the oracle for the fused passes. */
    static final class Reference {

        static byte[][] parity(CodecKind kind, int k, int r, byte[][] data) {
            int[][] c = new int[r][k];
            for (int i = 0; i < r; i++) {
                for (int j = 0; j < k; j++) {
                    c[i][j] = Gf256.inv((k + i) ^ j);
                }
            }
            int n = data[0].length;
            byte[][] p = new byte[r][n];
            if (kind == CodecKind.RS) {
                for (int t = 0; t < n; t++) {
                    for (int i = 0; i < r; i++) {
                        p[i][t] = (byte) f(c[i], data, t);
                    }
                }
                return p;
            }
            int[][] m = new int[r][k];
            for (int i = 0; i < r; i++) {
                for (int j = 0; j < k; j++) {
                    m[i][j] = kind == CodecKind.HH_XOR_PLUS ? Gf256.div(c[i][j], c[1][j]) : c[i][j];
                }
            }
            int grouped = kind == CodecKind.HH_XOR ? k : k - 1;
            int groups = r - 1;
            int[] groupOf = new int[k];
            Arrays.fill(groupOf, -1);
            for (int g = 0, next = 0; g < groups; g++) {
                int size = grouped / groups + (g >= groups - grouped % groups ? 1 : 0);
                for (int q = 0; q < size; q++) {
                    groupOf[next++] = g;
                }
            }
            int half = n / 2;
            for (int t = 0; t < half; t++) {
                for (int i = 0; i < r; i++) {
                    int a = f(m[i], data, t);
                    int b = f(m[i], data, half + t);
                    if (i >= 1) {
                        for (int j = 0; j < k; j++) {
                            if (groupOf[j] == i - 1) {
                                int coef = kind == CodecKind.HH_NONXOR ? c[1][j] : 1;
                                b ^= Gf256.mul(coef, data[j][t] & 0xff);
                            }
                        }
                    }
                    p[i][t] = (byte) a;
                    p[i][half + t] = (byte) b;
                }
                if (kind != CodecKind.HH_XOR) {
                    p[1][t] ^= p[1][half + t];
                }
            }
            return p;
        }

        private static int f(int[] row, byte[][] data, int t) {
            int v = 0;
            for (int j = 0; j < row.length; j++) {
                v ^= Gf256.mul(row[j], data[j][t] & 0xff);
            }
            return v;
        }
    }
}
