package io.hayloft.erasure.kernel.isal;

import java.util.Arrays;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import io.hayloft.erasure.kernel.GfKernel;
import io.hayloft.erasure.kernel.ScalarKernel;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Encode with one backend, decode with the other, for every codec: parity bytes identical, and any
 * {@code r} erasures rebuilt to the original bytes, on random data, odd and even sizes, units at
 * random offsets inside larger heap and direct buffers.
 */
class IsalInteropTest {

    private GfKernel isal;

    @BeforeEach
    void load() {
        isal = NativeOrSkip.kernel();
    }

    private static ByteBuffer place(byte[] bytes, Random rnd) {
        int pad = rnd.nextInt(13);
        ByteBuffer b = rnd.nextBoolean() ? ByteBuffer.allocate(bytes.length + 2 * pad)
                : ByteBuffer.allocateDirect(bytes.length + 2 * pad);
        b.put(pad, bytes);
        return b.position(pad).limit(pad + bytes.length);
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] r = new byte[b.remaining()];
        b.get(b.position(), r);
        return r;
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(CodecKind.class)
    void encodeWithOneBackendDecodeWithTheOther(CodecKind kind) {
        Random rnd = new Random(kind.ordinal() * 7919L + 1);
        int[][] shapes = {{10, 4}, {6, 3}, {3, 2}, {12, 4}};
        int[] sizes = {0, 2, 6, 64, 130, 4098, 65_538, 131_074};
        for (int[] shape : shapes) {
            int k = shape[0];
            int r = shape[1];
            for (int size : sizes) {
                int n = kind == CodecKind.RS && size > 2 ? size - 1 : size; // odd sizes for RS
                GfKernel[][] pairs = {{isal, ScalarKernel.INSTANCE}, {ScalarKernel.INSTANCE, isal}};
                for (GfKernel[] pair : pairs) {
                    check(kind, k, r, n, pair[0], pair[1], rnd);
                }
            }
        }
    }

    private static void check(CodecKind kind, int k, int r, int size, GfKernel enc, GfKernel dec, Random rnd) {
        int chunk = 64 * 1024;
        ErasureCodec encoder = ErasureCodec.create(kind, k, r, enc, chunk);
        ErasureCodec decoder = ErasureCodec.create(kind, k, r, dec, chunk);
        ErasureCodec reference = ErasureCodec.create(kind, k, r, ScalarKernel.INSTANCE, chunk);
        byte[][] original = new byte[k + r][size];
        ByteBuffer[] data = new ByteBuffer[k];
        ByteBuffer[] refData = new ByteBuffer[k];
        for (int j = 0; j < k; j++) {
            rnd.nextBytes(original[j]);
            data[j] = place(original[j], rnd);
            refData[j] = ByteBuffer.wrap(original[j].clone());
        }
        ByteBuffer[] parity = new ByteBuffer[r];
        ByteBuffer[] refParity = new ByteBuffer[r];
        for (int i = 0; i < r; i++) {
            parity[i] = place(new byte[size], rnd);
            refParity[i] = ByteBuffer.allocate(size);
        }
        encoder.encode(data, parity);
        reference.encode(refData, refParity);
        String what = kind + "(" + k + "," + r + ") size " + size + " encoded on " + enc.name();
        for (int i = 0; i < r; i++) {
            assertThat(bytes(parity[i])).as("parity %d, %s", i, what).isEqualTo(refParity[i].array());
            original[k + i] = bytes(parity[i]);
        }
        List<Integer> all = new ArrayList<>();
        for (int u = 0; u < k + r; u++) {
            all.add(u);
        }
        Collections.shuffle(all, rnd);
        int lost = 1 + rnd.nextInt(r);
        int[] erased = all.subList(0, lost).stream().mapToInt(Integer::intValue).toArray();
        ByteBuffer[] units = new ByteBuffer[k + r];
        for (int u = 0; u < k + r; u++) {
            units[u] = place(original[u], rnd);
        }
        for (int e : erased) {
            ByteBuffer b = units[e];
            for (int t = b.position(); t < b.limit(); t++) {
                b.put(t, (byte) 0x5a);
            }
        }
        decoder.decode(units, erased);
        for (int u = 0; u < k + r; u++) {
            assertThat(bytes(units[u])).as("unit %d after losing %s, %s, decoded on %s", u,
                    Arrays.toString(erased), what, dec.name()).isEqualTo(original[u]);
        }
    }
}
