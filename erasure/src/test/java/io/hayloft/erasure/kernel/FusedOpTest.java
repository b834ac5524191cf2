package io.hayloft.erasure.kernel;

import java.util.Arrays;
import java.util.Collections;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * {@link FusedOp} on every backend against the plain meaning of its steps: each step applied in
 * turn over the whole length with {@link ScalarKernel} matrix ops. Random programs mix overwriting
 * and accumulating steps, steps that read an earlier step's output, all-ones XOR rows, all-zero
 * matrices, and heap, direct and read-only input buffers at odd positions.
 */
class FusedOpTest {

    @Property(tries = 120)
    void everyBackendMatchesStepByStepScalar(@ForAll long seed, @ForAll @IntRange(min = 0, max = 23) int edge) {
        Random rnd = new Random(seed);
        int len = rnd.nextBoolean() ? KernelFixtures.EDGE_LENGTHS[edge] : rnd.nextInt(70_000);
        int nbuf = 3 + rnd.nextInt(10);
        List<FusedStep> steps = new ArrayList<>();
        boolean[] written = new boolean[nbuf];
        int nsteps = 1 + rnd.nextInt(5);
        for (int s = 0; s < nsteps; s++) {
            List<Integer> idx = new ArrayList<>();
            for (int x = 0; x < nbuf; x++) {
                idx.add(x);
            }
            Collections.shuffle(idx, rnd);
            int cols = 1 + rnd.nextInt(Math.min(6, nbuf - 1));
            int rows = 1 + rnd.nextInt(Math.min(4, nbuf - cols));
            int[] in = idx.subList(0, cols).stream().mapToInt(Integer::intValue).toArray();
            int[] out = idx.subList(cols, cols + rows).stream().mapToInt(Integer::intValue).toArray();
            int kind = rnd.nextInt(4);
            byte[][] m = kind == 0 ? new byte[rows][cols]
                    : kind == 1 ? KernelFixtures.matrix(rnd, rows, cols, 0, 1)
                    : KernelFixtures.matrix(rnd, rows, cols, 0.3, 0.3);
            steps.add(new FusedStep(m, in, out, rnd.nextBoolean()));
            for (int o : out) {
                written[o] = true;
            }
        }
        ByteBuffer[] buffers = new ByteBuffer[nbuf];
        for (int x = 0; x < nbuf; x++) {
            KernelFixtures.Kind k = written[x] ? (rnd.nextBoolean() ? KernelFixtures.Kind.HEAP : KernelFixtures.Kind.DIRECT)
                    : KernelFixtures.Kind.values()[rnd.nextInt(3)];
            buffers[x] = KernelFixtures.buffer(rnd, k, rnd.nextInt(9), len);
        }
        ByteBuffer[] expected = KernelFixtures.copies(buffers);
        KernelFixtures.applySteps(steps, expected, len);
        for (GfKernel kernel : Kernels.available()) {
            ByteBuffer[] got = new ByteBuffer[nbuf];
            for (int x = 0; x < nbuf; x++) {
                got[x] = buffers[x].isReadOnly() ? buffers[x] : KernelFixtures.copy(buffers[x]);
            }
            try (FusedOp op = kernel.prepareFused(steps)) {
                assertThat(op.buffers()).isLessThanOrEqualTo(nbuf);
                ByteBuffer[] args = Arrays.copyOf(got, op.buffers());
                int[] positions = Arrays.stream(args).mapToInt(ByteBuffer::position).toArray();
                op.apply(args, len);
                op.apply(args.clone(), 0);
                for (int x = 0; x < args.length; x++) {
                    assertThat(args[x].position()).isEqualTo(positions[x]);
                }
            }
            for (int x = 0; x < nbuf; x++) {
                KernelFixtures.assertSameBytes(KernelFixtures.whole(got[x]), KernelFixtures.whole(expected[x]),
                        kernel.name() + " buffer " + x + " len " + len);
            }
        }
    }

    @Example
    void badStepsAndBuffersAreRejectedNamingTheProblem() {
        byte[][] one = {{1}};
        assertThatThrownBy(() -> new FusedStep(one, new int[] {0}, new int[] {0}, false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("also an input");
        assertThatThrownBy(() -> new FusedStep(new byte[][] {{1, 2}}, new int[] {0}, new int[] {1}, false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("columns");
        assertThatThrownBy(() -> new FusedStep(one, new int[] {-1}, new int[] {1}, false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("negative");
        for (GfKernel kernel : Kernels.available()) {
            assertThatThrownBy(() -> kernel.prepareFused(List.of())).isInstanceOf(IllegalArgumentException.class);
            FusedOp op = kernel.prepareFused(List.of(new FusedStep(one, new int[] {0}, new int[] {2}, true)));
            assertThat(op.buffers()).isEqualTo(3);
            ByteBuffer a = ByteBuffer.allocate(8);
            assertThatThrownBy(() -> op.apply(new ByteBuffer[] {a, a}, 8))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected 3 buffers");
            assertThatThrownBy(() -> op.apply(new ByteBuffer[] {a, ByteBuffer.allocate(8), ByteBuffer.allocate(4)}, 8))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("buffer 2 has 4 bytes");
            assertThatThrownBy(() -> op.apply(new ByteBuffer[] {a, ByteBuffer.allocate(8), ByteBuffer.allocate(8).asReadOnlyBuffer()}, 8))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("read-only");
            op.close();
            op.close();
            if (kernel.name().equals("native")) {
                assertThatThrownBy(() -> op.apply(new ByteBuffer[] {a, ByteBuffer.allocate(8), ByteBuffer.allocate(8)}, 8))
                        .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
            }
        }
    }

}
