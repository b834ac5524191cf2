package io.hayloft.erasure.codec;

import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.gf.GfMatrix;
import io.hayloft.erasure.kernel.GfKernel;
import io.hayloft.erasure.kernel.MatrixOp;
import java.nio.ByteBuffer;

/**
 * Systematic Reed-Solomon RS(k, r) over GF(2^8) with the Cauchy parity matrix of ISA-L
 * ({@code gf_gen_cauchy1_matrix}) and Hadoop's {@code RSRawEncoder}:
 * {@code P_i = sum_j inv((k + i) XOR j) * D_j}. Its parity bytes equal theirs. One substripe per
 * unit, so any unit size works. Repairing any unit reads {@code k} whole units. Thread-safe.
 */
public final class ReedSolomon extends LinearCode {

    private final byte[][] parityMatrix;
    private final MatrixOp encoder;

    /**
     * @throws IllegalArgumentException unless {@code k >= 1}, {@code r >= 1}, {@code k + r <= 256}
     */
    public ReedSolomon(int k, int r, GfKernel kernel, int chunkSize) {
        super(CodecKind.RS, check(k, r), r, 1, kernel, chunkSize);
        this.parityMatrix = GfMatrix.cauchy(k, r);
        this.encoder = kernel.prepare(parityMatrix);
    }

    private static int check(int k, int r) {
        GfMatrix.checkDimensions(k, r);
        return k;
    }

    /** The {@code r x k} parity matrix (a copy). */
    public byte[][] parityMatrix() {
        return GfMatrix.copy(parityMatrix);
    }

    @Override
    protected byte[] pieceVector(int unit) {
        if (unit < k) {
            return unitVector(k, unit);
        }
        return parityMatrix[unit - k].clone();
    }

    @Override
    protected void encodePieces(ByteBuffer[] data, ByteBuffer[] parity, int len) {
        encoder.apply(data, parity, len);
    }

    @Override
    public void close() {
        super.close();
        encoder.close();
    }
}
