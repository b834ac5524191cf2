package io.hayloft.format.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.List;
import org.junit.jupiter.api.Test;

class BatchBodyTest {
    @Test
    void encodesTheDocumentedByteTable() {
        byte[] body = BatchBody.encode(List.of(new Needle(0x0102030405060708L, 7, 0xA1A2A3A4A5A6A7A8L, new byte[] {9, 8, 7}),
                new Needle(5, -1, 6, new byte[0])));
        assertThat(body).hasSize(24 + 3 + 24);
        assertThat(BatchBody.size(List.of(new Needle(1, 0, 0, new byte[5])))).isEqualTo(29);
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

    @Test
    void parsesWhatItEncodes() {
        byte[] body = BatchBody.encode(List.of(new Needle(1, 2, 3, new byte[] {4, 5}), new Needle(-7, -1, 9, new byte[0])));
        List<Needle> back = BatchBody.parse(ByteBuffer.wrap(body), 1 << 20, (key, cookie, alt, data) -> new Needle(key, alt, cookie, data));
        assertThat(back).hasSize(2);
        assertThat(back.get(0).key()).isEqualTo(1);
        assertThat(back.get(0).alt()).isEqualTo(2);
        assertThat(back.get(0).cookie()).isEqualTo(3);
        assertThat(back.get(0).data()).containsExactly(4, 5);
        assertThat(back.get(1).key()).isEqualTo(-7);
        assertThat(back.get(1).alt()).isEqualTo(-1);
        assertThat(back.get(1).data()).isEmpty();
    }

    @Test
    void refusesTruncatedOversizedAndEmptyBodies() {
        BatchBody.Maker<Needle> make = (key, cookie, alt, data) -> new Needle(key, alt, cookie, data);
        byte[] body = BatchBody.encode(List.of(new Needle(1, 2, 3, new byte[] {4, 5})));
        assertThatThrownBy(() -> BatchBody.parse(ByteBuffer.wrap(body, 0, 20), 1 << 20, make))
                .isInstanceOf(BatchBody.MalformedBatchException.class).hasMessageContaining("record 0 at byte 0 is truncated");
        assertThatThrownBy(() -> BatchBody.parse(ByteBuffer.wrap(body, 0, 25), 1 << 20, make))
                .hasMessageContaining("declares 2 data bytes but 1 remain");
        assertThatThrownBy(() -> BatchBody.parse(ByteBuffer.wrap(body), 1, make)).hasMessageContaining("declares 2 data bytes");
        assertThatThrownBy(() -> BatchBody.parse(ByteBuffer.allocate(0), 1, make)).hasMessage("batch body is empty");
    }

    private record Needle(long key, int alt, long cookie, byte[] data) implements BatchBody.Record {
    }
}
