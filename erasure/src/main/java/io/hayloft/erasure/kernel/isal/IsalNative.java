package io.hayloft.erasure.kernel.isal;

/**
 * The native methods of {@code libhayloft-isal.so} (source: {@code erasure/src/main/c/hayloft_isal.c}).
 * Callers must have loaded the library through {@link NativeLibrary} first. Every method is
 * re-entrant; a tables handle must not be used after {@link #freeTables}, which
 * {@link IsalMatrixOp} guarantees.
 */
final class IsalNative {

    private IsalNative() {
    }

    /** {@code malloc} + {@code ec_init_tables(cols, rows, matrix)}; {@code matrix} is row-major. */
    static native long newTables(int rows, int cols, byte[] matrix);

    static native void freeTables(long handle);

    /** Flag in an offset of {@link #apply}: that base is a {@code byte[]}, not a direct buffer. */
    static final long HEAP = 1L << 62;

    /**
     * {@code out[i] = sum_j m[i][j] * in[j]} ({@code ^=} when {@code accumulate}) over {@code len}
     * bytes through {@code ec_encode_data}. {@code bases} holds the {@code cols} inputs then the
     * {@code rows} outputs, each a direct {@link java.nio.ByteBuffer} or a {@code byte[]} (then its
     * offset carries {@link #HEAP}); offsets are absolute (from the buffer's address or element 0).
     * One array each keeps the JNI calls per buffer to two.
     */
    static native void apply(long handle, Object[] bases, long[] offs, int len, boolean accumulate);

    /**
     * Runs a sequence of products over one set of buffers, a tile of {@code tile} bytes at a time
     * (see {@link IsalFusedOp} for {@code wiring}). {@code handles[s]} are step {@code s}'s tables
     * from {@link #newTables}, or 0 for steps that need none. {@code bases} and {@code offs}: every
     * buffer, as for {@link #apply}.
     */
    static native void applyFused(long[] handles, int[] wiring, Object[] bases, long[] offs, int len, int tile);

    /**
     * Hitchhiker's whole encode in one pass, our own AVX-512 + GFNI loop (see {@link IsalPiggybackOp}).
     * {@code affine}: the {@code r x k} matrix as GFNI bit matrices, row-major; {@code shape}: k, r,
     * weighted (0/1), coupled (0/1), then each data unit's piggyback group or -1. {@code bases} and
     * {@code offs}: {@code a_0..a_(k-1), b_0..b_(k-1), Pa_0..Pa_(r-1), Pb_0..Pb_(r-1)}, as for
     * {@link #apply}; {@code tile}: bytes per buffer per tile. Only for {@code 2 <= r <= 4} on a CPU where {@link #piggybackSupported()}.
     */
    static native void applyPiggyback(long[] affine, int[] shape, Object[] bases, long[] offs, int len, int tile);

    /** Whether this CPU has AVX-512 (F, BW) and GFNI, which {@link #applyPiggyback} needs. */
    static native boolean piggybackSupported();

    /** {@code gf_invert_matrix} of an {@code n x n} row-major matrix; {@code null} if singular. */
    static native byte[] invert(byte[] matrix, int n);

    /** The function ISA-L's dispatcher chose for {@code ec_encode_data}, e.g. {@code ec_encode_data_avx512_gfni}. */
    static native String dispatched();

    /** The file ISA-L was loaded from. */
    static native String libraryFile();

    /** The ISA-L version the shim was compiled against. */
    static native String version();
}
