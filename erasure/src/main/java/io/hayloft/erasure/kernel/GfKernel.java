package io.hayloft.erasure.kernel;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * A backend for bulk GF(2^8) arithmetic: the one place where the erasure codes spend their time.
 *
 * <p>Every code in this module (Reed-Solomon and the Hitchhiker variants, encode, decode, repair and
 * degraded reads) is expressed as matrix products {@code out[i] = sum_j m[i][j] * in[j]} over byte
 * ranges, so a backend only has to implement {@link #prepare}. Backends: {@code java} (scalar tables,
 * always there), {@code vector} (the incubating Vector API, when the module is in the boot layer) and
 * {@code native} (ISA-L through JNI, when the shared library loads). {@link Kernels} chooses one.
 *
 * <p>All backends must produce identical bytes. Implementations are thread-safe.
 */
public interface GfKernel {

    /** A short stable name: {@code java}, {@code vector}, {@code native}. */
    String name();

    /** One line for operators: the kernel family in use (for example "AVX-512 VBMI, 512-bit"). */
    String description();

    /**
     * Prepares {@code matrix} ({@code rows x cols}, coefficients as unsigned bytes) for repeated
     * application. The matrix is copied; the caller may reuse its array.
     *
     * @throws IllegalArgumentException if the matrix is empty or ragged
     */
    MatrixOp prepare(byte[][] matrix);

    /**
     * Prepares a sequence of products over one set of buffers to run a tile at a time (see
     * {@link FusedOp}). The default runs each step as a {@link MatrixOp} of this kernel, tile by tile;
     * a backend may run the whole sequence in one call (the native backend does).
     *
     * @throws IllegalArgumentException if there are no steps or a step is malformed
     */
    default FusedOp prepareFused(List<FusedStep> steps) {
        return new TiledFusedOp(this, steps);
    }

    /**
     * Prepares a two-substripe piggybacked encode (Hitchhiker's, see {@link PiggybackEncode}) as one
     * {@link FusedOp} over {@code a_0..a_(k-1), b_0..b_(k-1), Pa_0..Pa_(r-1), Pb_0..Pb_(r-1)}. The
     * default runs {@link PiggybackEncode#steps()} through {@link #prepareFused}; a backend may use a
     * dedicated loop that reads every input once and adds the piggybacks and coupling in registers.
     */
    default FusedOp preparePiggyback(PiggybackEncode encode) {
        return prepareFused(encode.steps());
    }

    /**
     * A buffer of {@code size} bytes of the kind this backend reads fastest (direct for native,
     * heap for the Java backends). Any buffer works with any backend; this is only a preference.
     */
    default ByteBuffer allocate(int size) {
        return ByteBuffer.allocate(size);
    }
}
