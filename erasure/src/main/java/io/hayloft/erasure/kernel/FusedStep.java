package io.hayloft.erasure.kernel;

import java.util.HashSet;
import java.util.Set;

/**
 * One matrix product of a {@link FusedOp}: {@code buffers[outputs[i]] (^)= sum_j m[i][j] *
 * buffers[inputs[j]]}, with {@code =} or, when {@code accumulate}, {@code ^=}. Indices refer to the
 * buffer array passed to {@link FusedOp#apply}; a step may read outputs of earlier steps (that is
 * how a later step accumulates onto an earlier result), but its own outputs must not be among its
 * inputs. Immutable: the constructor copies its arrays.
 */
public final class FusedStep {

    private final byte[][] matrix;
    private final int[] inputs;
    private final int[] outputs;
    private final boolean accumulate;

    /**
     * @param matrix     {@code outputs.length x inputs.length} coefficients, unsigned bytes
     * @param inputs     buffer index of each column
     * @param outputs    buffer index of each row
     * @param accumulate XOR the product into the outputs instead of overwriting them
     * @throws IllegalArgumentException naming the problem when the shapes do not match, an index is
     *                                  negative or repeated, or an output is also an input
     */
    public FusedStep(byte[][] matrix, int[] inputs, int[] outputs, boolean accumulate) {
        if (matrix == null || inputs == null || outputs == null) {
            throw new IllegalArgumentException("matrix, inputs and outputs are required");
        }
        if (matrix.length != outputs.length || outputs.length == 0) {
            throw new IllegalArgumentException("matrix has " + matrix.length + " rows for " + outputs.length + " outputs");
        }
        this.matrix = new byte[matrix.length][];
        for (int i = 0; i < matrix.length; i++) {
            if (matrix[i] == null || matrix[i].length != inputs.length || inputs.length == 0) {
                throw new IllegalArgumentException("matrix row " + i + " has " + (matrix[i] == null ? 0 : matrix[i].length)
                        + " columns for " + inputs.length + " inputs");
            }
            this.matrix[i] = matrix[i].clone();
        }
        Set<Integer> seen = new HashSet<>();
        for (int x : inputs) {
            if (x < 0 || !seen.add(x)) {
                throw new IllegalArgumentException("input buffer index " + x + " is negative or listed twice");
            }
        }
        for (int x : outputs) {
            if (x < 0 || !seen.add(x)) {
                throw new IllegalArgumentException("output buffer index " + x + " is negative, listed twice or also an input");
            }
        }
        this.inputs = inputs.clone();
        this.outputs = outputs.clone();
        this.accumulate = accumulate;
    }

    /** A copy of the coefficients. */
    public byte[][] matrix() {
        byte[][] c = new byte[matrix.length][];
        for (int i = 0; i < c.length; i++) {
            c[i] = matrix[i].clone();
        }
        return c;
    }

    /** Coefficient {@code m[row][col]} as an unsigned value. */
    public int coefficient(int row, int col) {
        return matrix[row][col] & 0xff;
    }

    public int[] inputs() {
        return inputs.clone();
    }

    public int[] outputs() {
        return outputs.clone();
    }

    public boolean accumulate() {
        return accumulate;
    }

    /** The largest buffer index this step uses. */
    int maxIndex() {
        int m = -1;
        for (int x : inputs) {
            m = Math.max(m, x);
        }
        for (int x : outputs) {
            m = Math.max(m, x);
        }
        return m;
    }
}
