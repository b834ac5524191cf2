package io.hayloft.bench.erasure;

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
 * Encode throughput of one (10,4) stripe of 1 MiB units, single thread, per codec and backend:
 * {@code ErasureCodec.encode(data, parity)}. One operation encodes 10 MiB of data; GB/s of data is
 * {@code ops/s * 10 * 2^20 / 10^9}. Compare with {@link HadoopBench#hadoopRsEncode} in the same run.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class EncodeBench extends OneForkVectorBench {

    @Param({"java", "vector"})
    public String backend;

    @Param({"rs", "hh-xor", "hh-xor+", "hh-nonxor"})
    public String codec;

    private StripeState stripe;

    @Setup(Level.Trial)
    public void setUp() {
        stripe = new StripeState(backend, codec);
        System.out.println("\n# backend " + backend + ": " + stripe.codec.kernel().description());
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        stripe.codec.close();
    }

    @Benchmark
    public ByteBuffer encode() {
        stripe.codec.encode(stripe.data, stripe.parity);
        return stripe.parity[0];
    }
}
