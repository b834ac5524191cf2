package io.hayloft.erasure;

import java.util.Arrays;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.erasure.kernel.GfKernel;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The shared suite: every codec on every backend that loads here (docs/erasure.md). Each test names
 * its backend, so a native-only failure is visible as such.
 */
class CodecSuiteTest {

    static Stream<Arguments> codecs() {
        List<Arguments> list = new ArrayList<>();
        Backends.all().forEach(kernel -> {
            for (CodecKind kind : CodecKind.values()) {
                list.add(Arguments.of(kernel, kind));
            }
        });
        return list.stream();
    }

    static Stream<Arguments> codecsAndShapes() {
        List<Arguments> list = new ArrayList<>();
        int[][] shapes = {{10, 4}, {6, 3}, {12, 4}, {3, 2}};
        codecs().forEach(a -> {
            for (int[] s : shapes) {
                list.add(Arguments.of(a.get()[0], a.get()[1], s[0], s[1]));
            }
        });
        return list.stream();
    }

    /** All C(k+r, r) patterns of r losses decode; r + 1 losses fail with a clear error. */
    @ParameterizedTest(name = "{1}({2},{3}) on {0}")
    @MethodSource("codecsAndShapes")
    void everyPatternOfRLossesDecodes(GfKernel kernel, CodecKind kind, int k, int r) {
        Random rnd = new Random(k * 31L + r);
        try (ErasureCodec codec = ErasureCodec.create(kind, k, r, kernel, 4096)) {
            byte[][] stripe = Stripes.encode(codec, Stripes.random(rnd, k, 18));
            int n = k + r;
            int patterns = 0;
            for (int[] lost : combinations(n, r)) {
                byte[][] work = new byte[n][];
                for (int u = 0; u < n; u++) {
                    work[u] = stripe[u].clone();
                }
                for (int u : lost) {
                    rnd.nextBytes(work[u]);
                }
                codec.decode(Stripes.wrap(work), lost);
                for (int u = 0; u < n; u++) {
                    assertThat(work[u]).as("unit %d after losing %s", u, Arrays.toString(lost)).isEqualTo(stripe[u]);
                }
                patterns++;
            }
            assertThat(patterns).isEqualTo(binomial(n, r));
            int[] tooMany = new int[r + 1];
            for (int i = 0; i <= r; i++) {
                tooMany[i] = i;
            }
            assertThatThrownBy(() -> codec.decode(Stripes.wrap(stripe), tooMany))
                    .isInstanceOf(TooManyErasuresException.class)
                    .hasMessageContaining((r + 1) + " of " + n + " units are missing")
                    .hasMessageContaining("at most " + r);
        }
    }

    /** The half-units each single-unit repair reads at (10,4), counted through the reader. */
    @ParameterizedTest(name = "{1} on {0}")
    @MethodSource("codecs")
    void singleUnitRepairReadsTheTable(GfKernel kernel, CodecKind kind) throws Exception {
        int unitSize = 1000;
        try (ErasureCodec codec = ErasureCodec.create(kind, 10, 4, kernel, 128)) {
            byte[][] stripe = Stripes.encode(codec, Stripes.random(new Random(7), 10, unitSize));
            for (int lost = 0; lost < 14; lost++) {
                Stripes.CountingReader reader = new Stripes.CountingReader(stripe, lost);
                byte[][] out = new byte[14][unitSize];
                long read = codec.repair(unitSize, lost, new int[0], reader, Stripes.into(out));
                assertThat(out[lost]).as("rebuilt unit %d", lost).isEqualTo(stripe[lost]);
                int halves = expectedHalves(kind, lost);
                assertThat(reader.bytes.get()).as("bytes read to repair unit %d", lost).isEqualTo(halves * unitSize / 2L);
                assertThat(read).isEqualTo(reader.bytes.get());
                long planned = codec.planRepair(unitSize, lost).stream().mapToLong(ReadRange::length).sum();
                assertThat(planned).as("planRepair agrees with what repair read").isEqualTo(read);
            }
        }
    }

    static int expectedHalves(CodecKind kind, int unit) {
        if (kind == CodecKind.RS || unit >= 10) {
            return 20;
        }
        if (kind == CodecKind.HH_XOR) {
            return unit <= 5 ? 13 : 14;
        }
        return 13;
    }

    @ParameterizedTest(name = "{1} on {0}")
    @MethodSource("codecs")
    void xorPlusRepairOfD9ReadsThePapersRanges(GfKernel kernel, CodecKind kind) throws Exception {
        if (kind != CodecKind.HH_XOR_PLUS && kind != CodecKind.HH_NONXOR) {
            return;
        }
        try (ErasureCodec codec = ErasureCodec.create(kind, 10, 4, kernel, 1 << 16)) {
            List<ReadRange> plan = codec.planRepair(64, 9);
            List<ReadRange> expected = new ArrayList<>();
            for (int j = 0; j < 9; j++) {
                expected.add(new ReadRange(j, 32, 32));
            }
            expected.add(new ReadRange(10, 32, 32));
            expected.add(new ReadRange(11, 0, 32));
            expected.add(new ReadRange(12, 32, 32));
            expected.add(new ReadRange(13, 32, 32));
            assertThat(plan).containsExactlyInAnyOrderElementsOf(expected);
        }
    }

    /** Repair with a helper unavailable falls back to a full decode and still rebuilds the unit. */
    @ParameterizedTest(name = "{1} on {0}")
    @MethodSource("codecs")
    void repairWithMissingHelpers(GfKernel kernel, CodecKind kind) throws Exception {
        int unitSize = 600;
        try (ErasureCodec codec = ErasureCodec.create(kind, 10, 4, kernel, 100)) {
            byte[][] stripe = Stripes.encode(codec, Stripes.random(new Random(3), 10, unitSize));
            int[][] cases = {{0, 10}, {9, 11, 12}, {4, 1, 2, 13}, {12, 0, 5, 9}};
            for (int[] c : cases) {
                int lost = c[0];
                int[] others = Arrays.copyOfRange(c, 1, c.length);
                Stripes.CountingReader reader = new Stripes.CountingReader(stripe, c);
                byte[][] out = new byte[14][unitSize];
                long read = codec.repair(unitSize, lost, others, reader, Stripes.into(out));
                assertThat(out[lost]).isEqualTo(stripe[lost]);
                assertThat(read).isEqualTo(10L * unitSize);
            }
        }
    }

    /** Streaming encode/decode in small chunks equals the in-memory result, for odd RS sizes too. */
    @ParameterizedTest(name = "{1} on {0}")
    @MethodSource("codecs")
    void streamingMatchesInMemory(GfKernel kernel, CodecKind kind) throws Exception {
        int unitSize = kind == CodecKind.RS ? 100_001 : 100_002;
        try (ErasureCodec codec = ErasureCodec.create(kind, 6, 3, kernel, 4096)) {
            byte[][] stripe = Stripes.encode(codec, Stripes.random(new Random(11), 6, unitSize));
            byte[][] streamed = new byte[9][unitSize];
            for (int j = 0; j < 6; j++) {
                streamed[j] = stripe[j];
            }
            codec.encode(unitSize, new Stripes.CountingReader(stripe, 6, 7, 8), Stripes.into(streamed));
            for (int i = 6; i < 9; i++) {
                assertThat(streamed[i]).as("parity %d", i).isEqualTo(stripe[i]);
            }
            byte[][] rebuilt = new byte[9][unitSize];
            Stripes.CountingReader reader = new Stripes.CountingReader(stripe, 1, 4, 7);
            codec.decode(unitSize, new int[] {1, 4, 7}, reader, Stripes.into(rebuilt));
            assertThat(rebuilt[1]).isEqualTo(stripe[1]);
            assertThat(rebuilt[4]).isEqualTo(stripe[4]);
            assertThat(rebuilt[7]).isEqualTo(stripe[7]);
            assertThat(reader.bytes.get()).as("a full decode reads k whole units").isEqualTo(6L * unitSize);
        }
    }

    /** A degraded read decodes only the range asked for: k * len bytes, in either substripe or across both. */
    @ParameterizedTest(name = "{1} on {0}")
    @MethodSource("codecs")
    void degradedReadsReadKTimesTheRange(GfKernel kernel, CodecKind kind) throws Exception {
        int unitSize = 4096;
        Random rnd = new Random(5);
        try (ErasureCodec codec = ErasureCodec.create(kind, 10, 4, kernel, 256)) {
            byte[][] stripe = Stripes.encode(codec, Stripes.random(rnd, 10, unitSize));
            long[][] ranges = {{0, 100}, {1000, 1000}, {2000, 200}, {2040, 100}, {3000, 1096}, {0, 4096}, {17, 0}};
            for (int unit = 0; unit < 10; unit++) {
                for (long[] range : ranges) {
                    int len = (int) range[1];
                    Stripes.CountingReader reader = new Stripes.CountingReader(stripe, unit);
                    ByteBuffer dst = ByteBuffer.allocate(len + 8).position(4).limit(4 + len);
                    long read = codec.readRange(unitSize, unit, range[0], dst, new int[0], reader);
                    assertThat(dst.position()).isEqualTo(4 + len);
                    assertThat(Arrays.copyOfRange(dst.array(), 4, 4 + len))
                            .isEqualTo(Arrays.copyOfRange(stripe[unit], (int) range[0], (int) range[0] + len));
                    assertThat(read).as("bytes read for %s of unit %d", Arrays.toString(range), unit).isEqualTo(10L * len);
                    assertThat(reader.bytes.get()).isEqualTo(read);
                }
            }
            // With r - 1 more units down the range is still right, and never more than 2 k len is read.
            Stripes.CountingReader reader = new Stripes.CountingReader(stripe, 3, 10, 0, 12);
            ByteBuffer dst = ByteBuffer.allocateDirect(500);
            long read = codec.readRange(unitSize, 3, 1900, dst, new int[] {10, 0, 12}, reader);
            byte[] got = new byte[500];
            dst.flip().get(got);
            assertThat(got).isEqualTo(Arrays.copyOfRange(stripe[3], 1900, 2400));
            assertThat(read).isBetween(10L * 500, 20L * 500);
            assertThatThrownBy(() -> codec.readRange(unitSize, 3, 0, ByteBuffer.allocate(10), new int[] {0, 1, 2, 4},
                    new Stripes.CountingReader(stripe, 0, 1, 2, 3, 4)))
                    .isInstanceOf(TooManyErasuresException.class).hasMessageContaining("5 of 14 units are missing");
        }
    }

    /** Heap and direct buffers mixed, at offsets into larger buffers, and empty units. */
    @ParameterizedTest(name = "{1} on {0}")
    @MethodSource("codecs")
    void mixedBuffersOffsetsAndEmptyUnits(GfKernel kernel, CodecKind kind) {
        int n = 2 * 777;
        try (ErasureCodec codec = ErasureCodec.create(kind, 10, 4, kernel, 1 << 16)) {
            byte[][] stripe = Stripes.encode(codec, Stripes.random(new Random(9), 10, n));
            ByteBuffer[] units = new ByteBuffer[14];
            for (int u = 0; u < 14; u++) {
                ByteBuffer b = u % 2 == 0 ? ByteBuffer.allocateDirect(n + 64) : ByteBuffer.allocate(n + 64);
                b.position(13 + u);
                b.put(u < 10 ? stripe[u] : new byte[n]);
                b.position(13 + u).limit(13 + u + n);
                units[u] = b;
            }
            codec.encode(Arrays.copyOf(units, 10), Arrays.copyOfRange(units, 10, 14));
            for (int u = 0; u < 14; u++) {
                byte[] got = new byte[n];
                units[u].duplicate().get(got);
                assertThat(got).as("unit %d", u).isEqualTo(stripe[u]);
                assertThat(units[u].position()).isEqualTo(13 + u);
            }
            codec.decode(units, 2, 11, 13);
            byte[] got = new byte[n];
            units[2].duplicate().get(got);
            assertThat(got).isEqualTo(stripe[2]);

            ByteBuffer[] empty = new ByteBuffer[14];
            for (int u = 0; u < 14; u++) {
                empty[u] = ByteBuffer.allocate(0);
            }
            codec.encode(Arrays.copyOf(empty, 10), Arrays.copyOfRange(empty, 10, 14));
            codec.decode(empty, 0, 1, 2, 3);
        }
    }

    /** One codec instance, reused and shared by many threads, always gives the same bytes. */
    @ParameterizedTest(name = "{1} on {0}")
    @MethodSource("codecs")
    void reusableAndThreadSafe(GfKernel kernel, CodecKind kind) throws Exception {
        try (ErasureCodec codec = ErasureCodec.create(kind, 10, 4, kernel, 512)) {
            byte[][] data = Stripes.random(new Random(1), 10, 4096);
            byte[][] first = Stripes.encode(codec, data);
            assertThat(Stripes.encode(codec, data)).isDeepEqualTo(first);
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    int seed = t;
                    futures.add(pool.submit(() -> {
                        Random rnd = new Random(seed);
                        for (int i = 0; i < 40; i++) {
                            assertThat(Stripes.encode(codec, data)).isDeepEqualTo(first);
                            int a = rnd.nextInt(14);
                            int b = (a + 1 + rnd.nextInt(13)) % 14;
                            byte[][] work = new byte[14][];
                            for (int u = 0; u < 14; u++) {
                                work[u] = u == a || u == b ? new byte[4096] : first[u].clone();
                            }
                            codec.decode(Stripes.wrap(work), a, b);
                            assertThat(work).isDeepEqualTo(first);
                        }
                        return null;
                    }));
                }
                for (Future<?> f : futures) {
                    f.get(2, TimeUnit.MINUTES);
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }

    static List<int[]> combinations(int n, int m) {
        List<int[]> out = new ArrayList<>();
        int[] c = new int[m];
        for (int i = 0; i < m; i++) {
            c[i] = i;
        }
        while (true) {
            out.add(c.clone());
            int i = m - 1;
            while (i >= 0 && c[i] == n - m + i) {
                i--;
            }
            if (i < 0) {
                return out;
            }
            c[i]++;
            for (int j = i + 1; j < m; j++) {
                c[j] = c[j - 1] + 1;
            }
        }
    }

    static long binomial(int n, int m) {
        long b = 1;
        for (int i = 1; i <= m; i++) {
            b = b * (n - m + i) / i;
        }
        return b;
    }
}
