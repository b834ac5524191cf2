package io.hayloft.erasure.kernel.isal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.erasure.gf.Gf256;
import io.hayloft.erasure.kernel.MatrixOp;
import io.hayloft.erasure.kernel.ScalarKernel;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The ISA-L kernel against the scalar reference: every byte equal, for every kind of buffer. */
class IsalMatrixOpTest {

    private IsalKernel isal;

    @BeforeEach
    void load() {
        isal = NativeOrSkip.kernel();
    }

    /** How a test buffer is made: each kind reaches a different path of IsalMatrixOp / the shim. */
    enum Kind { HEAP, DIRECT, HEAP_SLICE, DIRECT_SLICE, READ_ONLY_HEAP, READ_ONLY_DIRECT }

    /** A buffer of {@code len} bytes at a random position inside a larger one, holding {@code data}. */
    static ByteBuffer buffer(Kind kind, byte[] data, Random rnd, boolean output) {
        int len = data.length;
        int pad = rnd.nextInt(9);
        ByteBuffer b;
        switch (kind) {
            case HEAP:
            case READ_ONLY_HEAP:
                b = ByteBuffer.allocate(len + 2 * pad);
                break;
            case DIRECT:
            case READ_ONLY_DIRECT:
                b = ByteBuffer.allocateDirect(len + 2 * pad);
                break;
            case HEAP_SLICE:
                b = ByteBuffer.wrap(new byte[len + 3 * pad + 5], pad + 3, len + pad).slice();
                break;
            default:
                b = ByteBuffer.allocateDirect(len + 3 * pad + 5).position(pad + 3).slice();
                break;
        }
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, (byte) rnd.nextInt());
        }
        b.position(pad);
        b.put(pad, data);
        b.limit(pad + len);
        if (!output && (kind == Kind.READ_ONLY_HEAP || kind == Kind.READ_ONLY_DIRECT)) {
            b = b.asReadOnlyBuffer();
        }
        return b;
    }

    static byte[][] randomMatrix(Random rnd, int rows, int cols) {
        byte[][] m = new byte[rows][cols];
        for (byte[] row : m) {
            for (int j = 0; j < cols; j++) {
                int pick = rnd.nextInt(4);
                row[j] = (byte) (pick == 0 ? 0 : pick == 1 ? 1 : rnd.nextInt(256));
            }
        }
        return m;
    }

    private static byte[] bytes(ByteBuffer b, int len) {
        byte[] r = new byte[len];
        b.get(b.position(), r, 0, len);
        return r;
    }

    /** One random case: native vs scalar, plain and accumulate, positions untouched. */
    private void compare(Random rnd, int rows, int cols, int len) {
        byte[][] m = randomMatrix(rnd, rows, cols);
        Kind[] kinds = Kind.values();
        byte[][] data = new byte[cols][len];
        ByteBuffer[] in = new ByteBuffer[cols];
        ByteBuffer[] refIn = new ByteBuffer[cols];
        for (int j = 0; j < cols; j++) {
            rnd.nextBytes(data[j]);
            in[j] = buffer(kinds[rnd.nextInt(kinds.length)], data[j], rnd, false);
            refIn[j] = ByteBuffer.wrap(data[j].clone());
        }
        byte[][] prior = new byte[rows][len];
        ByteBuffer[] out = new ByteBuffer[rows];
        ByteBuffer[] ref = new ByteBuffer[rows];
        for (int i = 0; i < rows; i++) {
            rnd.nextBytes(prior[i]);
            out[i] = buffer(kinds[rnd.nextInt(4)], prior[i], rnd, true);
            ref[i] = ByteBuffer.wrap(prior[i].clone());
        }
        int[] positions = new int[cols + rows];
        for (int j = 0; j < cols; j++) {
            positions[j] = in[j].position();
        }
        for (int i = 0; i < rows; i++) {
            positions[cols + i] = out[i].position();
        }
        boolean accumulate = rnd.nextBoolean();
        try (MatrixOp op = isal.prepare(m); MatrixOp scalar = ScalarKernel.INSTANCE.prepare(m)) {
            if (accumulate) {
                op.applyAccumulate(in, out, len);
                scalar.applyAccumulate(refIn, ref, len);
            } else {
                op.apply(in, out, len);
                scalar.apply(refIn, ref, len);
            }
        }
        String what = rows + "x" + cols + " len " + len + (accumulate ? " accumulate" : "");
        for (int i = 0; i < rows; i++) {
            assertThat(bytes(out[i], len)).as("output %d of %s", i, what).isEqualTo(ref[i].array());
            assertThat(out[i].position()).as("output position").isEqualTo(positions[cols + i]);
        }
        for (int j = 0; j < cols; j++) {
            assertThat(bytes(in[j], len)).as("input %d untouched, %s", j, what).isEqualTo(data[j]);
            assertThat(in[j].position()).as("input position").isEqualTo(positions[j]);
        }
    }

    @Test
    void matchesScalarOnRandomMatricesSizesAndBuffers() {
        Random rnd = new Random(0x15a1);
        int[] lengths = {0, 1, 2, 15, 16, 31, 32, 33, 63, 64, 65, 127, 129, 1000, 4095, 4097, 65_536, 65_537, 100_003};
        for (int len : lengths) {
            for (int t = 0; t < 6; t++) {
                compare(rnd, 1 + rnd.nextInt(8), 1 + rnd.nextInt(16), len);
            }
        }
        for (int t = 0; t < 40; t++) {
            compare(rnd, 1 + rnd.nextInt(16), 1 + rnd.nextInt(24), rnd.nextInt(20_000));
        }
    }

    @Test
    void wideMatricesAndLongHeapRangesThatAreSliced() {
        Random rnd = new Random(7);
        compare(rnd, 40, 70, 3001);  // more pointers than the shim keeps on its stack
        compare(rnd, 4, 10, 3 * IsalMatrixOp.MAX_PINNED + 17);
        compare(rnd, 2, 3, IsalMatrixOp.MAX_PINNED);
    }

    @Test
    void zeroColumnsAreSkippedAndAllZeroMatricesWork() {
        Random rnd = new Random(11);
        for (int t = 0; t < 30; t++) {
            int rows = 1 + rnd.nextInt(4);
            int cols = 2 + rnd.nextInt(10);
            byte[][] m = randomMatrix(rnd, rows, cols);
            for (byte[] row : m) {
                row[rnd.nextInt(cols)] = 0;
                row[0] = 0;
                if (t % 5 == 0) {
                    Arrays.fill(row, (byte) 0);
                }
            }
            int len = 1 + rnd.nextInt(5000);
            ByteBuffer[] in = new ByteBuffer[cols];
            ByteBuffer[] refIn = new ByteBuffer[cols];
            for (int j = 0; j < cols; j++) {
                byte[] d = new byte[len];
                rnd.nextBytes(d);
                in[j] = buffer(Kind.DIRECT, d, rnd, false);
                refIn[j] = ByteBuffer.wrap(d);
            }
            for (boolean accumulate : new boolean[] {false, true}) {
                ByteBuffer[] out = new ByteBuffer[rows];
                ByteBuffer[] ref = new ByteBuffer[rows];
                for (int i = 0; i < rows; i++) {
                    byte[] prior = new byte[len];
                    rnd.nextBytes(prior);
                    out[i] = buffer(i % 2 == 0 ? Kind.HEAP : Kind.DIRECT_SLICE, prior, rnd, true);
                    ref[i] = ByteBuffer.wrap(prior.clone());
                }
                try (MatrixOp op = isal.prepare(m); MatrixOp scalar = ScalarKernel.INSTANCE.prepare(m)) {
                    if (accumulate) {
                        op.applyAccumulate(in, out, len);
                        scalar.applyAccumulate(refIn, ref, len);
                    } else {
                        op.apply(in, out, len);
                        scalar.apply(refIn, ref, len);
                    }
                }
                for (int i = 0; i < rows; i++) {
                    assertThat(bytes(out[i], len)).as("case %d row %d accumulate %s", t, i, accumulate)
                            .isEqualTo(ref[i].array());
                }
            }
        }
    }

    @Test
    void reedSolomonTenFourVectorFromErasureMd() {
        int k = 10;
        byte[][] cauchy = new byte[4][k];
        for (int i = 0; i < 4; i++) {
            for (int j = 0; j < k; j++) {
                cauchy[i][j] = (byte) Gf256.inv((k + i) ^ j);
            }
        }
        ByteBuffer[] in = new ByteBuffer[k];
        for (int j = 0; j < k; j++) {
            in[j] = ByteBuffer.allocateDirect(1).put(0, (byte) (j + 1));
        }
        ByteBuffer[] out = new ByteBuffer[4];
        for (int i = 0; i < 4; i++) {
            out[i] = ByteBuffer.allocate(1);
        }
        try (MatrixOp op = isal.prepare(cauchy)) {
            op.apply(in, out, 1);
        }
        assertThat(new int[] {out[0].get(0) & 0xff, out[1].get(0) & 0xff, out[2].get(0) & 0xff, out[3].get(0) & 0xff})
                .containsExactly(0x35, 0xaa, 0x61, 0x37);
    }

    @Test
    void badArgumentsNameTheProblem() {
        try (MatrixOp op = isal.prepare(new byte[][] {{1, 2}, {3, 4}, {5, 6}})) {
            ByteBuffer[] two = {ByteBuffer.allocate(8), ByteBuffer.allocate(8)};
            ByteBuffer[] three = {ByteBuffer.allocate(8), ByteBuffer.allocate(8), ByteBuffer.allocate(4)};
            assertThatThrownBy(() -> op.apply(two, two, 8)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("expected 3 output buffers, got 2");
            assertThatThrownBy(() -> op.apply(two, three, 8)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("output 2 has 4 bytes remaining, needs 8");
            assertThatThrownBy(() -> op.apply(two, three, -1)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("len must be >= 0, was -1");
            ByteBuffer[] readOnly = {ByteBuffer.allocate(8), ByteBuffer.allocate(8), ByteBuffer.allocate(8).asReadOnlyBuffer()};
            assertThatThrownBy(() -> op.apply(two, readOnly, 8)).hasMessageContaining("output 2 is read-only");
        }
        assertThatThrownBy(() -> isal.prepare(new byte[][] {{1, 2}, {3}})).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("row 1 has 1 columns, expected 2");
    }

    @Test
    void closeIsIdempotentAndApplyAfterCloseFails() {
        MatrixOp op = isal.prepare(new byte[][] {{2, 3}});
        ByteBuffer[] in = {ByteBuffer.allocate(4), ByteBuffer.allocate(4)};
        ByteBuffer[] out = {ByteBuffer.allocate(4)};
        op.apply(in, out, 4);
        op.close();
        op.close();
        assertThat(((IsalMatrixOp) op).isClosed()).isTrue();
        assertThatThrownBy(() -> op.apply(in, out, 4)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        assertThatThrownBy(() -> op.applyAccumulate(in, out, 0)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void manyThreadsShareOneOp() throws Exception {
        Random seed = new Random(99);
        byte[][] m = randomMatrix(seed, 4, 10);
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (MatrixOp op = isal.prepare(m); MatrixOp scalar = ScalarKernel.INSTANCE.prepare(m)) {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Integer>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                long s = seed.nextLong();
                results.add(pool.submit(() -> {
                    Random rnd = new Random(s);
                    start.await();
                    int checked = 0;
                    for (int iter = 0; iter < 40; iter++) {
                        int len = 1 + rnd.nextInt(40_000);
                        ByteBuffer[] in = new ByteBuffer[10];
                        ByteBuffer[] ref = new ByteBuffer[10];
                        for (int j = 0; j < 10; j++) {
                            byte[] d = new byte[len];
                            rnd.nextBytes(d);
                            in[j] = (j % 2 == 0) ? ByteBuffer.allocateDirect(len).put(0, d) : ByteBuffer.wrap(d);
                            ref[j] = ByteBuffer.wrap(d);
                        }
                        ByteBuffer[] out = new ByteBuffer[4];
                        ByteBuffer[] expect = new ByteBuffer[4];
                        for (int i = 0; i < 4; i++) {
                            out[i] = (iter % 2 == 0) ? ByteBuffer.allocate(len) : ByteBuffer.allocateDirect(len);
                            expect[i] = ByteBuffer.allocate(len);
                        }
                        op.apply(in, out, len);
                        scalar.apply(ref, expect, len);
                        for (int i = 0; i < 4; i++) {
                            assertThat(bytes(out[i], len)).isEqualTo(expect[i].array());
                            checked++;
                        }
                    }
                    return checked;
                }));
            }
            start.countDown();
            for (Future<Integer> f : results) {
                assertThat(f.get(120, TimeUnit.SECONDS)).isEqualTo(160);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void closeWhileOtherThreadsApplyNeverCrashesAndStopsThem() throws Exception {
        MatrixOp op = isal.prepare(randomMatrix(new Random(3), 4, 10));
        int threads = 4;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        CountDownLatch running = new CountDownLatch(threads);
        AtomicInteger applied = new AtomicInteger();
        List<Future<String>> results = new ArrayList<>();
        try {
            for (int t = 0; t < threads; t++) {
                results.add(pool.submit(() -> {
                    ByteBuffer[] in = new ByteBuffer[10];
                    for (int j = 0; j < 10; j++) {
                        in[j] = ByteBuffer.allocateDirect(256 * 1024);
                    }
                    ByteBuffer[] out = {ByteBuffer.allocate(256 * 1024), ByteBuffer.allocateDirect(256 * 1024),
                            ByteBuffer.allocate(256 * 1024), ByteBuffer.allocate(256 * 1024)};
                    op.apply(in, out, 256 * 1024);
                    applied.incrementAndGet();
                    running.countDown();
                    try {
                        while (true) {
                            op.apply(in, out, 256 * 1024);
                        }
                    } catch (IllegalStateException e) {
                        return e.getMessage();
                    }
                }));
            }
            assertThat(running.await(60, TimeUnit.SECONDS)).isTrue();
            op.close();
            for (Future<String> f : results) {
                assertThat(f.get(60, TimeUnit.SECONDS)).contains("closed");
            }
            assertThat(applied.get()).isEqualTo(threads);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void invertMatchesTheFieldAndDetectsSingularMatrices() {
        Random rnd = new Random(5);
        int inverted = 0;
        for (int t = 0; t < 50; t++) {
            int n = 1 + rnd.nextInt(14);
            byte[][] m = randomMatrix(rnd, n, n);
            byte[][] inv = isal.invert(m);
            if (inv == null) {
                continue;
            }
            inverted++;
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < n; j++) {
                    int s = 0;
                    for (int x = 0; x < n; x++) {
                        s ^= Gf256.mul(inv[i][x] & 0xff, m[x][j] & 0xff);
                    }
                    assertThat(s).as("(inv * m)[%d][%d], n=%d", i, j, n).isEqualTo(i == j ? 1 : 0);
                }
            }
        }
        assertThat(inverted).isGreaterThan(10);
        assertThat(isal.invert(new byte[][] {{1, 2}, {1, 2}})).isNull();
    }

    @Test
    void reportsVersionAndTheKernelFamilyTheCpuAllows() throws Exception {
        assertThat(isal.name()).isEqualTo("native");
        assertThat(isal.isalVersion()).matches("\\d+\\.\\d+.*");
        assertThat(isal.dispatched()).startsWith("ec_encode_data_");
        assertThat(isal.description()).contains(isal.isalVersion()).contains(isal.kernelFamily());
        String flags = Files.readString(Path.of("/proc/cpuinfo"));
        String[] v = isal.isalVersion().split("\\.");
        boolean gfniBuild = Integer.parseInt(v[0]) > 2 || (Integer.parseInt(v[0]) == 2 && Integer.parseInt(v[1]) >= 31);
        if (gfniBuild && flags.contains(" gfni") && flags.contains(" avx512bw") && flags.contains(" avx512vl")) {
            assertThat(isal.kernelFamily()).isEqualTo("GFNI (AVX-512)");
        } else if (flags.contains(" avx2")) {
            assertThat(isal.kernelFamily()).isNotIn("base (no SIMD)", "unknown");
        }
        assertThat(IsalKernel.family("ec_encode_data_avx2_gfni")).isEqualTo("GFNI (AVX2)");
        assertThat(IsalKernel.family("ec_encode_data_avx2")).isEqualTo("AVX2");
        assertThat(IsalKernel.family("ec_encode_data_avx512")).isEqualTo("AVX-512");
        assertThat(IsalKernel.family("ec_encode_data_base")).isEqualTo("base (no SIMD)");
        assertThat(isal.allocate(16).isDirect()).isTrue();
        ByteBuffer big = isal.allocate(1 << 20);
        assertThat(big.isDirect()).isTrue();
        assertThat(big.position()).isZero();
        assertThat(big.remaining()).isEqualTo(1 << 20);
        assertThat(big.capacity()).isEqualTo(1 << 20);
    }
}
