package io.hayloft.bench.erasure;

import io.hayloft.erasure.gf.Gf256;
import io.hayloft.erasure.kernel.MatrixOp;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * The GF(2^8) kernels alone: {@code MatrixOp.apply} of a Cauchy matrix ({@code rows x 10}, no 0 or 1
 * coefficients) or of an all-ones row (a pure XOR), over 1 MiB per input, heap or direct buffers.
 * One operation reads 10 MiB; GB/s of input is {@code ops/s * 10 * 2^20 / 10^9}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class KernelBench extends OneForkVectorBench {

    static final int COLS = 10;
    static final int LEN = 1 << 20;

    @Param({"java", "vector"})
    public String backend;

    /** {@code cauchy4}: RS(10,4) parity; {@code cauchy1}: one repair row; {@code xor1}: one XOR row. */
    @Param({"cauchy4", "cauchy1", "xor1"})
    public String matrix;

    @Param({"heap", "direct"})
    public String buffers;

    private MatrixOp op;
    private ByteBuffer[] in;
    private ByteBuffer[] out;

    @Setup(Level.Trial)
    public void setUp() {
        int rows = matrix.equals("cauchy4") ? 4 : 1;
        byte[][] m = new byte[rows][COLS];
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < COLS; j++) {
                m[i][j] = matrix.equals("xor1") ? 1 : (byte) Gf256.inv((COLS + i) ^ j);
            }
        }
        op = StripeState.kernel(backend).prepare(m);
        Random rnd = new Random(1);
        boolean direct = buffers.equals("direct");
        in = new ByteBuffer[COLS];
        for (int j = 0; j < COLS; j++) {
            byte[] b = new byte[LEN];
            rnd.nextBytes(b);
            in[j] = direct ? ByteBuffer.allocateDirect(LEN).put(b).flip() : ByteBuffer.wrap(b);
        }
        out = new ByteBuffer[rows];
        for (int i = 0; i < rows; i++) {
            out[i] = direct ? ByteBuffer.allocateDirect(LEN) : ByteBuffer.allocate(LEN);
        }
    }

    @Benchmark
    public ByteBuffer apply() {
        op.apply(in, out, LEN);
        return out[0];
    }
}
