package io.hayloft.bench.erasure;

import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import io.hayloft.erasure.UnitReader;
import io.hayloft.erasure.UnitWriter;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Streaming encode of one (10,4) stripe, single thread, per codec, backend and unit size:
 * {@code ErasureCodec.encode(unitSize, UnitReader, UnitWriter)} with the default codec chunk size
 * (1 MiB per unit and substripe), as a store or {@code hayloft ec encode} runs it.
 *
 * <p>So that 256 MiB units (14 x 256 MiB) need no 3.5 GiB of memory, the data units are not held:
 * the reader copies each requested range out of one {@value #SOURCE_MIB} MiB direct buffer of random
 * bytes, unit {@code u} starting at a different offset ({@code u * 7,340,033} bytes, wrapping
 * around), so every read is a real {@code memcpy} from memory larger than the L3 cache, like a read
 * from the page cache; the writer consumes the parity without keeping it. Every codec pays the same
 * copy for the same bytes, so the HH ÷ RS ratio is the codec's own cost. One operation encodes
 * {@code 10 x unitSize} bytes of data: MB/s of data = {@code ops/s * 10 * unitSize / 10^6}.
 *
 * <p>On a shared, loaded machine the wall-clock score mostly measures how often the thread was
 * descheduled, so the benchmark also counts the thread's own CPU time ({@link CpuTime}, secondary
 * results {@code cpuNanos} and {@code dataBytes}, per iteration): {@code dataBytes * 1000 / cpuNanos}
 * is MB of data encoded per CPU second, native calls included (they run on the same thread).
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class StreamingEncodeBench extends OneForkVectorBench {

    static final int K = 10;
    static final int R = 4;
    static final int SOURCE_MIB = 64;

    @Param({"native", "vector"})
    public String backend;

    @Param({"rs", "hh-xor+", "hh-xor", "hh-nonxor"})
    public String codec;

    /** Unit size: {@code 64k}, {@code 1m}, {@code 16m}, {@code 256m}. */
    @Param({"1m", "16m", "256m"})
    public String unit;

    private ErasureCodec code;
    private long unitSize;
    private UnitReader reader;
    private UnitWriter writer;
    private long written;

    @Setup(Level.Trial)
    public void setUp() {
        code = ErasureCodec.create(CodecKind.fromWireName(codec), K, R, StripeState.kernel(backend),
                ErasureCodec.DEFAULT_CHUNK_SIZE);
        unitSize = parseSize(unit);
        reader = reader(randomSource());
        writer = (u, offset, src) -> {
            written += src.remaining();
            src.position(src.limit());
        };
        System.out.println("\n# backend " + backend + ": " + code.kernel().description());
    }

    /** {@value #SOURCE_MIB} MiB of random bytes in a direct buffer (fixed seed). */
    static ByteBuffer randomSource() {
        ByteBuffer source = ByteBuffer.allocateDirect(SOURCE_MIB << 20);
        Random rnd = new Random(20261124L);
        byte[] block = new byte[1 << 16];
        while (source.hasRemaining()) {
            rnd.nextBytes(block);
            source.put(block, 0, Math.min(block.length, source.remaining()));
        }
        return source;
    }

    /** Unit {@code u} of any size read out of {@code source}, starting at {@code u * 7,340,033} and wrapping around. */
    static UnitReader reader(ByteBuffer source) {
        int sourceSize = source.capacity();
        return (u, offset, dst) -> {
            long from = (u * 7_340_033L + offset) % sourceSize;
            while (dst.hasRemaining()) {
                int n = (int) Math.min(dst.remaining(), sourceSize - from);
                dst.put(source.slice((int) from, n));
                from = 0;
            }
        };
    }

    static long parseSize(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        long mult = t.endsWith("k") ? 1L << 10 : t.endsWith("m") ? 1L << 20 : 1;
        return Long.parseLong(mult == 1 ? t : t.substring(0, t.length() - 1)) * mult;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        code.close();
    }

    /** The benchmark thread's CPU time and the data bytes encoded, summed per iteration. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class CpuTime {
        private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

        public long cpuNanos;
        public long dataBytes;

        static long now() {
            return THREADS.getCurrentThreadCpuTime();
        }
    }

    @Benchmark
    public long encode(CpuTime cpu) throws IOException {
        long start = CpuTime.now();
        code.encode(unitSize, reader, writer);
        cpu.cpuNanos += CpuTime.now() - start;
        cpu.dataBytes += K * unitSize;
        return written;
    }
}
