package io.hayloft.erasure.kernel;

import java.nio.ByteBuffer;

/** Shared validation and matrix storage for the Java kernels' {@link MatrixOp}s. */
public abstract class AbstractMatrixOp implements MatrixOp {

    protected final int rows;
    protected final int cols;
    /** Row-major copy of the matrix, {@code rows * cols} unsigned bytes. */
    protected final byte[] matrix;

    protected AbstractMatrixOp(byte[][] m) {
        if (m == null || m.length == 0 || m[0] == null || m[0].length == 0) {
            throw new IllegalArgumentException("matrix must have at least one row and one column");
        }
        this.rows = m.length;
        this.cols = m[0].length;
        this.matrix = new byte[rows * cols];
        for (int i = 0; i < rows; i++) {
            if (m[i] == null || m[i].length != cols) {
                throw new IllegalArgumentException("matrix row " + i + " has "
                        + (m[i] == null ? "no" : m[i].length) + " columns, expected " + cols);
            }
            System.arraycopy(m[i], 0, matrix, i * cols, cols);
        }
    }

    @Override
    public final int rows() {
        return rows;
    }

    @Override
    public final int cols() {
        return cols;
    }

    @Override
    public final int coefficient(int row, int col) {
        return matrix[row * cols + col] & 0xff;
    }

    /** Fails fast, naming the problem, when buffer counts or sizes do not fit this matrix. */
    protected final void check(ByteBuffer[] in, ByteBuffer[] out, int len) {
        if (len < 0) {
            throw new IllegalArgumentException("len must be >= 0, was " + len);
        }
        if (in == null || in.length != cols) {
            throw new IllegalArgumentException("expected " + cols + " input buffers, got " + (in == null ? 0 : in.length));
        }
        if (out == null || out.length != rows) {
            throw new IllegalArgumentException("expected " + rows + " output buffers, got " + (out == null ? 0 : out.length));
        }
        for (int j = 0; j < cols; j++) {
            if (in[j] == null || in[j].remaining() < len) {
                throw new IllegalArgumentException("input " + j + " has " + (in[j] == null ? "no buffer" : in[j].remaining() + " bytes remaining")
                        + ", needs " + len);
            }
        }
        for (int i = 0; i < rows; i++) {
            if (out[i] == null || out[i].remaining() < len) {
                throw new IllegalArgumentException("output " + i + " has " + (out[i] == null ? "no buffer" : out[i].remaining() + " bytes remaining")
                        + ", needs " + len);
            }
            if (out[i].isReadOnly()) {
                throw new IllegalArgumentException("output " + i + " is read-only");
            }
        }
    }
}
