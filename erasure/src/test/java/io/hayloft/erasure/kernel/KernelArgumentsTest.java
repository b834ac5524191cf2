package io.hayloft.erasure.kernel;

import org.assertj.core.api.Assertions;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bad arguments fail fast with {@link IllegalArgumentException} naming the problem, on every kernel,
 * before any output byte is written.
 */
class KernelArgumentsTest {

    static List<GfKernel> kernels() {
        return Kernels.available();
    }

    private static byte[][] matrix(int rows, int cols) {
        byte[][] m = new byte[rows][cols];
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < cols; j++) {
                m[i][j] = (byte) (i * cols + j + 2);
            }
        }
        return m;
    }

    private static ByteBuffer[] buffers(int count, int size) {
        ByteBuffer[] b = new ByteBuffer[count];
        for (int i = 0; i < count; i++) {
            b[i] = i % 2 == 0 ? ByteBuffer.allocate(size) : ByteBuffer.allocateDirect(size);
        }
        return b;
    }

    @ParameterizedTest
    @MethodSource("kernels")
    void wrongInputCount(GfKernel kernel) {
        MatrixOp op = kernel.prepare(matrix(4, 10));
        assertThatThrownBy(() -> op.apply(buffers(9, 100), buffers(4, 100), 100))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected 10 input buffers, got 9");
        assertThatThrownBy(() -> op.applyAccumulate(null, buffers(4, 100), 100))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected 10 input buffers, got 0");
    }

    @ParameterizedTest
    @MethodSource("kernels")
    void wrongOutputCount(GfKernel kernel) {
        MatrixOp op = kernel.prepare(matrix(4, 10));
        assertThatThrownBy(() -> op.apply(buffers(10, 100), buffers(5, 100), 100))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("expected 4 output buffers, got 5");
    }

    @ParameterizedTest
    @MethodSource("kernels")
    void shortInputNamesTheBuffer(GfKernel kernel) {
        MatrixOp op = kernel.prepare(matrix(2, 3));
        ByteBuffer[] in = buffers(3, 100);
        in[1].position(10);
        ByteBuffer[] out = buffers(2, 100);
        out[0].put(0, (byte) 42);
        assertThatThrownBy(() -> op.apply(in, out, 100))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("input 1 has 90 bytes remaining, needs 100");
        // Nothing was written before the check failed.
        Assertions.assertThat(out[0].get(0)).isEqualTo((byte) 42);
    }

    @ParameterizedTest
    @MethodSource("kernels")
    void shortOrMissingOutputNamesTheBuffer(GfKernel kernel) {
        MatrixOp op = kernel.prepare(matrix(2, 3));
        ByteBuffer[] out = {ByteBuffer.allocate(100), ByteBuffer.allocateDirect(99)};
        assertThatThrownBy(() -> op.apply(buffers(3, 100), out, 100))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("output 1 has 99 bytes remaining, needs 100");
        ByteBuffer[] missing = {ByteBuffer.allocate(100), null};
        assertThatThrownBy(() -> op.apply(buffers(3, 100), missing, 100))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("output 1 has no buffer");
    }

    @ParameterizedTest
    @MethodSource("kernels")
    void readOnlyOutputAndNegativeLength(GfKernel kernel) {
        MatrixOp op = kernel.prepare(matrix(2, 3));
        ByteBuffer[] out = {ByteBuffer.allocate(100), ByteBuffer.allocate(100).asReadOnlyBuffer()};
        assertThatThrownBy(() -> op.apply(buffers(3, 100), out, 100))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("output 1 is read-only");
        assertThatThrownBy(() -> op.apply(buffers(3, 100), buffers(2, 100), -1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("len must be >= 0, was -1");
    }

    @ParameterizedTest
    @MethodSource("kernels")
    void emptyOrRaggedMatrix(GfKernel kernel) {
        assertThatThrownBy(() -> kernel.prepare(new byte[0][]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least one row and one column");
        assertThatThrownBy(() -> kernel.prepare(new byte[][] {{1, 2, 3}, {4, 5}}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("matrix row 1 has 2 columns, expected 3");
    }
}
