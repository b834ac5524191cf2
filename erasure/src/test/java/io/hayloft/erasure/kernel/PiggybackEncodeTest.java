package io.hayloft.erasure.kernel;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Assumptions;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * {@link GfKernel#preparePiggyback} on every backend (the native backend's dedicated loop where it
 * applies, the tiled steps elsewhere) against the plain meaning of
 * {@link PiggybackEncode#steps()}: each step applied in turn over the whole length with
 * {@link ScalarKernel}. Random shapes: 2 to 5 parity rows (the native loop takes 2 to 4, 5 falls
 * back), 1 to 12 data units, random groups (some units in none), weighted or not, coupled or not,
 * random matrices with zeros and ones (and sometimes row 1 all ones, as XOR+ has), heap, direct and
 * read-only inputs at odd positions, lengths on and around the vector and tile sizes (4 KiB for the
 * native loop).
 */
class PiggybackEncodeTest {

    @Property(tries = 200)
    void everyBackendMatchesTheStepsOneByOne(@ForAll long seed, @ForAll @IntRange(min = 0, max = 23) int edge) {
        Random rnd = new Random(seed);
        int[] tiles = {4096 - 1, 4096, 4096 + 1, 4096 + 127, 4096 + 128, 4096 + 129, 8192 + 64};
        int len = switch (rnd.nextInt(3)) {
            case 0 -> KernelFixtures.EDGE_LENGTHS[edge];
            case 1 -> tiles[rnd.nextInt(tiles.length)];
            default -> rnd.nextInt(70_000);
        };
        int r = 2 + rnd.nextInt(rnd.nextBoolean() ? 3 : 4);
        int k = 1 + rnd.nextInt(12);
        byte[][] m = KernelFixtures.matrix(rnd, r, k, rnd.nextInt(3) == 0 ? 0.2 : 0, 0.1);
        if (rnd.nextInt(3) == 0) {
            Arrays.fill(m[1], (byte) 1);
        }
        int[] group = new int[k];
        for (int j = 0; j < k; j++) {
            group[j] = rnd.nextInt(r) - 1;
        }
        PiggybackEncode encode = new PiggybackEncode(m, group, rnd.nextBoolean(), rnd.nextBoolean());
        int nbuf = 2 * k + 2 * r;
        ByteBuffer[] buffers = new ByteBuffer[nbuf];
        for (int x = 0; x < nbuf; x++) {
            KernelFixtures.Kind kind = x >= 2 * k ? (rnd.nextBoolean() ? KernelFixtures.Kind.HEAP : KernelFixtures.Kind.DIRECT)
                    : KernelFixtures.Kind.values()[rnd.nextInt(3)];
            buffers[x] = KernelFixtures.buffer(rnd, kind, rnd.nextInt(9), len);
        }
        ByteBuffer[] expected = KernelFixtures.copies(buffers);
        KernelFixtures.applySteps(encode.steps(), expected, len);
        for (GfKernel kernel : Kernels.available()) {
            ByteBuffer[] got = new ByteBuffer[nbuf];
            for (int x = 0; x < nbuf; x++) {
                got[x] = buffers[x].isReadOnly() ? buffers[x] : KernelFixtures.copy(buffers[x]);
            }
            try (FusedOp op = kernel.preparePiggyback(encode)) {
                assertThat(op.buffers()).isEqualTo(nbuf);
                int[] positions = Arrays.stream(got).mapToInt(ByteBuffer::position).toArray();
                op.apply(got, len);
                op.apply(got.clone(), 0);
                for (int x = 0; x < nbuf; x++) {
                    assertThat(got[x].position()).isEqualTo(positions[x]);
                }
                for (int x = 0; x < nbuf; x++) {
                    KernelFixtures.assertSameBytes(KernelFixtures.whole(got[x]), KernelFixtures.whole(expected[x]),
                            kernel.name() + " (" + op.getClass().getSimpleName() + ") buffer " + x + " len " + len
                                    + " k " + k + " r " + r + " weighted " + encode.weighted() + " coupled " + encode.coupled());
                }
            }
        }
    }

    /** The dedicated loops are the ones in use where they apply (so the property above tests them). */
    @Example
    void dedicatedLoopsAreUsedWhereTheyApply() {
        byte[][] m = KernelFixtures.matrix(new Random(1), 4, 10, 0, 0);
        PiggybackEncode encode = new PiggybackEncode(m, new int[] {0, 0, 0, 1, 1, 1, 2, 2, 2, -1}, true, true);
        for (GfKernel kernel : Kernels.available()) {
            try (FusedOp op = kernel.preparePiggyback(encode)) {
                if (kernel.name().equals("native") && supportsGfni()) {
                    assertThat(op.getClass().getSimpleName()).isEqualTo("IsalPiggybackOp");
                }
                if (kernel.name().equals("vector")) {
                    assertThat(op.getClass().getSimpleName()).isEqualTo("PiggybackVectorOp");
                }
            }
        }
    }

    @Example
    void badShapesAreRejectedNamingTheProblem() {
        assertThatThrownBy(() -> new PiggybackEncode(new byte[][] {{1, 2}}, new int[] {0, 0}, false, false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("2 parity rows");
        assertThatThrownBy(() -> new PiggybackEncode(new byte[][] {{1, 2}, {3}}, new int[] {0, 0}, false, false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("row 1 has 1 columns");
        assertThatThrownBy(() -> new PiggybackEncode(new byte[][] {{1, 2}, {3, 4}}, new int[] {0, 1}, false, false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("group 1");
        PiggybackEncode ok = new PiggybackEncode(new byte[][] {{1, 2}, {3, 4}}, new int[] {0, -1}, false, true);
        for (GfKernel kernel : Kernels.available()) {
            FusedOp op = kernel.preparePiggyback(ok);
            ByteBuffer[] six = new ByteBuffer[6];
            for (int x = 0; x < 6; x++) {
                six[x] = ByteBuffer.allocate(8);
            }
            assertThatThrownBy(() -> op.apply(Arrays.copyOf(six, 5), 8))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected 8 buffers");
            ByteBuffer[] eight = new ByteBuffer[8];
            for (int x = 0; x < 8; x++) {
                eight[x] = ByteBuffer.allocate(8);
            }
            eight[5] = eight[5].asReadOnlyBuffer();
            assertThatThrownBy(() -> op.apply(eight, 8))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("read-only");
            op.close();
            op.close();
        }
    }

    /**
     * The vector backend's 4-parity loop on the shapes it sorts by group: Hitchhiker's own at (10,4)
     * for each variant (row-1 weights, row 1 all ones, weights 1), groups of one member, no group at
     * all, every unit in one group, k = 1, and lengths off the vector and tile sizes, 0 included.
     */
    @Example
    void vectorLoopMatchesTheStepsOnEdgeShapes() {
        GfKernel vector = Kernels.available().stream().filter(x -> x.name().equals("vector")).findFirst().orElse(null);
        Assumptions.assumeTrue(vector != null, "vector backend not available");
        Random rnd = new Random(15);
        int[][] groups = {
            {0, 0, 0, 1, 1, 1, 2, 2, 2, -1}, {0, 0, 0, 1, 1, 1, 2, 2, 2, 2}, {0, 1, 2, -1}, {0, 1, 2},
            {-1, -1, -1, -1, -1}, {2, 2, 2, 2, 2, 2}, {-1, 2, -1, 0, 2, 1, -1}, {1}, {-1}};
        int[] lengths = {0, 1, 63, 64, 127, 128, 129, 4095, 4096, 4097, 3 * 4096 + 200, 70_001};
        for (int[] group : groups) {
            int k = group.length;
            byte[][] m = KernelFixtures.matrix(rnd, 4, k, 0.1, 0.1);
            for (int variant = 0; variant < 3; variant++) {
                if (variant == 1) {
                    Arrays.fill(m[1], (byte) 1);
                }
                PiggybackEncode encode = new PiggybackEncode(m, group, variant == 0, variant != 2);
                for (int len : lengths) {
                    int nbuf = 2 * k + 8;
                    ByteBuffer[] buffers = new ByteBuffer[nbuf];
                    for (int x = 0; x < nbuf; x++) {
                        KernelFixtures.Kind kind = x >= 2 * k ? KernelFixtures.Kind.values()[x % 2]
                                : KernelFixtures.Kind.values()[(x + len) % 3];
                        buffers[x] = KernelFixtures.buffer(rnd, kind, x % 5, len);
                    }
                    ByteBuffer[] expected = KernelFixtures.copies(buffers);
                    KernelFixtures.applySteps(encode.steps(), expected, len);
                    try (FusedOp op = vector.preparePiggyback(encode)) {
                        assertThat(op.getClass().getSimpleName()).isEqualTo("PiggybackVectorOp");
                        op.apply(buffers, len);
                    }
                    for (int x = 0; x < nbuf; x++) {
                        KernelFixtures.assertSameBytes(KernelFixtures.whole(buffers[x]), KernelFixtures.whole(expected[x]),
                                "buffer " + x + " len " + len + " groups " + Arrays.toString(group) + " variant " + variant);
                    }
                }
            }
        }
    }

    private static boolean supportsGfni() {
        try {
            return Files.readString(Path.of("/proc/cpuinfo")).matches("(?s).*\\bgfni\\b.*avx512bw.*|(?s).*\\bavx512bw\\b.*gfni.*");
        } catch (IOException e) {
            return false;
        }
    }

}
