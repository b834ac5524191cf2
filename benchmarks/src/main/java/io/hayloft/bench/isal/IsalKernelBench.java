package io.hayloft.bench.isal;

import io.hayloft.erasure.gf.Gf256;
import io.hayloft.erasure.kernel.GfKernel;
import io.hayloft.erasure.kernel.Kernels;
import io.hayloft.erasure.kernel.MatrixOp;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The GF kernels on RS(10,4) with ISA-L's Cauchy matrix, the same work as
 * {@code benchmarks/native/isal_bench.c} (which calls ISA-L directly), so the three compare:
 * <ul>
 *   <li>{@code encode}: 10 units in, 4 parity units out;</li>
 *   <li>{@code repair1}: rebuild data unit 0 from units 1..10 (one decode row, inverted survivor matrix);</li>
 *   <li>{@code accumulate}: {@code parity ^= M * data} (how the codecs add piggybacks).</li>
 * </ul>
 * One thread, one stripe reused (as the C program does). Throughput in ops/s; one op reads
 * {@code 10 * unitSize} bytes. {@code buffers=heap} measures the pinned-array path
 * ({@code GetPrimitiveArrayCritical}), {@code direct} the address path.
 *
 * <pre>./hayloft bench jmh IsalKernelBench -p unitSize=1048576,65536</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector"})
public class IsalKernelBench {

    static final int K = 10;
    static final int R = 4;

    @Param({"native", "java"})
    public String backend;

    @Param({"1048576", "65536"})
    public int unitSize;

    /**
     * {@code direct}: {@code ByteBuffer.allocateDirect}; {@code kernel}: the backend's own
     * {@code GfKernel.allocate} (direct and page-staggered for native); {@code heap}: byte arrays.
     */
    @Param({"direct", "kernel", "heap"})
    public String buffers;

    private GfKernel kernel;

    private MatrixOp encode;
    private MatrixOp repair;
    private ByteBuffer[] data;
    private ByteBuffer[] parity;
    private ByteBuffer[] survivors;
    private ByteBuffer[] rebuilt;

    @Setup(Level.Trial)
    public void setUp() {
        kernel = Kernels.byName(backend);
        if (kernel == null) {
            throw new IllegalStateException("backend " + backend + " is not available here: " + Kernels.unavailable());
        }
        byte[][] generator = cauchyGenerator(K, R);
        byte[][] parityRows = new byte[R][];
        System.arraycopy(generator, K, parityRows, 0, R);
        encode = kernel.prepare(parityRows);
        byte[][] survivorRows = new byte[K][];
        System.arraycopy(generator, 1, survivorRows, 0, K);
        repair = kernel.prepare(new byte[][] {invert(survivorRows)[0]});

        Random rnd = new Random(42);
        data = new ByteBuffer[K];
        for (int j = 0; j < K; j++) {
            data[j] = allocate(unitSize);
            byte[] b = new byte[unitSize];
            rnd.nextBytes(b);
            data[j].put(0, b);
        }
        parity = new ByteBuffer[R];
        for (int i = 0; i < R; i++) {
            parity[i] = allocate(unitSize);
        }
        encode.apply(data, parity, unitSize);
        survivors = new ByteBuffer[K];
        System.arraycopy(data, 1, survivors, 0, K - 1);
        survivors[K - 1] = parity[0];
        rebuilt = new ByteBuffer[] {allocate(unitSize)};
        repair.apply(survivors, rebuilt, unitSize);
        if (rebuilt[0].mismatch(data[0]) != -1) {
            throw new IllegalStateException("repair produced wrong bytes on " + backend);
        }
    }

    private ByteBuffer allocate(int size) {
        switch (buffers) {
            case "direct":
                return ByteBuffer.allocateDirect(size);
            case "kernel":
                return kernel.allocate(size);
            default:
                return ByteBuffer.allocate(size);
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        encode.close();
        repair.close();
    }

    /**
     * This thread's CPU time, per iteration: on a shared, overloaded machine
     * {@code calls * 10 * unitSize / cpuNanos} is a steadier throughput than wall time. Reading the
     * thread CPU clock costs about a microsecond, so it is read once per {@value #SAMPLE} calls, and
     * only completed windows count.
     */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class Cpu {
        static final int SAMPLE = 16;
        public long cpuNanos;
        public long calls;
        private long last;
        private int pending;

        @Setup(Level.Iteration)
        public void start() {
            cpuNanos = 0;
            calls = 0;
            pending = 0;
            last = THREADS.getCurrentThreadCpuTime();
        }

        void tick() {
            if (++pending == SAMPLE) {
                long now = THREADS.getCurrentThreadCpuTime();
                cpuNanos += now - last;
                calls += SAMPLE;
                last = now;
                pending = 0;
            }
        }
    }

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    @Benchmark
    public ByteBuffer encode(Cpu cpu) {
        encode.apply(data, parity, unitSize);
        cpu.tick();
        return parity[0];
    }

    @Benchmark
    public ByteBuffer repair1(Cpu cpu) {
        repair.apply(survivors, rebuilt, unitSize);
        cpu.tick();
        return rebuilt[0];
    }

    @Benchmark
    public ByteBuffer accumulate(Cpu cpu) {
        encode.applyAccumulate(data, parity, unitSize);
        cpu.tick();
        return parity[0];
    }

    /** Identity on top of ISA-L's {@code gf_gen_cauchy1_matrix} rows: {@code C[i][j] = inv((k + i) ^ j)}. */
    static byte[][] cauchyGenerator(int k, int r) {
        byte[][] g = new byte[k + r][k];
        for (int i = 0; i < k; i++) {
            g[i][i] = 1;
        }
        for (int i = 0; i < r; i++) {
            for (int j = 0; j < k; j++) {
                g[k + i][j] = (byte) Gf256.inv((k + i) ^ j);
            }
        }
        return g;
    }

    /** Gauss-Jordan inverse over GF(2^8); the matrices here are always invertible. */
    static byte[][] invert(byte[][] m) {
        int n = m.length;
        int[][] a = new int[n][2 * n];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                a[i][j] = m[i][j] & 0xff;
            }
            a[i][n + i] = 1;
        }
        for (int c = 0; c < n; c++) {
            int p = c;
            while (a[p][c] == 0) {
                p++;
            }
            int[] t = a[p];
            a[p] = a[c];
            a[c] = t;
            int inv = Gf256.inv(a[c][c]);
            for (int j = 0; j < 2 * n; j++) {
                a[c][j] = Gf256.mul(a[c][j], inv);
            }
            for (int i = 0; i < n; i++) {
                if (i != c && a[i][c] != 0) {
                    int f = a[i][c];
                    for (int j = 0; j < 2 * n; j++) {
                        a[i][j] ^= Gf256.mul(f, a[c][j]);
                    }
                }
            }
        }
        byte[][] r = new byte[n][n];
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                r[i][j] = (byte) a[i][n + j];
            }
        }
        return r;
    }
}
