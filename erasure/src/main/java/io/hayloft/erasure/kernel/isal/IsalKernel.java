package io.hayloft.erasure.kernel.isal;

import io.hayloft.erasure.kernel.FusedOp;
import io.hayloft.erasure.kernel.FusedStep;
import io.hayloft.erasure.kernel.GfKernel;
import io.hayloft.erasure.kernel.MatrixOp;
import io.hayloft.erasure.kernel.PiggybackEncode;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The {@code native} backend: Intel ISA-L's {@code ec_init_tables} / {@code ec_encode_data} through
 * the JNI shim {@code libhayloft-isal.so}. Produces exactly the bytes of the pure-Java kernels (same
 * field, polynomial 0x11D; the matrices come from the codecs). Obtain it through
 * {@link io.hayloft.erasure.kernel.Kernels} or {@link IsalKernelFactory}.
 *
 * <p>Thread-safe and stateless apart from the loaded library; the {@link MatrixOp}s it prepares hold
 * native memory and should be closed (see {@link IsalMatrixOp}).
 */
public final class IsalKernel implements GfKernel {

    private final NativeLibrary.Info info;

    IsalKernel(NativeLibrary.Info info) {
        this.info = info;
    }

    @Override
    public String name() {
        return "native";
    }

    @Override
    public String description() {
        return "ISA-L " + info.version + ", " + kernelFamily() + " kernels (" + info.dispatched + ")";
    }

    @Override
    public MatrixOp prepare(byte[][] matrix) {
        return new IsalMatrixOp(matrix);
    }

    /** The whole sequence in one native call per apply, a tile at a time: see {@link IsalFusedOp}. */
    @Override
    public FusedOp prepareFused(List<FusedStep> steps) {
        return new IsalFusedOp(steps);
    }

    /**
     * Hitchhiker with 2 to 4 parity units on a CPU with AVX-512 and GFNI: one loop that reads every
     * input once ({@link IsalPiggybackOp}); otherwise the fused ISA-L steps.
     */
    @Override
    public FusedOp preparePiggyback(PiggybackEncode encode) {
        if (encode.parityUnits() <= 4 && IsalPiggybackOp.SUPPORTED) {
            return new IsalPiggybackOp(encode);
        }
        return prepareFused(encode.steps());
    }

    /** Buffers at least this large are staggered by {@link #allocate}. */
    static final int STAGGER_FROM = 16 * 1024;

    private final AtomicInteger allocations = new AtomicInteger();

    /**
     * A direct buffer (ISA-L reads it by address, with no pinning and no copy), whose start is
     * staggered by a different multiple of 64 bytes within a page for each call. Equal-sized
     * {@code ByteBuffer.allocateDirect} buffers of 64 KiB and more all start at the same offset in
     * a page, so the 14 streams of an RS(10,4) encode fall into the same cache sets; staggered, they
     * spread over the sets (plain and staggered buffers are compared in docs/benchmarks-history.md).
     */
    @Override
    public ByteBuffer allocate(int size) {
        if (size < STAGGER_FROM) {
            return ByteBuffer.allocateDirect(size);
        }
        int shift = (allocations.getAndIncrement() * 5 * 64) % 4096;
        return ByteBuffer.allocateDirect(size + 4096).position(shift).limit(shift + size).slice();
    }

    /** The ISA-L version linked, e.g. {@code 2.31.1}. */
    public String isalVersion() {
        return info.version;
    }

    /** Where that ISA-L came from, e.g. {@code Debian trixie libisal2 2.31.1-1.1}. */
    public String isalSource() {
        return info.source;
    }

    /** {@code static} or {@code dynamic}. */
    public String linkage() {
        return info.linkage;
    }

    /** The ISA-L function its dispatcher chose for {@code ec_encode_data} on this CPU. */
    public String dispatched() {
        return info.dispatched;
    }

    /** Where the shim and ISA-L were loaded from. */
    public String loadedFrom() {
        if (info.loadedFrom.startsWith("/")) {
            return info.loadedFrom + " (" + NativeLibrary.PATH_PROPERTY + "), ISA-L from " + info.libraryFile;
        }
        boolean bundled = info.libraryFile.contains("hayloft-isal-");
        return info.loadedFrom + " (extracted to a private temporary directory, deleted once loaded), ISA-L "
                + (bundled ? "bundled beside it" : "from " + info.libraryFile);
    }

    /** {@code GFNI (AVX-512)}, {@code GFNI (AVX2)}, {@code AVX-512}, {@code AVX2}, {@code AVX}, {@code SSE} or {@code base}. */
    public String kernelFamily() {
        return family(info.dispatched);
    }

    static String family(String dispatched) {
        String d = dispatched.toLowerCase(Locale.ROOT);
        if (d.contains("avx512_gfni")) {
            return "GFNI (AVX-512)";
        } else if (d.contains("avx2_gfni")) {
            return "GFNI (AVX2)";
        } else if (d.contains("avx512")) {
            return "AVX-512";
        } else if (d.contains("avx2")) {
            return "AVX2";
        } else if (d.contains("avx")) {
            return "AVX";
        } else if (d.contains("sse")) {
            return "SSE";
        } else if (d.contains("base")) {
            return "base (no SIMD)";
        } else if (d.contains("neon") || d.contains("sve")) {
            return d.contains("sve") ? "SVE" : "NEON";
        }
        return "unknown";
    }

    /**
     * Inverts an {@code n x n} matrix with ISA-L's {@code gf_invert_matrix}.
     *
     * @return the inverse, or {@code null} when the matrix is singular
     * @throws IllegalArgumentException if the matrix is not square
     */
    public byte[][] invert(byte[][] m) {
        int n = m.length;
        byte[] flat = new byte[n * n];
        for (int i = 0; i < n; i++) {
            if (m[i].length != n) {
                throw new IllegalArgumentException("matrix row " + i + " has " + m[i].length + " columns, expected " + n);
            }
            System.arraycopy(m[i], 0, flat, i * n, n);
        }
        byte[] inv = IsalNative.invert(flat, n);
        if (inv == null) {
            return null;
        }
        byte[][] r = new byte[n][n];
        for (int i = 0; i < n; i++) {
            System.arraycopy(inv, i * n, r[i], 0, n);
        }
        return r;
    }
}
