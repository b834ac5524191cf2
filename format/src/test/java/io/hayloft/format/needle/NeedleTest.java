package io.hayloft.format.needle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class NeedleTest {

    @Test
    void needleLayoutMatchesTheDocumentedTable() {
        ByteBuffer b = ByteBuffer.allocate((int) Needle.totalLength(3));
        Needle.encode(b, 0x1122334455667788L, 42, 7, 0, ByteBuffer.wrap(new byte[] {1, 2, 3}));
        b.flip();
        assertThat(b.remaining()).isEqualTo(48);
        ByteBuffer be = b.duplicate().order(ByteOrder.BIG_ENDIAN);
        assertThat(be.getInt(0)).isEqualTo(0x4E45444C);
        assertThat(be.getLong(4)).isEqualTo(0x1122334455667788L);
        assertThat(be.getLong(12)).isEqualTo(42);
        assertThat(be.getInt(20)).isEqualTo(7);
        assertThat(be.getInt(28)).isEqualTo(3);
        assertThat(be.get(32)).isEqualTo((byte) 1);
        assertThat(be.getInt(35)).isEqualTo(0x4C44454E);
        assertThat(Needle.check(b)).isEqualTo(Needle.Check.OK);
    }

    @Test
    void crcCoversCookieKeyAltAndSizeThenTheDataButNotTheFlags() {
        ByteBuffer b = ByteBuffer.allocate((int) Needle.totalLength(3));
        Needle.encode(b, 0x1122334455667788L, 42, 7, 0, ByteBuffer.wrap(new byte[] {1, 2, 3}));
        CRC32C expected = new CRC32C();
        expected.update(b.array(), 4, 20);
        expected.update(b.array(), 28, 4);
        expected.update(b.array(), 32, 3);
        assertThat(b.getInt(39)).isEqualTo((int) expected.getValue());
        b.put(Needle.OFF_FLAGS, (byte) Needle.FLAG_DELETED).position(0);
        assertThat(Needle.check(b)).isEqualTo(Needle.Check.OK);
        b.put(Needle.OFF_KEY + 7, (byte) 43);
        assertThat(Needle.check(b)).isEqualTo(Needle.Check.BAD_CRC);
    }

    @Test
    void refusesDataLargerThanTheFormatAllows() {
        assertThatThrownBy(() -> Needle.encode(ByteBuffer.allocate(64), 1, 2, 3, 0, ByteBuffer.allocate(Needle.MAX_DATA_SIZE + 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("outside");
    }
}
