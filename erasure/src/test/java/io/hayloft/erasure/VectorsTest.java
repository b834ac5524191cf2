package io.hayloft.erasure;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.erasure.codec.Hitchhiker;
import io.hayloft.erasure.gf.Gf256;
import io.hayloft.erasure.gf.GfMatrix;
import io.hayloft.erasure.kernel.GfKernel;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The test vectors of docs/erasure.md, bit for bit, on every backend. */
class VectorsTest {

    static Stream<GfKernel> kernels() {
        return Backends.all();
    }

    @Test
    void fieldChecks() {
        assertThat(Gf256.mul(0x0A, 0xDD)).isEqualTo(0x01);
        assertThat(Gf256.inv(0x0A)).isEqualTo(0xDD);
        for (int a = 1; a < 256; a++) {
            assertThat(Gf256.mul(a, Gf256.inv(a))).as("a * inv(a), a=%d", a).isEqualTo(1);
        }
    }

    @Test
    void cauchyRows() {
        assertThat(rows(GfMatrix.cauchy(10, 4))).containsExactly(
                "dd 98 ad 9d 5d 96 3d aa 8e f4",
                "98 dd 9d ad 96 5d aa 3d f4 8e",
                "3d aa 5d 96 ad 9d dd 98 47 a7",
                "aa 3d 96 5d 9d ad 98 dd a7 47");
        assertThat(rows(GfMatrix.cauchy(6, 3))).containsExactly(
                "7a ba 47 a7 8e f4", "ba 7a a7 47 f4 8e", "ad 9d dd 98 3d aa");
        assertThat(rows(GfMatrix.cauchy(3, 2))).containsExactly("f4 8e 01", "47 a7 7a");
    }

    private static String[] rows(byte[][] m) {
        String[] s = new String[m.length];
        for (int i = 0; i < m.length; i++) {
            s[i] = Stripes.hex(m[i], 0, m[i].length);
        }
        return s;
    }

    @ParameterizedTest
    @MethodSource("kernels")
    void reedSolomonOneBytePerUnit(GfKernel kernel) {
        assertThat(rsParity(kernel, 10, 4)).isEqualTo("35 aa 61 37");
        assertThat(rsParity(kernel, 6, 3)).isEqualTo("f2 bb b8");
        assertThat(rsParity(kernel, 3, 2)).isEqualTo("f6 9a");
    }

    private static String rsParity(GfKernel kernel, int k, int r) {
        byte[][] data = new byte[k][1];
        for (int j = 0; j < k; j++) {
            data[j][0] = (byte) (j + 1);
        }
        try (ErasureCodec codec = ErasureCodec.create(CodecKind.RS, k, r, kernel, 1024)) {
            byte[][] all = Stripes.encode(codec, data);
            byte[] p = new byte[r];
            for (int i = 0; i < r; i++) {
                p[i] = all[k + i][0];
            }
            return Stripes.hex(p, 0, r);
        }
    }

    /** Data: s_0 = 1, s_(n+1) = (73 s_n + 41) mod 256; a_j[t] = s[4j+t], b_j[t] = s[40+4j+t]. */
    static byte[][] hitchhikerVectorData() {
        int[] s = new int[80];
        s[0] = 1;
        for (int n = 1; n < 80; n++) {
            s[n] = (73 * s[n - 1] + 41) % 256;
        }
        byte[][] data = new byte[10][8];
        for (int j = 0; j < 10; j++) {
            for (int t = 0; t < 4; t++) {
                data[j][t] = (byte) s[4 * j + t];
                data[j][4 + t] = (byte) s[40 + 4 * j + t];
            }
        }
        return data;
    }

    @ParameterizedTest
    @MethodSource("kernels")
    void hitchhikerVectors(GfKernel kernel) {
        assertParity(kernel, CodecKind.HH_XOR,
                "9b 79 0a 96|d9 a6 f0 f6", "31 21 e7 27|19 5a 7c e4",
                "c8 63 25 5e|43 d8 3e 26", "cb 00 ce c5|a9 7d 4c ce");
        assertParity(kernel, CodecKind.HH_XOR_PLUS,
                "ef 8d be 5a|ed 92 64 aa", "5d 2e 47 28|29 da f3 e4",
                "36 c0 4f 4b|4b 9a 44 0c", "f4 f4 2a 68|10 e1 a4 15");
        assertParity(kernel, CodecKind.HH_NONXOR,
                "9b 79 0a 96|d9 a6 f0 f6", "56 36 b5 0b|67 17 52 2c",
                "c8 63 25 5e|69 b8 dd f3", "cb 00 ce c5|3c 96 23 48");
    }

    private static void assertParity(GfKernel kernel, CodecKind kind, String... expected) {
        try (ErasureCodec codec = ErasureCodec.create(kind, 10, 4, kernel, 1024)) {
            byte[][] all = Stripes.encode(codec, hitchhikerVectorData());
            for (int i = 0; i < 4; i++) {
                String got = Stripes.hex(all[10 + i], 0, 4) + "|" + Stripes.hex(all[10 + i], 4, 8);
                assertThat(got).as("%s P%d (a|b) on %s", kind, i, kernel.name()).isEqualTo(expected[i]);
            }
        }
    }

    @Test
    void groupsAtTenFour() {
        try (Hitchhiker xor = (Hitchhiker) ErasureCodec.create(CodecKind.HH_XOR, 10, 4);
             Hitchhiker plus = (Hitchhiker) ErasureCodec.create(CodecKind.HH_XOR_PLUS, 10, 4)) {
            assertThat(xor.groups()).isDeepEqualTo(new int[][] {{0, 1, 2}, {3, 4, 5}, {6, 7, 8, 9}});
            assertThat(plus.groups()).isDeepEqualTo(new int[][] {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}});
        }
    }
}
