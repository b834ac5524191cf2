package io.hayloft.format.needle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/** The superblock's bytes are the documented table, and decoding refuses what is not one. */
class SuperblockTest {

    @Test
    void encodesTheDocumentedTableAndDecodesItBack() {
        Superblock sb = new Superblock(Superblock.VERSION, Superblock.FLAG_READ_ONLY, Long.MAX_VALUE, 1_700_000_000_123L);
        ByteBuffer expected = ByteBuffer.allocate(32);
        expected.putInt(0x484C5653).putShort((short) 1).putShort((short) 1).putLong(Long.MAX_VALUE).putLong(1_700_000_000_123L);
        CRC32C crc = new CRC32C();
        crc.update(expected.array(), 0, 24);
        expected.putInt((int) crc.getValue()).putInt(0).flip();

        assertThat(Superblock.SIZE).isEqualTo(32);
        assertThat(sb.encode()).isEqualTo(expected);
        assertThat(Superblock.decode(expected.duplicate(), "x")).isEqualTo(sb);
        assertThat(Superblock.decode(expected.duplicate(), "x").readOnly()).isTrue();
        assertThat(sb.withFlags(0).readOnly()).isFalse();
    }

    @Test
    void refusesAShortFileAnotherMagicAnotherVersionAndABadCrc() {
        ByteBuffer good = new Superblock(Superblock.VERSION, 0, 1, 0).encode();
        assertThatThrownBy(() -> Superblock.decode(good.duplicate().limit(31), "f")).isInstanceOf(Superblock.InvalidSuperblockException.class)
                .hasMessageContaining("shorter than the 32-byte superblock")
                .matches(e -> !((Superblock.InvalidSuperblockException) e).unsupportedVersion());
        ByteBuffer magic = new Superblock(Superblock.VERSION, 0, 1, 0).encode().putInt(0, 0);
        assertThatThrownBy(() -> Superblock.decode(magic, "f")).hasMessageContaining("not a Hayloft volume");
        ByteBuffer version = new Superblock(2, 0, 1, 0).encode();
        assertThatThrownBy(() -> Superblock.decode(version, "f")).hasMessageContaining("version 2 is not supported")
                .matches(e -> ((Superblock.InvalidSuperblockException) e).unsupportedVersion());
        ByteBuffer crc = new Superblock(Superblock.VERSION, 0, 1, 0).encode().put(9, (byte) 1); // volume id changed, CRC not
        assertThatThrownBy(() -> Superblock.decode(crc, "f")).hasMessageContaining("CRC mismatch")
                .matches(e -> !((Superblock.InvalidSuperblockException) e).unsupportedVersion());
    }

    @Test
    void aSealTornInItsCrcDecodesAsSealedAndNothingElseDoes() {
        Superblock open = new Superblock(Superblock.VERSION, 0, 5, 42);
        ByteBuffer unsealed = open.encode();
        ByteBuffer sealed = open.withFlags(Superblock.FLAG_READ_ONLY).encode();
        for (int k = 0; k <= 4; k++) {
            // the flags written, then k of the CRC's 4 bytes
            ByteBuffer torn = ByteBuffer.allocate(Superblock.SIZE).put(unsealed.duplicate()).flip();
            torn.putShort(6, (short) Superblock.FLAG_READ_ONLY);
            for (int i = 0; i < k; i++) {
                torn.put(24 + i, sealed.get(24 + i));
            }
            assertThat(Superblock.decodeAllowingTornSeal(torn, "f").readOnly()).as("%d CRC bytes written", k).isTrue();
        }
        byte v = 0; // a CRC byte that neither the sealed nor the unsealed superblock has
        while (v == sealed.get(25) || v == unsealed.get(25)) {
            v++;
        }
        ByteBuffer other = open.withFlags(Superblock.FLAG_READ_ONLY).encode().put(25, v);
        assertThatThrownBy(() -> Superblock.decodeAllowingTornSeal(other, "f")).hasMessageContaining("CRC mismatch");
    }
}
