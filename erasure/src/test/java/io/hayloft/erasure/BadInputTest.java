package io.hayloft.erasure;

import java.io.IOException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** Bad parameters and mismatched buffers fail fast with a message that names the problem. */
class BadInputTest {

    @Test
    void badDimensions() {
        assertThatThrownBy(() -> ErasureCodec.create(CodecKind.RS, 0, 4)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("k (data units) must be >= 1, was 0");
        assertThatThrownBy(() -> ErasureCodec.create(CodecKind.RS, 10, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("r (parity units) must be >= 1, was 0");
        assertThatThrownBy(() -> ErasureCodec.create(CodecKind.RS, 250, 7)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("k + r must be <= 256").hasMessageContaining("257");
        assertThatThrownBy(() -> ErasureCodec.create(CodecKind.HH_XOR, 10, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("needs r >= 2").hasMessageContaining("was 1");
        assertThatThrownBy(() -> ErasureCodec.create(CodecKind.HH_XOR_PLUS, 2, 4)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("k - 1 >= r - 1").hasMessageContaining("k=2, r=4");
        assertThatThrownBy(() -> ErasureCodec.create(null, 10, 4)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> CodecKind.fromWireName("lrc")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown codec 'lrc'").hasMessageContaining("hh-xor+");
    }

    @Test
    void mismatchedBuffers() {
        try (ErasureCodec rs = ErasureCodec.create(CodecKind.RS, 4, 2);
             ErasureCodec hh = ErasureCodec.create(CodecKind.HH_XOR_PLUS, 4, 2)) {
            assertThatThrownBy(() -> rs.encode(buffers(3, 8), buffers(2, 8))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("expected 4 data buffers, got 3");
            ByteBuffer[] data = buffers(4, 8);
            data[2] = ByteBuffer.allocate(9);
            assertThatThrownBy(() -> rs.encode(data, buffers(2, 8))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("data buffer 2 has 9 bytes remaining, expected 8");
            assertThatThrownBy(() -> rs.encode(buffers(4, 8), buffers(2, 7))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("parity buffer 0 has 7 bytes remaining, expected 8");
            assertThatThrownBy(() -> hh.encode(buffers(4, 7), buffers(2, 7))).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("multiple of 2").hasMessageContaining("was 7 bytes");
            assertThatThrownBy(() -> rs.decode(buffers(6, 8), 1, 1)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("listed twice");
            assertThatThrownBy(() -> rs.decode(buffers(6, 8), 6)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("6 is not a unit of rs(4,2): expected 0..5");
            assertThatThrownBy(() -> rs.readRange(100, 0, 95, ByteBuffer.allocate(10), new int[0], (u, o, d) -> { }))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("outside the unit of 100 bytes");
            assertThatThrownBy(() -> rs.repair(100, 0, new int[0], (u, o, d) -> { }, (u, o, s) -> { }))
                    .isInstanceOf(IOException.class).hasMessageContaining("reader returned 0 of 100 bytes of unit 1");
        }
    }

    @Test
    void closedCodecRefusesWork() {
        ErasureCodec rs = ErasureCodec.create(CodecKind.RS, 4, 2);
        rs.close();
        rs.close();
        assertThatThrownBy(() -> rs.encode(buffers(4, 8), buffers(2, 8))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
    }

    private static ByteBuffer[] buffers(int count, int size) {
        ByteBuffer[] b = new ByteBuffer[count];
        for (int i = 0; i < count; i++) {
            b[i] = ByteBuffer.allocate(size);
        }
        return b;
    }
}
