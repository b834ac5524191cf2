package io.hayloft.bench.erasure;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Repair of one lost data unit (0 or 9) of a (10,4) stripe of 1 MiB units held in memory, through
 * {@code ErasureCodec.repair} with a reader that copies the requested ranges (so the time includes
 * moving every byte read) and a writer that copies the rebuilt unit out; and a 64 KiB degraded read of
 * unit 0 through {@code readRange}. The bytes each operation reads are printed once per trial
 * ({@code # bytes read}) and checked against the unit's real content.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class RepairBench extends OneForkVectorBench {

    /** A range inside the first half of the unit (substripe {@code a} of the Hitchhiker codes). */
    static final long READ_OFFSET = 300_000;
    static final int READ_LENGTH = 64 * 1024;

    @Param({"java", "vector"})
    public String backend;

    @Param({"rs", "hh-xor", "hh-xor+", "hh-nonxor"})
    public String codec;

    @Param({"0", "9"})
    public int lost;

    private StripeState stripe;
    private final ByteBuffer rebuilt = ByteBuffer.allocate(StripeState.UNIT);
    private final ByteBuffer range = ByteBuffer.allocate(READ_LENGTH);
    private static final int[] NONE = new int[0];

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        stripe = new StripeState(backend, codec);
        long read = repair();
        if (!rebuilt.clear().equals(stripe.units[lost].duplicate().clear())) {
            throw new IllegalStateException("repair of unit " + lost + " produced wrong bytes");
        }
        long rangeRead = degradedRead();
        ByteBuffer expected = stripe.units[lost].duplicate();
        expected.position((int) READ_OFFSET).limit((int) READ_OFFSET + READ_LENGTH);
        if (!range.clear().equals(expected)) {
            throw new IllegalStateException("degraded read of unit " + lost + " produced wrong bytes");
        }
        System.out.printf("%n# bytes read: repair %s unit %d: %d (%.2f units); 64 KiB degraded read: %d (%.2f x 64 KiB); %s%n",
                codec, lost, read, read / (double) StripeState.UNIT, rangeRead, rangeRead / (double) READ_LENGTH,
                stripe.codec.kernel().description());
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        stripe.codec.close();
    }

    @Benchmark
    public long repair() throws IOException {
        return stripe.codec.repair(StripeState.UNIT, lost, NONE, stripe.reader, (unit, offset, src) -> {
            ByteBuffer dst = rebuilt.duplicate();
            dst.position(Math.toIntExact(offset));
            dst.put(src);
        });
    }

    @Benchmark
    public long degradedRead() throws IOException {
        range.clear();
        return stripe.codec.readRange(StripeState.UNIT, lost, READ_OFFSET, range, NONE, stripe.reader);
    }
}
