package io.hayloft.bench.erasure;

import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import io.hayloft.erasure.kernel.ScalarKernel;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.io.erasurecode.ErasureCoderOptions;
import org.apache.hadoop.io.erasurecode.rawcoder.RSRawDecoder;
import org.apache.hadoop.io.erasurecode.rawcoder.RSRawEncoder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Setup;

/**
 * Hadoop's pure-Java Reed-Solomon coders ({@code RSRawEncoder}, {@code RSRawDecoder}, the "rs" codec of
 * HDFS) on the same (10,4) stripe of 1 MiB units, for comparison with {@link EncodeBench} and
 * {@link RepairBench} in the same run. Uses Hadoop's byte-array API, its fastest Java path. The setup
 * checks that Hadoop's parity equals ours, so both compute the same thing.
 * Throughput of {@code hadoopRsEncode} is in ops/s (10 MiB of data each); of {@code hadoopRsRepair},
 * rebuilding data unit 0 from 10 whole units, too (time = 1 / ops).
 */
public class HadoopBench extends OneForkVectorBench {

    private final int k = StripeState.K;
    private final int r = StripeState.R;
    private final int unit = StripeState.UNIT;
    private RSRawEncoder encoder;
    private RSRawDecoder decoder;
    private byte[][] data;
    private byte[][] parity;
    private byte[][] decodeInputs;
    private byte[][] decodeOutputs;

    @Setup(Level.Trial)
    public void setUp() throws IOException {
        ErasureCoderOptions options = new ErasureCoderOptions(k, r);
        encoder = new RSRawEncoder(options);
        decoder = new RSRawDecoder(options);
        Random rnd = new Random(20261122L);
        data = new byte[k][unit];
        for (byte[] d : data) {
            rnd.nextBytes(d);
        }
        parity = new byte[r][unit];
        encoder.encode(data, parity);
        ByteBuffer[] ours = new ByteBuffer[r];
        for (int i = 0; i < r; i++) {
            ours[i] = ByteBuffer.allocate(unit);
        }
        ByteBuffer[] in = new ByteBuffer[k];
        for (int j = 0; j < k; j++) {
            in[j] = ByteBuffer.wrap(data[j]);
        }
        try (ErasureCodec codec = ErasureCodec.create(CodecKind.RS, k, r, ScalarKernel.INSTANCE, ErasureCodec.DEFAULT_CHUNK_SIZE)) {
            codec.encode(in, ours);
        }
        for (int i = 0; i < r; i++) {
            if (!Arrays.equals(ours[i].array(), parity[i])) {
                throw new IllegalStateException("Hadoop's parity " + i + " differs from ours");
            }
        }
        // Repair unit 0 from units 1..10 (data 1..9 and parity 0), as our RS repair reads.
        decodeInputs = new byte[k + r][];
        for (int u = 1; u <= k; u++) {
            decodeInputs[u] = u < k ? data[u] : parity[0];
        }
        decodeOutputs = new byte[1][unit];
        decoder.decode(decodeInputs.clone(), new int[] {0}, decodeOutputs);
        if (!Arrays.equals(decodeOutputs[0], data[0])) {
            throw new IllegalStateException("Hadoop's decoder did not rebuild unit 0");
        }
    }

    @Benchmark
    public byte[][] hadoopRsEncode() throws IOException {
        encoder.encode(data, parity);
        return parity;
    }

    @Benchmark
    public byte[][] hadoopRsRepair() throws IOException {
        decoder.decode(decodeInputs.clone(), new int[] {0}, decodeOutputs);
        return decodeOutputs;
    }
}
