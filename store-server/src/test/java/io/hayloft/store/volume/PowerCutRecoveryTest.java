package io.hayloft.store.volume;

import io.hayloft.format.io.PositionalIo;
import io.hayloft.format.needle.Needle;
import io.hayloft.store.StoreOperationException;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.serverkit.io.SimulatedDisk;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.junit.jupiter.api.Test;

/**
 * Recovery of what a power cut leaves at the end of the files, on a {@link SimulatedDisk}: a torn
 * needle, a zero-filled tail, a torn {@code .idx} record, and whatever the disk itself tears.
 */
class PowerCutRecoveryTest {
    static final Volume.Options OPTS = IdxDurabilityTest.OPTS;
    static final Path DIR = IdxDurabilityTest.DIR;

    private final VolumeModel model = new VolumeModel();

    private SimulatedDisk filled(long seed) throws Exception {
        SimulatedDisk d = new SimulatedDisk(seed);
        d.createDirectories(DIR);
        try (Volume v = Volume.create(d, DIR, 1, OPTS)) {
            for (int i = 0; i < 20; i++) {
                model.write(v, i, i % 2, 0xC0FFEE + i, i * 97 % 3000, i);
            }
            model.delete(v, 3, 1);
        }
        return d;
    }

    /** Appends {@code bytes} to a file and forces it (what the disk kept of an unfinished write). */
    private static void appendDurably(SimulatedDisk d, Path file, byte[] bytes) throws IOException {
        try (FileChannel ch = d.open(file, StandardOpenOption.WRITE)) {
            PositionalIo.writeFully(ch, ByteBuffer.wrap(bytes), ch.size());
            ch.force(true);
        }
    }

    private void assertRecovered(SimulatedDisk d, long expectedDatSize) throws Exception {
        try (Volume v = Volume.open(d, DIR, 1, OPTS)) {
            model.verify(v);
            assertThat(d.size(Volume.datPath(DIR, 1))).isEqualTo(expectedDatSize);
            model.write(v, 1000, 0, 5, 123, 1000);
            model.verify(v);
        }
        try (Volume v = Volume.open(d, DIR, 1, OPTS)) {
            model.verify(v);
        }
    }

    @Test
    void aTornNeedleAtTheTailIsTruncated() throws Exception {
        SimulatedDisk d = filled(1);
        long size = d.size(Volume.datPath(DIR, 1));
        ByteBuffer needle = ByteBuffer.allocate((int) Needle.totalLength(500));
        Needle.encode(needle, 1, 77, 0, 0, VolumeTest.bytes(500, 77));
        needle.flip();
        byte[] torn = new byte[needle.remaining() - 9];
        needle.get(torn);
        appendDurably(d, Volume.datPath(DIR, 1), torn);
        assertRecovered(d, size);
    }

    @Test
    void aZeroFilledTailIsTruncated() throws Exception {
        SimulatedDisk d = filled(2);
        long size = d.size(Volume.datPath(DIR, 1));
        appendDurably(d, Volume.datPath(DIR, 1), new byte[8192]);
        assertRecovered(d, size);
    }

    @Test
    void aTornIdxRecordIsDroppedAndTheNeedleReindexed() throws Exception {
        SimulatedDisk d = filled(3);
        long size = d.size(Volume.datPath(DIR, 1));
        long idxSize = d.size(Volume.idxPath(DIR, 1));
        try (FileChannel ch = d.open(Volume.idxPath(DIR, 1), StandardOpenOption.WRITE)) {
            ch.truncate(idxSize - IdxFile.RECORD_SIZE / 2); // the last record torn in half
            ch.force(true);
        }
        assertRecovered(d, size);
        assertThat(d.size(Volume.idxPath(DIR, 1)) % IdxFile.RECORD_SIZE).isEqualTo(IdxFile.HEADER_SIZE % IdxFile.RECORD_SIZE);
    }

    /** fsync=never, then a power cut: the disk drops, tears and zero-fills the unsynced tail. */
    @Test
    void whateverTheDiskTearsRecoveryTruncatesAndTheVolumeTakesWrites() throws Exception {
        Volume.Options never = new Volume.Options(64L << 20, Volume.Fsync.NEVER);
        long torn = 0;
        for (long seed = 0; seed < 60; seed++) {
            SimulatedDisk d = new SimulatedDisk(seed);
            d.createDirectories(DIR);
            Volume.create(d, DIR, 1, OPTS).close();
            Volume v = Volume.open(d, DIR, 1, never);
            for (int i = 0; i < 10; i++) {
                v.write(i, 0, 9, VolumeTest.bytes(200 + i * 300, i));
                if (i == 4) {
                    v.flushIndex();
                }
            }
            d.powerCut();
            v.abandon();
            try (Volume r = Volume.open(d, DIR, 1, OPTS)) {
                int present = 0;
                for (int i = 0; i < 10; i++) {
                    try {
                        assertThat(VolumeTest.array(r.read(i, 0, 9))).as("seed %d needle %d", seed, i)
                                .isEqualTo(VolumeTest.array(VolumeTest.bytes(200 + i * 300, i)));
                        assertThat(present).as("seed %d: needles survive as a prefix", seed).isEqualTo(i);
                        present++;
                    } catch (StoreOperationException e) {
                        assertThat(e.reason()).as("seed %d needle %d", seed, i)
                                .isEqualTo(StoreOperationException.Reason.NEEDLE_NOT_FOUND);
                    }
                }
                r.write(100, 0, 9, VolumeTest.bytes(10, 100));
                assertThat(VolumeTest.array(r.read(100, 0, 9))).isEqualTo(VolumeTest.array(VolumeTest.bytes(10, 100)));
            }
            torn += d.tornWrites();
        }
        assertThat(torn).as("some cut tore a write").isPositive();
    }
}
