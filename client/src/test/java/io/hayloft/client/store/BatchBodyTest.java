package io.hayloft.client.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

class BatchBodyTest {
    @Test
    void encodesTheDocumentedByteTable() {
        byte[] body = BatchBody.encode(List.of(new NeedleData(0x0102030405060708L, 7, 0xA1A2A3A4A5A6A7A8L, new byte[] {9, 8, 7}),
                new NeedleData(5, -1, 6, new byte[0])));
        assertThat(body).hasSize(24 + 3 + 24);
        assertThat(BatchBody.size(List.of(new NeedleData(1, 0, 0, new byte[5])))).isEqualTo(29);
        ByteBuffer b = ByteBuffer.wrap(body);
        assertThat(b.getLong()).isEqualTo(0x0102030405060708L);
        assertThat(b.getLong()).isEqualTo(0xA1A2A3A4A5A6A7A8L);
        assertThat(b.getInt()).isEqualTo(7);
        assertThat(b.getInt()).isEqualTo(3);
        assertThat(new byte[] {b.get(), b.get(), b.get()}).containsExactly(9, 8, 7);
        assertThat(b.getLong()).isEqualTo(5);
        assertThat(b.getLong()).isEqualTo(6);
        assertThat(b.getInt()).isEqualTo(-1);
        assertThat(b.getInt()).isZero();
        assertThat(b.hasRemaining()).isFalse();
    }
}
