package io.hayloft.erasure.kernel;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Run in a child JVM by {@link VectorKernelProcessTest}, to see what a library user gets with JVM flags
 * the test JVM does not have. Prints one line starting with {@code PROBE }.
 * <ul>
 *   <li>{@code report}: the chosen backend, the available ones and why the others are not;</li>
 *   <li>{@code check}: the vector kernel against the scalar one on random matrices, lengths and
 *       buffer kinds, and its piggybacked encode (4 parity units) against {@link PiggybackEncode#steps()};
 *       exits 1 with the first difference.</li>
 * </ul>
 */
public final class KernelProbe {

    private KernelProbe() {
    }

    public static void main(String[] args) {
        if (args.length == 1 && args[0].equals("report")) {
            List<String> names = new ArrayList<>();
            for (GfKernel k : Kernels.available()) {
                names.add(k.name());
            }
            System.out.println("PROBE best=" + Kernels.best().name() + " available=" + names + " unavailable="
                    + Kernels.unavailable());
            return;
        }
        if (args.length == 1 && args[0].equals("check")) {
            GfKernel vector = Kernels.byName("vector");
            if (vector == null) {
                System.out.println("PROBE no vector kernel");
                System.exit(1);
            }
            Random rnd = new Random(3);
            for (int round = 0; round < 60; round++) {
                int rows = 1 + rnd.nextInt(7);
                int cols = 1 + rnd.nextInt(12);
                int len = round < 30 ? KernelFixtures.EDGE_LENGTHS[round % KernelFixtures.EDGE_LENGTHS.length]
                        : rnd.nextInt(40_000);
                byte[][] m = KernelFixtures.matrix(rnd, rows, cols, 0.2, 0.2);
                ByteBuffer[] in = new ByteBuffer[cols];
                for (int j = 0; j < cols; j++) {
                    in[j] = KernelFixtures.buffer(rnd, KernelFixtures.randomKind(rnd, true), rnd.nextInt(5), len);
                }
                ByteBuffer[] out = new ByteBuffer[rows];
                for (int i = 0; i < rows; i++) {
                    out[i] = KernelFixtures.buffer(rnd, KernelFixtures.randomKind(rnd, false), rnd.nextInt(5), len);
                }
                ByteBuffer[] expected = KernelFixtures.copies(out);
                boolean acc = round % 2 == 1;
                MatrixOp op = vector.prepare(m);
                MatrixOp ref = ScalarKernel.INSTANCE.prepare(m);
                if (acc) {
                    op.applyAccumulate(in, out, len);
                    ref.applyAccumulate(in, expected, len);
                } else {
                    op.apply(in, out, len);
                    ref.apply(in, expected, len);
                }
                for (int i = 0; i < rows; i++) {
                    try {
                        KernelFixtures.assertSameBytes(KernelFixtures.whole(out[i]), KernelFixtures.whole(expected[i]),
                                "round " + round + " output " + i + " of " + rows + "x" + cols + ", len " + len);
                    } catch (AssertionError e) {
                        System.out.println("PROBE mismatch " + e.getMessage());
                        System.exit(1);
                    }
                }
            }
            for (int round = 0; round < 24; round++) {
                int k = 1 + rnd.nextInt(12);
                int len = round < 12 ? KernelFixtures.EDGE_LENGTHS[round * 2] : rnd.nextInt(40_000);
                byte[][] m = KernelFixtures.matrix(rnd, 4, k, 0.1, 0.1);
                int[] group = new int[k];
                for (int j = 0; j < k; j++) {
                    group[j] = rnd.nextInt(4) - 1;
                }
                PiggybackEncode encode = new PiggybackEncode(m, group, round % 2 == 0, round % 3 != 0);
                ByteBuffer[] buffers = new ByteBuffer[2 * k + 8];
                for (int x = 0; x < buffers.length; x++) {
                    buffers[x] = KernelFixtures.buffer(rnd, KernelFixtures.randomKind(rnd, x < 2 * k), rnd.nextInt(5), len);
                }
                ByteBuffer[] expected = KernelFixtures.copies(buffers);
                KernelFixtures.applySteps(encode.steps(), expected, len);
                try (FusedOp op = vector.preparePiggyback(encode)) {
                    op.apply(buffers, len);
                }
                for (int x = 0; x < buffers.length; x++) {
                    try {
                        KernelFixtures.assertSameBytes(KernelFixtures.whole(buffers[x]), KernelFixtures.whole(expected[x]),
                                "piggyback round " + round + " buffer " + x + ", k " + k + ", len " + len);
                    } catch (AssertionError e) {
                        System.out.println("PROBE mismatch " + e.getMessage());
                        System.exit(1);
                    }
                }
            }
            System.out.println("PROBE ok " + vector.description());
            return;
        }
        System.out.println("PROBE usage: report | check");
        System.exit(2);
    }
}
