package io.hayloft.store.volume;

import io.hayloft.format.needle.Needle;
import io.hayloft.format.needle.Superblock;
import io.hayloft.store.StoreOperationException;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RecoveryTest {
    static final Volume.Options OPTS = VolumeTest.OPTS;

    @TempDir
    Path dir;

    final VolumeModel model = new VolumeModel();

    private Volume fill(int from, int to) throws Exception {
        Volume v = Volume.exists(dir, 1) ? Volume.open(dir, 1, OPTS) : Volume.create(dir, 1, OPTS);
        for (int i = from; i < to; i++) {
            model.write(v, i, i % 3, 0xC00C1E + i, 10 + i * 13 % 500, i);
        }
        return v;
    }

    private static void append(Path file, byte[] bytes) throws Exception {
        Files.write(file, bytes, StandardOpenOption.APPEND);
    }

    private long idxRecords() throws Exception {
        return (Files.size(Volume.idxPath(dir, 1)) - IdxFile.HEADER_SIZE) / IdxFile.RECORD_SIZE;
    }

    @Test
    void orphansPastTheCheckpointAreIndexedAndAppendedToIt() throws Exception {
        Volume v = fill(0, 10);
        v.flushIndex();
        for (int i = 10; i < 30; i++) {
            model.write(v, i, 0, i, 100, i);
        }
        v.abandon(); // the last 20 records never reach the .idx
        assertThat(idxRecords()).isEqualTo(10);
        try (Volume r = Volume.open(dir, 1, OPTS)) {
            model.verify(r);
            assertThat(r.status().needles()).isEqualTo(30);
        }
        assertThat(idxRecords()).isEqualTo(30);
    }

    @Test
    void aLostIdxIsRebuiltByScanningTheVolume() throws Exception {
        fill(0, 25).close();
        Files.delete(Volume.idxPath(dir, 1));
        try (Volume r = Volume.open(dir, 1, OPTS)) {
            model.verify(r);
        }
        assertThat(idxRecords()).isEqualTo(25);
    }

    @Test
    void aStaleIdxIsCaughtUpFromTheVolumeTail() throws Exception {
        fill(0, 10).close();
        Path saved = dir.resolve("saved.idx");
        Files.copy(Volume.idxPath(dir, 1), saved);
        fill(10, 20).close();
        Files.copy(saved, Volume.idxPath(dir, 1), StandardCopyOption.REPLACE_EXISTING);
        try (Volume r = Volume.open(dir, 1, OPTS)) {
            model.verify(r);
        }
    }

    @Test
    void deletesMissingFromTheIdxAreLearnedFromTheFlagOnDisk() throws Exception {
        Volume v = fill(0, 10);
        v.flushIndex();
        model.delete(v, 3, 0);
        model.delete(v, 4, 1);
        v.abandon(); // delete records lost; the flags are on disk
        try (Volume r = Volume.open(dir, 1, OPTS)) {
            model.verify(r);
            assertThat(r.status().deleted()).isEqualTo(2); // learned on read
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"half-header", "half-needle", "garbage", "bad-crc", "zeros"})
    void aTornOrPreallocatedTailIsTruncated(String kind) throws Exception {
        fill(0, 12).close();
        long goodSize = Files.size(Volume.datPath(dir, 1));
        ByteBuffer n = ByteBuffer.allocate((int) Needle.totalLength(300));
        Needle.encode(n, 1, 999, 0, 0, VolumeTest.bytes(300, 9));
        byte[] needle = n.array();
        byte[] tail = switch (kind) {
            case "half-header" -> Arrays.copyOf(needle, 20);
            case "half-needle" -> Arrays.copyOf(needle, 200);
            case "garbage" -> new Random(1).ints(500, 0, 256).collect(ByteArrayOutputStream::new,
                    (o, b) -> o.write(b), (a, b) -> { }).toByteArray();
            case "bad-crc" -> {
                byte[] c = needle.clone();
                c[Needle.HEADER_SIZE + 5] ^= 1;
                yield c;
            }
            default -> new byte[1 << 20];
        };
        append(Volume.datPath(dir, 1), tail);
        try (Volume r = Volume.open(dir, 1, OPTS)) {
            model.verify(r);
            assertThat(r.status().sizeBytes()).isEqualTo(goodSize);
            model.write(r, 5000, 0, 5, 64, 5); // appends after the truncation point
        }
        assertThat(Files.size(Volume.datPath(dir, 1))).isEqualTo(goodSize + Needle.totalLength(64));
        try (Volume r = Volume.open(dir, 1, OPTS)) {
            model.verify(r);
        }
    }

    @Test
    void aTornIdxTailIsTruncatedNotTrusted() throws Exception {
        fill(0, 10).close();
        append(Volume.idxPath(dir, 1), new byte[IdxFile.RECORD_SIZE * 100]); // pre-allocated zeros
        append(Volume.idxPath(dir, 1), new byte[] {1, 2, 3, 4, 5});
        try (Volume r = Volume.open(dir, 1, OPTS)) {
            model.verify(r);
        }
        assertThat(Files.size(Volume.idxPath(dir, 1))).isEqualTo(IdxFile.HEADER_SIZE + 10L * IdxFile.RECORD_SIZE);
    }

    @Test
    void anIdxThatNamesNeedlesTheVolumeLostIsNotBelieved() throws Exception {
        fill(0, 10).close();
        long size = Files.size(Volume.datPath(dir, 1));
        fill(10, 12).close();
        // the last two needles vanish (written with fsync off, then power lost) but their records stayed
        try (FileChannel ch = FileChannel.open(Volume.datPath(dir, 1), StandardOpenOption.WRITE)) {
            ch.truncate(size);
        }
        model.entries.remove(VolumeModel.k(10, 1));
        model.entries.remove(VolumeModel.k(11, 2));
        try (Volume r = Volume.open(dir, 1, OPTS)) {
            model.verify(r);
            assertThat(VolumeTest.catchStore(() -> r.read(10, 1, 0xC00C1E + 10)).reason())
                    .isEqualTo(StoreOperationException.Reason.NEEDLE_NOT_FOUND);
        }
    }

    @Test
    void aBadLastNeedleNamedByTheIdxTriggersAFullRescan() throws Exception {
        fill(0, 10).close();
        long size = Files.size(Volume.datPath(dir, 1));
        // zero the data of the last needle but keep the file length (a torn page write)
        int lastLen = (int) Needle.totalLength(10 + 9 * 13 % 500);
        try (FileChannel ch = FileChannel.open(Volume.datPath(dir, 1), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(lastLen), size - lastLen);
        }
        model.entries.remove(VolumeModel.k(9, 0));
        try (Volume r = Volume.open(dir, 1, OPTS)) {
            model.verify(r);
            assertThat(r.status().sizeBytes()).isEqualTo(size - lastLen);
        }
    }

    @Test
    void garbageAtARandomOffsetOfTheUncheckpointedTailLosesOnlyWhatFollowsIt() throws Exception {
        for (int seed = 0; seed < 8; seed++) {
            Path d = Files.createDirectory(dir.resolve("s" + seed));
            Random rnd = new Random(seed);
            VolumeModel m = new VolumeModel();
            long[] ends = new long[40];
            Volume v = Volume.create(d, 1, OPTS);
            for (int i = 0; i < 40; i++) {
                if (i == 20) {
                    v.flushIndex();
                }
                m.write(v, i, 0, i, 8 * (1 + rnd.nextInt(50)), i); // no padding: every byte is checked
                ends[i] = v.status().sizeBytes();
            }
            v.abandon();
            long at = ends[19] + rnd.nextInt((int) (ends[39] - ends[19]));
            try (FileChannel ch = FileChannel.open(Volume.datPath(d, 1), StandardOpenOption.WRITE)) {
                byte[] junk = new byte[8];
                rnd.nextBytes(junk);
                ch.write(ByteBuffer.wrap(junk), at);
            }
            int firstHit = 0;
            while (ends[firstHit] <= at) {
                firstHit++;
            }
            for (int i = firstHit; i < 40; i++) {
                m.entries.remove(VolumeModel.k(i, 0));
            }
            try (Volume r = Volume.open(d, 1, OPTS)) {
                m.verify(r);
                assertThat(r.status().sizeBytes()).as("seed %d", seed).isEqualTo(firstHit == 0 ? Superblock.SIZE : ends[firstHit - 1]);
            }
        }
    }
}
