package io.hayloft.store.volume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.cold.NeedleFormat;
import io.hayloft.format.needle.Needle;
import io.hayloft.format.needle.Superblock;
import io.hayloft.format.wire.VolumeIndex;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The store and the cold tier agree on the bytes of a volume file: the needles a {@link Volume}
 * writes are parsed and checked by the cold path's code ({@link NeedleFormat}, as the encoder and a
 * cold read do), and a volume file assembled the way the cold tier does (a superblock, then needles
 * copied verbatim, as reclaim does) is opened and read by the store. Sizes 0, 1, across the 8-byte
 * alignment, and alternate keys over the full unsigned 32-bit range.
 */
class ColdPathAgreementTest {
    private static final int[] SIZES = {0, 1, 7, 8, 9, 4095, 4096, 65_537};
    private static final int[] ALTS = {0, 1, Integer.MAX_VALUE, Integer.MIN_VALUE, -1};

    @TempDir
    Path dir;

    private record Put(long key, int alt, long cookie, byte[] data) {
    }

    private static List<Put> puts() {
        List<Put> puts = new ArrayList<>();
        for (int i = 0; i < SIZES.length; i++) {
            byte[] data = new byte[SIZES[i]];
            for (int j = 0; j < data.length; j++) {
                data[j] = (byte) (i * 31 + j * 7);
            }
            long key = i % 2 == 0 ? i : -1L - i; // keys over the signed 64-bit range too
            puts.add(new Put(key, ALTS[i % ALTS.length], 0x5EED_0000L + i, data));
        }
        return puts;
    }

    @Test
    void theColdPathReadsTheNeedlesTheStoreWrites() throws Exception {
        List<Put> puts = puts();
        try (Volume v = Volume.create(dir, 7, VolumeTest.OPTS)) {
            for (Put p : puts) {
                v.write(p.key(), p.alt(), p.cookie(), ByteBuffer.wrap(p.data()));
            }
            v.seal();
        }
        ByteBuffer file = ByteBuffer.wrap(Files.readAllBytes(Volume.datPath(dir, 7)));
        Superblock sb = Superblock.decode(file.duplicate(), "volume 7");
        assertThat(sb.volumeId()).isEqualTo(7);
        assertThat(sb.readOnly()).isTrue();

        long at = Superblock.SIZE;
        for (Put p : puts) {
            VolumeIndex.Entry e = NeedleFormat.header(file.duplicate().position((int) at), at);
            assertThat(e.key()).isEqualTo(p.key());
            assertThat(e.alt()).isEqualTo(p.alt());
            assertThat(e.dataSize()).isEqualTo(p.data().length);
            assertThat(e.length()).isEqualTo(Needle.totalLength(p.data().length));
            ByteBuffer slot = file.duplicate().position((int) at).limit((int) at + e.length()).slice();
            NeedleFormat.check(slot.duplicate(), p.key(), p.alt());
            assertThat(NeedleFormat.data(slot.duplicate(), p.key(), p.alt(), p.cookie())).isEqualTo(p.data());
            assertThat(NeedleFormat.cookie(slot)).isEqualTo(p.cookie());
            assertThat(NeedleFormat.data(slot.duplicate(), p.key(), p.alt(), p.cookie() + 1)).as("a wrong cookie").isNull();
            at += e.length();
        }
        assertThat(at).isEqualTo(file.capacity());
    }

    @Test
    void theStoreReadsAVolumeAssembledTheWayTheColdTierCopiesIt() throws Exception {
        List<Put> puts = puts();
        int length = Superblock.SIZE;
        for (Put p : puts) {
            length += (int) Needle.totalLength(p.data().length);
        }
        ByteBuffer file = ByteBuffer.allocate(length);
        file.put(new Superblock(Superblock.VERSION, Superblock.FLAG_READ_ONLY, 9, 1_700_000_000_000L).encode());
        for (Put p : puts) {
            int start = file.position();
            Needle.encode(file, p.cookie(), p.key(), p.alt(), 0, ByteBuffer.wrap(p.data()));
            // what reclaim checks before it copies a needle
            NeedleFormat.check(file.duplicate().position(start).limit(file.position()), p.key(), p.alt());
        }
        Files.write(Volume.datPath(dir, 9), file.array()); // no .idx: the store scans the needles

        try (Volume v = Volume.open(dir, 9, VolumeTest.OPTS)) {
            assertThat(v.readOnly()).isTrue();
            assertThat(v.status().needles()).isEqualTo(puts.size());
            for (Put p : puts) {
                assertThat(VolumeTest.array(v.read(p.key(), p.alt(), p.cookie()))).isEqualTo(p.data());
            }
        }
    }

    @Test
    void bothSidesRefuseTheSameFlippedByte() throws Exception {
        Put p = puts().get(4);
        try (Volume v = Volume.create(dir, 3, VolumeTest.OPTS)) {
            v.write(p.key(), p.alt(), p.cookie(), ByteBuffer.wrap(p.data()));
            v.write(p.key() + 1, p.alt(), p.cookie(), ByteBuffer.wrap(p.data())); // the last needle, which reopening rechecks
        }
        Path dat = Volume.datPath(dir, 3);
        byte[] bytes = Files.readAllBytes(dat);
        bytes[Superblock.SIZE + Needle.HEADER_SIZE + 3] ^= 0x10;
        Files.write(dat, bytes);
        ByteBuffer slot = ByteBuffer.wrap(bytes, Superblock.SIZE, bytes.length - Superblock.SIZE).slice();

        assertThat(Needle.check(slot.duplicate())).isEqualTo(Needle.Check.BAD_CRC);
        assertThatThrownBy(() -> NeedleFormat.data(slot.duplicate(), p.key(), p.alt(), p.cookie()))
                .isInstanceOf(NeedleFormat.CorruptNeedleException.class).hasMessageContaining("fails its CRC32C");
        try (Volume v = Volume.open(dir, 3, VolumeTest.OPTS)) {
            assertThatThrownBy(() -> v.read(p.key(), p.alt(), p.cookie())).hasMessageContaining("BAD_CRC");
        }
    }
}
