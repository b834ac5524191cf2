package io.hayloft.cold;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.format.wire.VolumeIndex;
import io.hayloft.format.needle.Needle;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/** The needle the store writes is the needle the cold tier reads, and the other way round. */
class NeedleFormatTest {

    private static final long COOKIE = 0x0123456789ABCDEFL;
    private static final byte[] DATA = "a photo of some hay".getBytes(StandardCharsets.UTF_8);

    @Test
    void readsWhatTheStoreWrites() throws Exception {
        ByteBuffer n = ByteBuffer.allocate((int) Needle.totalLength(DATA.length));
        Needle.encode(n, COOKIE, -5L, 7, 0, ByteBuffer.wrap(DATA));
        n.flip();

        assertThat(NeedleFormat.data(n.duplicate(), -5L, 7, COOKIE)).isEqualTo(DATA);
        NeedleFormat.check(n.duplicate(), -5L, 7);
        VolumeIndex.Entry e = NeedleFormat.header(n.duplicate(), 4096);
        assertThat(e.key()).isEqualTo(-5L);
        assertThat(e.alt()).isEqualTo(7);
        assertThat(e.offset()).isEqualTo(4096);
        assertThat(e.dataSize()).isEqualTo(DATA.length);
        assertThat(e.length()).isEqualTo(n.remaining()).isEqualTo(VolumeIndex.needleLength(DATA.length));
        // A wrong cookie reads as missing, a flipped data byte as corrupt.
        assertThat(NeedleFormat.data(n.duplicate(), -5L, 7, COOKIE + 1)).isNull();
        n.put(Needle.HEADER_SIZE, (byte) 'A');
        assertThatThrownBy(() -> NeedleFormat.data(n.duplicate(), -5L, 7, COOKIE))
                .isInstanceOf(NeedleFormat.CorruptNeedleException.class);
    }

    @Test
    void theStoreChecksANeedleBuiltFromTheDocumentedTable() throws Exception {
        ByteBuffer n = ByteBuffer.allocate(64); // 32 + 19 + 8, padded to 8
        n.putInt(0x4E45444C).putLong(COOKIE).putLong(99).putInt(3).put((byte) 0).put(new byte[3]).putInt(DATA.length);
        n.put(DATA);
        CRC32C crc = new CRC32C();
        crc.update(n.array(), 4, 20);
        crc.update(n.array(), 28, 4);
        crc.update(DATA);
        n.putInt(0x4C44454E).putInt((int) crc.getValue());
        n.position(0).limit(VolumeIndex.needleLength(DATA.length));

        assertThat(Needle.check(n.duplicate())).isEqualTo(Needle.Check.OK);
        assertThat(Needle.key(n)).isEqualTo(99);
        assertThat(Needle.alt(n)).isEqualTo(3);
        assertThat(Needle.cookie(n)).isEqualTo(COOKIE);
        assertThat(NeedleFormat.data(n.duplicate(), 99, 3, COOKIE)).isEqualTo(DATA);
        ByteBuffer written = ByteBuffer.allocate(n.remaining());
        Needle.encode(written, COOKIE, 99, 3, 0, ByteBuffer.wrap(DATA));
        assertThat(written.flip()).isEqualTo(n);
    }
}
