package io.hayloft.erasure.kernel;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Random matrices and buffers for the kernel tests, and the one comparison they all make: a kernel's
 * output against {@link ScalarKernel}'s, over whole backing buffers so bytes outside the range count too.
 */
final class KernelFixtures {

    /** Lengths that sit on and around the vector and tile boundaries of every kernel. */
    static final int[] EDGE_LENGTHS = {0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257,
        16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 32 * 1024 + 129, 3 * 16 * 1024 + 77};

    /** How a test buffer is made. */
    enum Kind { HEAP, DIRECT, READ_ONLY_HEAP }

    private KernelFixtures() {
    }

    /**
     * A {@code rows x cols} matrix whose coefficients are 0 with probability {@code pZero}, 1 with
     * {@code pOne}, and uniform over 0..255 otherwise.
     */
    static byte[][] matrix(Random rnd, int rows, int cols, double pZero, double pOne) {
        byte[][] m = new byte[rows][cols];
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < cols; j++) {
                double p = rnd.nextDouble();
                m[i][j] = (byte) (p < pZero ? 0 : p < pZero + pOne ? 1 : rnd.nextInt(256));
            }
        }
        return m;
    }

    /**
     * A buffer of {@code len} random bytes at position {@code offset} of a larger random backing
     * buffer, with up to 3 spare bytes after the limit.
     */
    static ByteBuffer buffer(Random rnd, Kind kind, int offset, int len) {
        int spare = rnd.nextInt(4);
        byte[] bytes = new byte[offset + len + spare + rnd.nextInt(4)];
        rnd.nextBytes(bytes);
        ByteBuffer b = kind == Kind.DIRECT ? ByteBuffer.allocateDirect(bytes.length) : ByteBuffer.allocate(bytes.length);
        b.put(bytes).clear();
        b.position(offset).limit(offset + len + spare);
        return kind == Kind.READ_ONLY_HEAP ? b.asReadOnlyBuffer() : b;
    }

    /** A writable copy of {@code b} of the same kind, position and limit, with the same backing bytes. */
    static ByteBuffer copy(ByteBuffer b) {
        ByteBuffer c = b.isDirect() ? ByteBuffer.allocateDirect(b.capacity()) : ByteBuffer.allocate(b.capacity());
        ByteBuffer src = b.duplicate();
        src.clear();
        c.put(src).clear();
        c.position(b.position()).limit(b.limit());
        return c;
    }

    static ByteBuffer[] copies(ByteBuffer[] bs) {
        ByteBuffer[] c = new ByteBuffer[bs.length];
        for (int i = 0; i < bs.length; i++) {
            c[i] = copy(bs[i]);
        }
        return c;
    }

    /** Every byte of the backing buffer, whatever the position and limit. */
    static byte[] whole(ByteBuffer b) {
        ByteBuffer d = b.duplicate();
        d.clear();
        byte[] out = new byte[d.remaining()];
        d.get(out);
        return out;
    }

    /** Fails naming the first differing index and a few bytes around it, not thousands of bytes. */
    static void assertSameBytes(byte[] actual, byte[] expected, String what) {
        int n = Arrays.mismatch(actual, expected);
        if (n >= 0) {
            int from = Math.max(0, n - 2);
            throw new AssertionError(what + ": first difference at backing index " + n + " of " + expected.length
                    + "; expected " + hex(expected, from, n + 6) + ", got " + hex(actual, from, n + 6));
        }
    }

    private static String hex(byte[] b, int from, int to) {
        StringBuilder s = new StringBuilder();
        for (int i = from; i < Math.min(to, b.length); i++) {
            s.append(String.format("%02x ", b[i] & 0xff));
        }
        return s.toString().trim();
    }

    static Kind randomKind(Random rnd, boolean input) {
        int n = rnd.nextInt(input ? 3 : 2);
        return Kind.values()[n];
    }

    /** The reference result of fused steps: each step applied in order with the scalar kernel, on {@code buffers} (indexed by the steps). */
    static void applySteps(List<FusedStep> steps, ByteBuffer[] buffers, int len) {
        for (FusedStep step : steps) {
            MatrixOp op = ScalarKernel.INSTANCE.prepare(step.matrix());
            ByteBuffer[] in = pick(buffers, step.inputs());
            ByteBuffer[] out = pick(buffers, step.outputs());
            if (step.accumulate()) {
                op.applyAccumulate(in, out, len);
            } else {
                op.apply(in, out, len);
            }
        }
    }

    /** The buffers at {@code idx}. */
    static ByteBuffer[] pick(ByteBuffer[] b, int[] idx) {
        ByteBuffer[] r = new ByteBuffer[idx.length];
        for (int i = 0; i < idx.length; i++) {
            r[i] = b[idx[i]];
        }
        return r;
    }
}
