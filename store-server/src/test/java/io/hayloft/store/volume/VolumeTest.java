package io.hayloft.store.volume;

import io.hayloft.format.needle.Needle;
import io.hayloft.format.needle.Superblock;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.store.StoreOperationException;
import io.hayloft.store.StoreOperationException.Reason;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class VolumeTest {
    static final Volume.Options OPTS = new Volume.Options(1 << 20, Volume.Fsync.ALWAYS);

    @TempDir
    Path dir;

    static ByteBuffer bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed * 31 + i * 7);
        }
        return ByteBuffer.wrap(b);
    }

    static byte[] array(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return a;
    }

    @Test
    void writesAndReadsBackEveryByte() throws Exception {
        try (Volume v = Volume.create(dir, 1, OPTS)) {
            for (int i = 0; i < 50; i++) {
                v.write(i, i % 4, 1000 + i, bytes(i * 37, i));
            }
            for (int i = 0; i < 50; i++) {
                assertThat(array(v.read(i, i % 4, 1000 + i))).isEqualTo(array(bytes(i * 37, i)));
            }
            assertThat(v.status().needles()).isEqualTo(50);
        }
        assertThat(Files.size(Volume.datPath(dir, 1)) % 8).isZero();
    }

    @Test
    void wrongCookieLooksExactlyLikeAMissingNeedle() throws Exception {
        try (Volume v = Volume.create(dir, 1, OPTS)) {
            v.write(5, 0, 77, bytes(10, 1));
            StoreOperationException wrong = catchStore(() -> v.read(5, 0, 78));
            StoreOperationException missing = catchStore(() -> v.read(6, 0, 77));
            assertThat(wrong.reason()).isEqualTo(Reason.NEEDLE_NOT_FOUND);
            assertThat(wrong.getMessage()).isEqualTo(missing.getMessage().replace("6/", "5/"));
            assertThat(catchStore(() -> v.delete(5, 0, 78)).reason()).isEqualTo(Reason.NEEDLE_NOT_FOUND);
            assertThat(array(v.read(5, 0, 77))).isEqualTo(array(bytes(10, 1)));
        }
    }

    @Test
    void deleteSetsTheFlagOnDiskAndHidesTheNeedle() throws Exception {
        long off;
        try (Volume v = Volume.create(dir, 1, OPTS)) {
            v.write(5, 0, 77, bytes(10, 1));
            v.delete(5, 0, 77);
            assertThat(catchStore(() -> v.read(5, 0, 77)).reason()).isEqualTo(Reason.NEEDLE_NOT_FOUND);
            assertThat(catchStore(() -> v.delete(5, 0, 77)).reason()).isEqualTo(Reason.NEEDLE_NOT_FOUND);
            off = Superblock.SIZE;
        }
        byte[] file = Files.readAllBytes(Volume.datPath(dir, 1));
        assertThat(file[(int) off + Needle.OFF_FLAGS] & Needle.FLAG_DELETED).isEqualTo(Needle.FLAG_DELETED);
    }

    @Test
    void overwriteByAppendingTheHighestOffsetWins() throws Exception {
        try (Volume v = Volume.create(dir, 1, OPTS)) {
            v.write(5, 0, 1, bytes(10, 1));
            v.write(5, 0, 2, bytes(20, 2));
            assertThat(array(v.read(5, 0, 2))).isEqualTo(array(bytes(20, 2)));
            assertThat(catchStore(() -> v.read(5, 0, 1)).reason()).isEqualTo(Reason.NEEDLE_NOT_FOUND);
        }
        try (Volume v = Volume.open(dir, 1, OPTS)) {
            assertThat(array(v.read(5, 0, 2))).isEqualTo(array(bytes(20, 2)));
        }
    }

    @Test
    void batchIsOneAppendAndEveryNeedleIsReadable() throws Exception {
        try (Volume v = Volume.create(dir, 1, OPTS)) {
            List<Volume.NeedleWrite> batch = new ArrayList<>();
            for (int alt = 0; alt < 4; alt++) {
                batch.add(new Volume.NeedleWrite(9, alt, 55, bytes(100 * (alt + 1), alt)));
            }
            v.write(batch);
            for (int alt = 0; alt < 4; alt++) {
                assertThat(array(v.read(9, alt, 55))).isEqualTo(array(bytes(100 * (alt + 1), alt)));
            }
        }
    }

    @Test
    void emptyNeedleIsValid() throws Exception {
        try (Volume v = Volume.create(dir, 1, OPTS)) {
            v.write(1, 0, 1, ByteBuffer.allocate(0));
            assertThat(v.read(1, 0, 1).remaining()).isZero();
        }
    }

    @Test
    void becomesReadOnlyAtTheSizeLimitAndStaysSoAfterRestart() throws Exception {
        Volume.Options small = new Volume.Options(4096, Volume.Fsync.ALWAYS);
        try (Volume v = Volume.create(dir, 1, small)) {
            v.write(1, 0, 1, bytes(2000, 1));
            StoreOperationException e = catchStore(() -> v.write(2, 0, 1, bytes(3000, 1)));
            assertThat(e.reason()).isEqualTo(Reason.VOLUME_READ_ONLY);
            assertThat(e.getMessage()).contains("full");
            assertThat(v.readOnly()).isTrue();
            assertThat(array(v.read(1, 0, 1))).isEqualTo(array(bytes(2000, 1)));
        }
        try (Volume v = Volume.open(dir, 1, small)) {
            assertThat(v.readOnly()).isTrue();
            assertThat(catchStore(() -> v.write(3, 0, 1, bytes(1, 1))).reason()).isEqualTo(Reason.VOLUME_READ_ONLY);
        }
    }

    @Test
    void aWriteNoVolumeCouldHoldIsRefusedAndLeavesTheVolumeWritable() throws Exception {
        Volume.Options small = new Volume.Options(4096, Volume.Fsync.ALWAYS);
        try (Volume v = Volume.create(dir, 1, small)) {
            StoreOperationException e = catchStore(() -> v.write(1, 0, 1, bytes(4096, 1)));
            assertThat(e.reason()).isEqualTo(Reason.NEEDLE_TOO_LARGE);
            assertThat(e.getMessage()).contains("can never fit volume 1").contains("4096");
            assertThat(v.readOnly()).isFalse();
            v.write(2, 0, 1, bytes(2000, 1)); // the largest that fits an empty volume still goes in
            assertThat(catchStore(() -> v.write(List.of(new Volume.NeedleWrite(3, 0, 1, bytes(2100, 1)),
                    new Volume.NeedleWrite(4, 0, 1, bytes(2100, 1))))).reason()).isEqualTo(Reason.NEEDLE_TOO_LARGE);
            assertThat(v.readOnly()).isFalse();
            assertThat(array(v.read(2, 0, 1))).isEqualTo(array(bytes(2000, 1)));
        }
    }

    @Test
    void sealOnRequestRefusesWritesButAllowsReadsAndDeletes() throws Exception {
        try (Volume v = Volume.create(dir, 1, OPTS)) {
            v.write(1, 0, 1, bytes(10, 1));
            v.seal();
            assertThat(catchStore(() -> v.write(2, 0, 1, bytes(10, 1))).getMessage()).contains("read-only");
            assertThat(v.read(1, 0, 1).remaining()).isEqualTo(10);
            v.delete(1, 0, 1);
        }
    }

    @Test
    void refusesAnUnknownFormatVersionClearly() throws Exception {
        Volume.create(dir, 1, OPTS).close();
        try (FileChannel ch = FileChannel.open(Volume.datPath(dir, 1), StandardOpenOption.WRITE)) {
            ByteBuffer sb = new Superblock(7, 0, 1, 0).encode();
            ch.write(sb, 0);
        }
        assertThatThrownBy(() -> Volume.open(dir, 1, OPTS)).isInstanceOf(StoreOperationException.class)
                .hasMessageContaining("format version 7 is not supported");
    }

    @Test
    void refusesAFileThatIsNotAVolume() throws Exception {
        Files.write(Volume.datPath(dir, 3), new byte[64]);
        assertThatThrownBy(() -> Volume.open(dir, 3, OPTS)).hasMessageContaining("not a Hayloft volume");
    }

    @Test
    void corruptDataIsReportedAsCorruptionNotAsMissing() throws Exception {
        try (Volume v = Volume.create(dir, 1, OPTS)) {
            v.write(1, 0, 1, bytes(100, 1));
            v.write(2, 0, 1, bytes(100, 2));
        }
        flipByte(Volume.datPath(dir, 1), Superblock.SIZE + Needle.HEADER_SIZE + 50);
        // reopening does not recheck needles the .idx knows (only the last); the read finds the damage
        try (Volume v = Volume.open(dir, 1, OPTS)) {
            StoreOperationException e = catchStore(() -> v.read(1, 0, 1));
            assertThat(e.reason()).isEqualTo(Reason.NEEDLE_CORRUPT);
            assertThat(e.getMessage()).contains("BAD_CRC");
            assertThat(array(v.read(2, 0, 1))).isEqualTo(array(bytes(100, 2)));
        }
    }

    @Test
    void refusesNeedlesLargerThanTheFormatAllows() throws Exception {
        try (Volume v = Volume.create(dir, 1, OPTS)) {
            assertThatThrownBy(() -> Volume.checkDataSize(Needle.MAX_DATA_SIZE + 1L)).hasMessageContaining("outside");
            assertThat(catchStore(() -> v.write(1, 0, 1, ByteBuffer.allocate(Needle.MAX_DATA_SIZE + 1))).reason())
                    .isEqualTo(Reason.NEEDLE_TOO_LARGE);
        }
    }

    static void flipByte(Path file, long at) throws Exception {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            ch.read(one, at);
            one.flip();
            byte x = one.get(0);
            ch.write(ByteBuffer.wrap(new byte[] {(byte) (x ^ 0x5A)}), at);
        }
    }

    interface Op {
        void run() throws Exception;
    }

    static StoreOperationException catchStore(Op op) {
        try {
            op.run();
        } catch (StoreOperationException e) {
            return e;
        } catch (Exception e) {
            throw new AssertionError("expected a StoreOperationException, got " + e, e);
        }
        throw new AssertionError("expected a StoreOperationException, got none");
    }
}
