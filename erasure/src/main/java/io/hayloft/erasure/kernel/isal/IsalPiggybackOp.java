package io.hayloft.erasure.kernel.isal;

import io.hayloft.erasure.gf.Gf256;
import io.hayloft.erasure.kernel.AbstractFusedOp;
import io.hayloft.erasure.kernel.PiggybackEncode;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;

/**
 * Hitchhiker's whole encode ({@link PiggybackEncode}, 2 to 4 parity units) in one native call and one
 * pass: {@code pb_encode} in {@code hayloft_isal.c}, our own AVX-512 + GFNI loop beside ISA-L. For
 * each 64-byte position it loads every {@code b_j} and {@code a_j} once, multiplies with
 * {@code GF2P8AFFINEQB} (one instruction per coefficient, the constant's 8x8 bit matrix, see
 * {@link #affine}), adds the piggybacks and the coupling in registers, and stores the {@code 2r}
 * outputs once. {@link IsalFusedOp} instead ran two ISA-L products and up to four XOR (or, for
 * nonXOR, product-and-XOR) passes over every 32 KiB tile.
 *
 * <p>Holds no native memory (the bit matrices go with each call). Heap buffers are pinned and cut into
 * slices of {@link IsalMatrixOp#MAX_PINNED} bytes as in {@link IsalMatrixOp}. Thread-safe; after
 * {@link #close()} {@code apply} throws {@link IllegalStateException}, as other native ops do.
 */
final class IsalPiggybackOp extends AbstractFusedOp {

    /**
     * Whether this CPU runs the loop (AVX-512 F and BW, GFNI), and the loaded shim has it (a shim
     * given by {@link NativeLibrary#PATH_PROPERTY} may predate it).
     */
    static final boolean SUPPORTED = supported();

    private static boolean supported() {
        try {
            return IsalNative.piggybackSupported();
        } catch (UnsatisfiedLinkError e) {
            return false;
        }
    }

    /**
     * Bytes per buffer per tile: pass b writes the tile of Pb, pass a adds the piggybacks to it while
     * it is in L1 (4 x 4 KiB at (10,4)). Overridable for experiments by the system property
     * {@code hayloft.erasure.native.piggybackTile}.
     */
    static final int TILE = Integer.getInteger("hayloft.erasure.native.piggybackTile", 4 * 1024);

    private final long[] affine;
    private final int[] shape;
    private volatile boolean closed;

    IsalPiggybackOp(PiggybackEncode encode) {
        super(encode.steps());
        int k = encode.dataUnits();
        int r = encode.parityUnits();
        if (r < 2 || r > 4) {
            throw new IllegalArgumentException("the native piggyback loop needs 2 to 4 parity units, was " + r);
        }
        this.affine = new long[r * k];
        for (int i = 0; i < r; i++) {
            for (int j = 0; j < k; j++) {
                affine[i * k + j] = affine(encode.coefficient(i, j));
            }
        }
        this.shape = new int[4 + k];
        shape[0] = k;
        shape[1] = r;
        shape[2] = encode.weighted() ? 1 : 0;
        shape[3] = encode.coupled() ? 1 : 0;
        for (int j = 0; j < k; j++) {
            shape[4 + j] = encode.group(j);
        }
    }

    /**
     * The GF2P8AFFINEQB matrix of "multiply by {@code c}" in GF(2^8) mod 0x11D: bit {@code i} of the
     * result is the parity of {@code x AND} byte {@code 7 - i} of the matrix, so that byte has bit
     * {@code j} set when bit {@code i} of {@code c * 2^j} is.
     */
    static long affine(int c) {
        long m = 0;
        for (int i = 0; i < 8; i++) {
            int row = 0;
            for (int j = 0; j < 8; j++) {
                if (((Gf256.mul(c, 1 << j) >> i) & 1) != 0) {
                    row |= 1 << j;
                }
            }
            m |= (long) row << (8 * (7 - i));
        }
        return m;
    }

    @Override
    public void apply(ByteBuffer[] b, int len) {
        check(b, len);
        if (closed) {
            throw new IllegalStateException("native piggyback op is closed");
        }
        Object[] bases = new Object[buffers];
        long[] offs = new long[buffers];
        boolean pinned = false;
        for (int x = 0; x < buffers; x++) {
            pinned |= IsalMatrixOp.place(b[x], len, bases, offs, x);
        }
        try {
            int slice = pinned ? IsalMatrixOp.MAX_PINNED : Math.max(len, 1);
            for (int done = 0; done < len; done += slice) {
                if (done > 0) {
                    for (int x = 0; x < offs.length; x++) {
                        offs[x] += slice;
                    }
                }
                IsalNative.applyPiggyback(affine, shape, bases, offs, Math.min(slice, len - done), TILE);
            }
        } finally {
            Reference.reachabilityFence(b);
        }
    }

    @Override
    public void close() {
        closed = true;
    }
}
