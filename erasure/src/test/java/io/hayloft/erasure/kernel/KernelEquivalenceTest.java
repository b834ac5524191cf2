package io.hayloft.erasure.kernel;

import java.util.Arrays;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.erasure.gf.Gf256;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * Every kernel that loads in this JVM ({@link Kernels#available()}) computes the same bytes as
 * {@link ScalarKernel}, on random matrices rich in 0 and 1 coefficients, random lengths around vector
 * and tile boundaries, offsets into larger buffers, heap, direct and read-only buffers mixed, with
 * {@code apply} and {@code applyAccumulate}, and from many threads sharing one op.
 */
class KernelEquivalenceTest {

    @Test
    void vectorKernelIsTestedWhenTheModuleIsPresent() {
        List<String> names = new ArrayList<>();
        for (GfKernel k : Kernels.available()) {
            names.add(k.name());
        }
        assertThat(names).endsWith("java");
        if (ModuleLayer.boot().findModule("jdk.incubator.vector").isPresent()) {
            // Surefire adds the module; without this check a broken factory would skip the suite silently.
            assertThat(names).contains("vector");
            assertThat(Kernels.byName("vector").description()).contains("bit").contains("JDK " + Runtime.version().feature());
        }
    }

    @Test
    void reedSolomonParityOfTheReferenceVector() {
        // docs/erasure.md: one byte per unit, d_j = j + 1; RS(10,4) parity 35 aa 61 37, at every offset of a long unit.
        int k = 10;
        int r = 4;
        byte[][] cauchy = new byte[r][k];
        for (int i = 0; i < r; i++) {
            for (int j = 0; j < k; j++) {
                cauchy[i][j] = (byte) Gf256.inv((k + i) ^ j);
            }
        }
        int len = 3 * 16 * 1024 + 99;
        for (GfKernel kernel : Kernels.available()) {
            ByteBuffer[] in = new ByteBuffer[k];
            for (int j = 0; j < k; j++) {
                byte[] b = new byte[len];
                Arrays.fill(b, (byte) (j + 1));
                in[j] = j % 2 == 0 ? ByteBuffer.wrap(b) : ByteBuffer.allocateDirect(len).put(b).flip();
            }
            ByteBuffer[] out = {ByteBuffer.allocate(len), ByteBuffer.allocateDirect(len), ByteBuffer.allocate(len),
                ByteBuffer.allocateDirect(len)};
            try (MatrixOp op = kernel.prepare(cauchy)) {
                op.apply(in, out, len);
            }
            int[] expected = {0x35, 0xaa, 0x61, 0x37};
            for (int i = 0; i < r; i++) {
                for (int t = 0; t < len; t++) {
                    if ((out[i].get(t) & 0xff) != expected[i]) {
                        throw new AssertionError(kernel.name() + ": parity " + i + " byte " + t + " is "
                                + (out[i].get(t) & 0xff) + ", expected " + expected[i]);
                    }
                }
            }
        }
    }

    @Property(tries = 150)
    void everyKernelMatchesScalar(@ForAll("shapes") int[] shape, @ForAll("lengths") int len,
                                  @ForAll long seed, @ForAll boolean accumulate) {
        Random rnd = new Random(seed);
        int rows = shape[0];
        int cols = shape[1];
        double pZero = rnd.nextInt(3) * 0.2;
        double pOne = rnd.nextInt(3) * 0.25;
        byte[][] m = KernelFixtures.matrix(rnd, rows, cols, pZero, pOne);
        ByteBuffer[] in = new ByteBuffer[cols];
        for (int j = 0; j < cols; j++) {
            in[j] = KernelFixtures.buffer(rnd, KernelFixtures.randomKind(rnd, true), rnd.nextInt(9), len);
        }
        ByteBuffer[] out = new ByteBuffer[rows];
        for (int i = 0; i < rows; i++) {
            out[i] = KernelFixtures.buffer(rnd, KernelFixtures.randomKind(rnd, false), rnd.nextInt(9), len);
        }
        assertAllKernelsAgree(m, in, out, len, accumulate);
    }

    @Provide
    Arbitrary<int[]> shapes() {
        // The usual codec shapes plus small and odd ones; row counts 1..9 cover every row grouping.
        Arbitrary<int[]> usual = Arbitraries.of(new int[] {4, 10}, new int[] {1, 10}, new int[] {3, 6}, new int[] {2, 3},
                new int[] {1, 20}, new int[] {2, 20}, new int[] {4, 14}, new int[] {10, 10});
        Arbitrary<int[]> random = Arbitraries.integers().between(1, 9)
                .flatMap(r -> Arbitraries.integers().between(1, 24).map(c -> new int[] {r, c}));
        return Arbitraries.oneOf(usual, random);
    }

    @Provide
    Arbitrary<Integer> lengths() {
        return Arbitraries.oneOf(
                Arbitraries.of(Arrays.stream(KernelFixtures.EDGE_LENGTHS).boxed().toArray(Integer[]::new)),
                Arbitraries.integers().between(0, 600),
                Arbitraries.integers().between(0, 70_000));
    }

    @Property(tries = 40)
    void zeroAndOneOnlyMatricesMatchScalar(@ForAll @IntRange(min = 1, max = 6) int rows,
                                           @ForAll @IntRange(min = 1, max = 16) int cols, @ForAll long seed) {
        // The XOR fast paths: piggyback rows of Hitchhiker and unit rows of decode matrices.
        Random rnd = new Random(seed);
        byte[][] m = KernelFixtures.matrix(rnd, rows, cols, 0.5, 0.5);
        int len = rnd.nextInt(5000);
        ByteBuffer[] in = new ByteBuffer[cols];
        for (int j = 0; j < cols; j++) {
            in[j] = KernelFixtures.buffer(rnd, KernelFixtures.randomKind(rnd, true), rnd.nextInt(5), len);
        }
        ByteBuffer[] out = new ByteBuffer[rows];
        for (int i = 0; i < rows; i++) {
            out[i] = KernelFixtures.buffer(rnd, KernelFixtures.randomKind(rnd, false), rnd.nextInt(5), len);
        }
        assertAllKernelsAgree(m, in, out, len, rnd.nextBoolean());
    }

    @Test
    void oneMebibyteReedSolomonStripe() {
        Random rnd = new Random(7);
        int len = 1 << 20;
        byte[][] m = KernelFixtures.matrix(rnd, 4, 10, 0, 0);
        ByteBuffer[] in = new ByteBuffer[10];
        for (int j = 0; j < 10; j++) {
            in[j] = KernelFixtures.buffer(rnd, j == 3 ? KernelFixtures.Kind.DIRECT : KernelFixtures.Kind.HEAP, 0, len);
        }
        ByteBuffer[] out = new ByteBuffer[4];
        for (int i = 0; i < 4; i++) {
            out[i] = KernelFixtures.buffer(rnd, i == 2 ? KernelFixtures.Kind.DIRECT : KernelFixtures.Kind.HEAP, 0, len);
        }
        assertAllKernelsAgree(m, in, out, len, false);
    }

    @Test
    void manyThreadsShareOneOp() throws Exception {
        Random seeds = new Random(11);
        byte[][] m = KernelFixtures.matrix(seeds, 4, 10, 0.1, 0.2);
        for (GfKernel kernel : Kernels.available()) {
            MatrixOp op = kernel.prepare(m);
            MatrixOp ref = ScalarKernel.INSTANCE.prepare(m);
            int threads = 8;
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int th = 0; th < threads; th++) {
                    long seed = seeds.nextLong();
                    futures.add(pool.submit(() -> {
                        Random rnd = new Random(seed);
                        for (int round = 0; round < 20; round++) {
                            int len = rnd.nextInt(40_000);
                            ByteBuffer[] in = new ByteBuffer[10];
                            for (int j = 0; j < 10; j++) {
                                in[j] = KernelFixtures.buffer(rnd, KernelFixtures.randomKind(rnd, true), rnd.nextInt(4), len);
                            }
                            ByteBuffer[] out = new ByteBuffer[4];
                            for (int i = 0; i < 4; i++) {
                                out[i] = KernelFixtures.buffer(rnd, KernelFixtures.randomKind(rnd, false), 0, len);
                            }
                            ByteBuffer[] expected = KernelFixtures.copies(out);
                            boolean acc = rnd.nextBoolean();
                            run(op, in, out, len, acc);
                            run(ref, in, expected, len, acc);
                            for (int i = 0; i < 4; i++) {
                                KernelFixtures.assertSameBytes(KernelFixtures.whole(out[i]), KernelFixtures.whole(expected[i]),
                                        kernel.name() + " output " + i + " in a thread, len " + len);
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> f : futures) {
                    f.get(120, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void opIsReusableAndInputsAreUntouched() {
        Random rnd = new Random(5);
        byte[][] m = KernelFixtures.matrix(rnd, 2, 5, 0.2, 0.2);
        for (GfKernel kernel : Kernels.available()) {
            MatrixOp op = kernel.prepare(m);
            assertThat(op.rows()).isEqualTo(2);
            assertThat(op.cols()).isEqualTo(5);
            for (int round = 0; round < 3; round++) {
                int len = 1000 + round * 7;
                ByteBuffer[] in = new ByteBuffer[5];
                for (int j = 0; j < 5; j++) {
                    in[j] = KernelFixtures.buffer(rnd, KernelFixtures.randomKind(rnd, true), 3, len);
                }
                byte[][] before = new byte[5][];
                for (int j = 0; j < 5; j++) {
                    before[j] = KernelFixtures.whole(in[j]);
                }
                assertAllKernelsAgree(m, in, new ByteBuffer[] {KernelFixtures.buffer(rnd, KernelFixtures.Kind.HEAP, 1, len),
                    KernelFixtures.buffer(rnd, KernelFixtures.Kind.DIRECT, 2, len)}, len, round == 1);
                for (int j = 0; j < 5; j++) {
                    assertThat(KernelFixtures.whole(in[j])).isEqualTo(before[j]);
                    assertThat(in[j].position()).isEqualTo(3);
                }
            }
        }
    }

    /**
     * Runs {@code m} with every kernel on copies of {@code out} and checks each copy equals the scalar
     * result byte for byte (the whole backing buffer), and that no position or limit moved.
     */
    static void assertAllKernelsAgree(byte[][] m, ByteBuffer[] in, ByteBuffer[] out, int len, boolean accumulate) {
        ByteBuffer[] expected = KernelFixtures.copies(out);
        run(ScalarKernel.INSTANCE.prepare(m), in, expected, len, accumulate);
        for (int i = 0; i < out.length; i++) {
            // The scalar result itself leaves everything outside [position, position + len) alone.
            byte[] before = KernelFixtures.whole(out[i]);
            byte[] after = KernelFixtures.whole(expected[i]);
            int p = out[i].position();
            assertThat(Arrays.copyOfRange(after, 0, p)).isEqualTo(Arrays.copyOfRange(before, 0, p));
            assertThat(Arrays.copyOfRange(after, p + len, after.length))
                    .isEqualTo(Arrays.copyOfRange(before, p + len, before.length));
        }
        for (GfKernel kernel : Kernels.available()) {
            if (kernel == ScalarKernel.INSTANCE) {
                continue;
            }
            ByteBuffer[] actual = KernelFixtures.copies(out);
            int[] inPos = new int[in.length];
            int[] inLim = new int[in.length];
            for (int j = 0; j < in.length; j++) {
                inPos[j] = in[j].position();
                inLim[j] = in[j].limit();
            }
            try (MatrixOp op = kernel.prepare(m)) {
                run(op, in, actual, len, accumulate);
            }
            for (int j = 0; j < in.length; j++) {
                assertThat(in[j].position()).isEqualTo(inPos[j]);
                assertThat(in[j].limit()).isEqualTo(inLim[j]);
            }
            for (int i = 0; i < out.length; i++) {
                assertThat(actual[i].position()).isEqualTo(out[i].position());
                assertThat(actual[i].limit()).isEqualTo(out[i].limit());
                KernelFixtures.assertSameBytes(KernelFixtures.whole(actual[i]), KernelFixtures.whole(expected[i]),
                        String.format("%s (%s) output %d of %dx%d at position %d, len %d, accumulate %s", kernel.name(),
                                kernel.description(), i, m.length, m[0].length, out[i].position(), len, accumulate));
            }
        }
    }

    private static void run(MatrixOp op, ByteBuffer[] in, ByteBuffer[] out, int len, boolean accumulate) {
        if (accumulate) {
            op.applyAccumulate(in, out, len);
        } else {
            op.apply(in, out, len);
        }
    }
}
