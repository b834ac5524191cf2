package io.hayloft.bench.erasure;

import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import io.hayloft.erasure.UnitReader;
import io.hayloft.erasure.kernel.GfKernel;
import io.hayloft.erasure.kernel.Kernels;
import java.nio.ByteBuffer;
import java.util.Random;

/**
 * One encoded stripe in memory for the codec benchmarks: {@code k = 10} data and {@code r = 4} parity
 * units of {@link #UNIT} bytes each, heap buffers, random data. Not thread-safe (one per benchmark
 * thread or trial).
 */
final class StripeState {

    static final int K = 10;
    static final int R = 4;
    static final int UNIT = 1 << 20;

    final ErasureCodec codec;
    final ByteBuffer[] units = new ByteBuffer[K + R];
    final ByteBuffer[] data = new ByteBuffer[K];
    final ByteBuffer[] parity = new ByteBuffer[R];
    /** Copies byte ranges out of {@link #units}, as a store would serve them. */
    final UnitReader reader;

    StripeState(String backend, String codecName) {
        GfKernel kernel = kernel(backend);
        this.codec = ErasureCodec.create(CodecKind.fromWireName(codecName), K, R, kernel, ErasureCodec.DEFAULT_CHUNK_SIZE);
        Random rnd = new Random(20261122L);
        for (int u = 0; u < K + R; u++) {
            byte[] bytes = new byte[UNIT];
            if (u < K) {
                rnd.nextBytes(bytes);
            }
            units[u] = ByteBuffer.wrap(bytes);
        }
        System.arraycopy(units, 0, data, 0, K);
        System.arraycopy(units, K, parity, 0, R);
        codec.encode(data, parity);
        this.reader = (unit, offset, dst) -> {
            ByteBuffer src = units[unit].duplicate();
            src.position(Math.toIntExact(offset)).limit(Math.toIntExact(offset + dst.remaining()));
            dst.put(src);
        };
    }

    /** The named backend, or a clear failure (JMH reports it and goes on with the other parameters). */
    static GfKernel kernel(String backend) {
        GfKernel kernel = Kernels.byName(backend);
        if (kernel == null) {
            throw new IllegalStateException("erasure backend '" + backend + "' is not available in this JVM: "
                    + Kernels.unavailable().getOrDefault(backend, "not loadable"));
        }
        return kernel;
    }
}
