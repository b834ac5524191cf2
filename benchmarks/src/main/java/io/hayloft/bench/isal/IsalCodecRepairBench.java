package io.hayloft.bench.isal;

import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import io.hayloft.erasure.ReadRange;
import io.hayloft.erasure.kernel.GfKernel;
import io.hayloft.erasure.kernel.Kernels;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.TimeUnit;
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
import org.openjdk.jmh.annotations.Warmup;

/**
 * Single-unit repair at the codec level, RS against HH-XOR+ at (10,4), on the native and Java
 * backends: time per repair; the bytes each repair reads are printed at setup (and checked against
 * {@code planRepair} on every op). Units live in
 * memory (direct buffers); the reader copies the requested ranges, as a local disk read would, and
 * the writer copies the rebuilt unit out. One thread.
 *
 * <pre>./hayloft bench jmh -- IsalCodecRepairBench</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector"})
public class IsalCodecRepairBench {

    static final int K = 10;
    static final int R = 4;

    @Param({"RS", "HH_XOR_PLUS"})
    public String codec;

    @Param({"native", "java"})
    public String backend;

    /** Data units 0 (in the first piggyback group) and 9 (the unit XOR+ leaves out of every group). */
    @Param({"0", "9"})
    public int lost;

    @Param({"1048576"})
    public int unitSize;

    private ErasureCodec code;
    private ByteBuffer[] units;
    private ByteBuffer rebuilt;
    private long planned;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        GfKernel kernel = Kernels.byName(backend);
        if (kernel == null) {
            throw new IllegalStateException("backend " + backend + " is not available here: " + Kernels.unavailable());
        }
        code = ErasureCodec.create(CodecKind.valueOf(codec), K, R, kernel, unitSize);
        units = new ByteBuffer[K + R];
        Random rnd = new Random(1);
        byte[] b = new byte[unitSize];
        for (int i = 0; i < K + R; i++) {
            units[i] = ByteBuffer.allocateDirect(unitSize);
            if (i < K) {
                rnd.nextBytes(b);
                units[i].put(0, b);
            }
        }
        ByteBuffer[] data = new ByteBuffer[K];
        ByteBuffer[] parity = new ByteBuffer[R];
        System.arraycopy(units, 0, data, 0, K);
        System.arraycopy(units, K, parity, 0, R);
        code.encode(data, parity);
        rebuilt = ByteBuffer.allocateDirect(unitSize);
        for (ReadRange r : code.planRepair(unitSize, lost)) {
            planned += r.length();
        }
        repair();
        System.out.println("# " + codec + " repair of unit " + lost + " reads " + planned + " bytes ("
                + (planned * 2 / unitSize) + " half-units of " + unitSize / 2 + ")");
        if (rebuilt.clear().mismatch(units[lost].clear()) != -1) {
            throw new IllegalStateException(codec + " on " + backend + " rebuilt unit " + lost + " wrong");
        }
    }

    @Benchmark
    public long repair() throws IOException {
        long n = code.repair(unitSize, lost, new int[0],
                (unit, offset, dst) -> dst.put(units[unit].slice((int) offset, dst.remaining())),
                (unit, offset, src) -> rebuilt.put((int) offset, src, src.position(), src.remaining()));
        if (n != planned) {
            throw new IllegalStateException("read " + n + " bytes, plan says " + planned);
        }
        return n;
    }
}
