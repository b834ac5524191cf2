package io.hayloft.erasure;

import java.util.Arrays;
import java.util.stream.Stream;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.erasure.kernel.GfKernel;
import java.nio.ByteBuffer;
import java.util.Random;
import org.apache.hadoop.io.erasurecode.ECBlock;
import org.apache.hadoop.io.erasurecode.ECChunk;
import org.apache.hadoop.io.erasurecode.ErasureCoderOptions;
import org.apache.hadoop.io.erasurecode.coder.ErasureCodingStep;
import org.apache.hadoop.io.erasurecode.coder.HHXORErasureEncodingStep;
import org.apache.hadoop.io.erasurecode.rawcoder.XORRawEncoder;
import org.apache.hadoop.io.erasurecode.rawcoder.RSRawDecoder;
import org.apache.hadoop.io.erasurecode.rawcoder.RSRawEncoder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Hadoop's coders as an independent oracle on random data: RS parity and HH-XOR parity, byte for byte. */
class HadoopOracleTest {

    static Stream<GfKernel> kernels() {
        return Backends.all();
    }

    @ParameterizedTest
    @MethodSource("kernels")
    void reedSolomonMatchesHadoop(GfKernel kernel) throws Exception {
        Random rnd = new Random(42);
        int[][] shapes = {{10, 4}, {6, 3}, {3, 2}, {12, 4}};
        for (int[] s : shapes) {
            int k = s[0];
            int r = s[1];
            int n = 1 + rnd.nextInt(5000);
            byte[][] data = Stripes.random(rnd, k, n);
            try (ErasureCodec codec = ErasureCodec.create(CodecKind.RS, k, r, kernel, 1024)) {
                byte[][] ours = Stripes.encode(codec, data);
                RSRawEncoder hadoop = new RSRawEncoder(new ErasureCoderOptions(k, r));
                byte[][] theirs = new byte[r][n];
                hadoop.encode(copy(data), theirs);
                for (int i = 0; i < r; i++) {
                    assertThat(ours[k + i]).as("RS(%d,%d) parity %d, %d bytes", k, r, i, n).isEqualTo(theirs[i]);
                }
                // Hadoop's decoder rebuilds from our parity: erase two units, decode with Hadoop.
                RSRawDecoder decoder = new RSRawDecoder(new ErasureCoderOptions(k, r));
                byte[][] inputs = new byte[k + r][];
                for (int u = 0; u < k + r; u++) {
                    inputs[u] = u == 0 || u == k ? null : ours[u].clone();
                }
                byte[][] outputs = new byte[2][n];
                decoder.decode(inputs, new int[] {0, k}, outputs);
                assertThat(outputs[0]).isEqualTo(ours[0]);
                assertThat(outputs[1]).isEqualTo(ours[k]);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("kernels")
    void hitchhikerXorMatchesHadoopHhxor(GfKernel kernel) throws Exception {
        Random rnd = new Random(43);
        int k = 10;
        int r = 4;
        for (int round = 0; round < 5; round++) {
            int half = 1 + rnd.nextInt(3000);
            byte[][] data = Stripes.random(rnd, k, 2 * half);
            try (ErasureCodec codec = ErasureCodec.create(CodecKind.HH_XOR, k, r, kernel, 1024)) {
                byte[][] ours = Stripes.encode(codec, data);
                ECChunk[] in = new ECChunk[2 * k];
                for (int j = 0; j < k; j++) {
                    in[j] = new ECChunk(ByteBuffer.wrap(Arrays.copyOfRange(data[j], 0, half)));
                    in[k + j] = new ECChunk(ByteBuffer.wrap(Arrays.copyOfRange(data[j], half, 2 * half)));
                }
                ByteBuffer[] outBufs = new ByteBuffer[2 * r];
                ECChunk[] out = new ECChunk[2 * r];
                for (int i = 0; i < 2 * r; i++) {
                    outBufs[i] = ByteBuffer.allocate(half);
                    out[i] = new ECChunk(outBufs[i]);
                }
                step(k, r).performCoding(in, out);
                for (int i = 0; i < r; i++) {
                    assertThat(Arrays.copyOfRange(ours[k + i], 0, half)).as("P%d.a", i).isEqualTo(outBufs[i].array());
                    assertThat(Arrays.copyOfRange(ours[k + i], half, 2 * half)).as("P%d.b", i)
                            .isEqualTo(outBufs[r + i].array());
                }
            }
        }
    }

    private static ErasureCodingStep step(int k, int r) {
        ECBlock[] dataBlocks = new ECBlock[k];
        ECBlock[] parityBlocks = new ECBlock[r];
        for (int j = 0; j < k; j++) {
            dataBlocks[j] = new ECBlock(false, false);
        }
        for (int i = 0; i < r; i++) {
            parityBlocks[i] = new ECBlock(true, false);
        }
        ErasureCoderOptions options = new ErasureCoderOptions(k, r);
        return new HHXORErasureEncodingStep(dataBlocks, parityBlocks, new RSRawEncoder(options), new XORRawEncoder(options));
    }

    private static byte[][] copy(byte[][] a) {
        byte[][] c = new byte[a.length][];
        for (int i = 0; i < a.length; i++) {
            c[i] = a[i].clone();
        }
        return c;
    }
}
