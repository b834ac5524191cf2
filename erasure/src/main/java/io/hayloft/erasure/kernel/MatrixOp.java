package io.hayloft.erasure.kernel;

import java.nio.ByteBuffer;

/**
 * A GF(2^8) matrix prepared by a {@link GfKernel} for repeated application to byte ranges.
 *
 * <p>Buffer contract for both methods: input {@code j} is read at
 * {@code in[j].position() .. position() + len}, output {@code i} written at
 * {@code out[i].position() .. position() + len}. No buffer's position, limit or mark changes. Heap
 * and direct buffers may be mixed freely. Outputs must not overlap inputs or each other.
 *
 * <p>Instances are immutable once prepared and safe for concurrent use by many threads. A native op
 * holds native memory: {@link #close()} frees it, is idempotent, and after it {@code apply} throws
 * {@link IllegalStateException}. Java ops have nothing to free.
 */
public interface MatrixOp extends AutoCloseable {

    int rows();

    int cols();

    /** The prepared coefficient {@code m[row][col]}, as an unsigned value 0..255. */
    int coefficient(int row, int col);

    /** {@code out[i] = sum_j m[i][j] * in[j]} over {@code len} bytes. */
    void apply(ByteBuffer[] in, ByteBuffer[] out, int len);

    /** {@code out[i] ^= sum_j m[i][j] * in[j]} over {@code len} bytes (accumulate into existing bytes). */
    void applyAccumulate(ByteBuffer[] in, ByteBuffer[] out, int len);

    @Override
    default void close() {
    }
}
