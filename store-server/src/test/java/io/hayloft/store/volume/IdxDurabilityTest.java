package io.hayloft.store.volume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.serverkit.io.SimulatedDisk;
import io.hayloft.store.StoreOperationException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * An {@code .idx} record never becomes durable before the needle it names. Each test orders the
 * events with a {@link SimulatedDisk#beforeForce} hook (no threads, no sleeps) and cuts the power
 * at the worst moment, over many seeds (each seed drops or tears the unsynced writes differently).
 */
class IdxDurabilityTest {
    static final Volume.Options OPTS = new Volume.Options(64L << 20, Volume.Fsync.ALWAYS);
    static final Path DIR = Path.of("/sim/store");
    static final int SEEDS = 40;

    static SimulatedDisk disk(long seed) throws IOException {
        SimulatedDisk d = new SimulatedDisk(seed);
        d.createDirectories(DIR);
        return d;
    }

    /** A step run from a force hook; an {@link IOException} leaves the hook as an {@link UncheckedIOException}. */
    interface IoStep {
        void run() throws IOException;
    }

    /** Runs {@code step} once, just before the first force of volume 1's {@code .dat}. */
    static void onceBeforeTheDatIsForced(SimulatedDisk d, IoStep step) {
        AtomicBoolean armed = new AtomicBoolean(true);
        d.beforeForce(p -> {
            if (p.endsWith("1.dat") && armed.getAndSet(false)) {
                try {
                    step.run();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        });
    }

    /**
     * Writes needle 1 durably, then with fsync off overwrites it and writes the overwrite's {@code .idx}
     * record, neither forced, and cuts the power.
     *
     * @return whether the cut kept the record and lost the needle (the stale case)
     */
    static boolean cutAfterAnUnforcedOverwrite(SimulatedDisk d) throws IOException {
        try (Volume v = Volume.create(d, DIR, 1, OPTS)) {
            v.write(1, 0, 7, VolumeTest.bytes(100, 1)); // durable, and so is its .idx record at close
        }
        long end = d.size(Volume.datPath(DIR, 1));
        Volume v = Volume.open(d, DIR, 1, new Volume.Options(64L << 20, Volume.Fsync.NEVER));
        v.write(1, 0, 7, VolumeTest.bytes(300, 2)); // an overwrite, written, never forced
        v.flushIndex(); // its record written, not forced
        d.powerCut();
        v.abandon();
        return d.size(Volume.datPath(DIR, 1)) <= end
                && d.size(Volume.idxPath(DIR, 1)) == IdxFile.HEADER_SIZE + 2L * IdxFile.RECORD_SIZE;
    }

    /** Every record of the durable .idx names a valid needle of the durable .dat. */
    static void assertIdxNamesOnlyDurableNeedles(SimulatedDisk d, long seed) throws IOException {
        List<Long> offsets = new ArrayList<>();
        IdxFile.load(d, Volume.idxPath(DIR, 1), 1, (key, alt, offset, size, deleted) -> offsets.add(offset)).close();
        try (FileChannel dat = d.open(Volume.datPath(DIR, 1), StandardOpenOption.READ)) {
            for (long off : offsets) {
                assertThat(VolumeRecovery.validAt(dat, off))
                        .as("seed %d: the durable .idx names a needle at offset %d that is not durable", seed, off).isTrue();
            }
        }
    }

    @Test
    void theIdxFlusherNeverWritesARecordBeforeItsNeedleIsForced() throws Exception {
        for (long seed = 0; seed < SEEDS; seed++) {
            SimulatedDisk d = disk(seed);
            Volume v = Volume.create(d, DIR, 1, OPTS);
            v.write(1, 0, 7, VolumeTest.bytes(100, 1));
            // The background flusher runs between the append of needle 2 and its fsync; then the power goes.
            onceBeforeTheDatIsForced(d, () -> {
                v.flushIndex();
                d.powerCut();
            });
            long s = seed;
            assertThatThrownBy(() -> v.write(2, 0, 7, VolumeTest.bytes(5000, 2))).as("seed %d", s)
                    .hasMessage("simulated power cut");
            d.beforeForce(null);
            v.abandon();
            assertIdxNamesOnlyDurableNeedles(d, seed);
            try (Volume r = Volume.open(d, DIR, 1, OPTS)) {
                assertThat(VolumeTest.array(r.read(1, 0, 7))).as("seed %d", seed).isEqualTo(VolumeTest.array(VolumeTest.bytes(100, 1)));
                try {
                    assertThat(VolumeTest.array(r.read(2, 0, 7))).as("seed %d", seed)
                            .isEqualTo(VolumeTest.array(VolumeTest.bytes(5000, 2)));
                } catch (StoreOperationException e) {
                    assertThat(e.reason()).as("seed %d", seed).isEqualTo(StoreOperationException.Reason.NEEDLE_NOT_FOUND);
                }
                r.write(3, 0, 7, VolumeTest.bytes(10, 3));
            }
        }
    }

    @Test
    void recoveryForcesTheNeedlesItFindsInThePageCacheBeforeTheIdxNamesThem() throws Exception {
        for (long seed = 0; seed < SEEDS; seed++) {
            SimulatedDisk d = disk(seed);
            Volume v = Volume.create(d, DIR, 1, OPTS);
            v.write(1, 0, 7, VolumeTest.bytes(100, 1));
            // kill -9 between the append of needle 2 and its fsync: the page cache keeps it.
            onceBeforeTheDatIsForced(d, () -> {
                v.abandon();
                throw new IOException("killed");
            });
            assertThatThrownBy(() -> v.write(2, 0, 7, VolumeTest.bytes(5000, 2))).hasMessageContaining("killed");
            d.beforeForce(null);
            Volume.open(d, DIR, 1, OPTS).abandon(); // the restart finds needle 2 in the tail and names it in the .idx
            d.powerCut();
            assertIdxNamesOnlyDurableNeedles(d, seed);
        }
    }

    /**
     * With fsync off a power cut can keep an {@code .idx} record whose needle it lost; a later
     * needle then lands at the same offset. The stale record must not shadow the key's older,
     * durable needle on the next start (it would, replayed as "the highest offset wins").
     */
    @Test
    void aRecordWhoseNeedleWasLostNeverShadowsAnOlderNeedle() throws Exception {
        int staleSeen = 0;
        for (long seed = 0; seed < SEEDS * 2; seed++) {
            SimulatedDisk d = disk(seed);
            boolean stale = cutAfterAnUnforcedOverwrite(d);
            staleSeen += stale ? 1 : 0;
            try (Volume r = Volume.open(d, DIR, 1, OPTS)) {
                r.write(2, 0, 7, VolumeTest.bytes(300, 3)); // lands where the lost overwrite was
            }

            try (Volume r = Volume.open(d, DIR, 1, OPTS)) {
                byte[] got = VolumeTest.array(r.read(1, 0, 7));
                if (stale) {
                    assertThat(got).as("seed %d", seed).isEqualTo(VolumeTest.array(VolumeTest.bytes(100, 1)));
                }
                assertThat(VolumeTest.array(r.read(2, 0, 7))).as("seed %d", seed)
                        .isEqualTo(VolumeTest.array(VolumeTest.bytes(300, 3)));
            }
        }
        assertThat(staleSeen).as("seeds where the cut kept the record and lost the needle").isPositive();
    }

    /** As above, but the needle that lands where the lost one was has the same key and another size. */
    @Test
    void aRecordWhoseNeedleWasLostNeverMisdescribesANewNeedleOfTheSameKey() throws Exception {
        int staleSeen = 0;
        for (long seed = 0; seed < SEEDS * 2; seed++) {
            SimulatedDisk d = disk(seed);
            staleSeen += cutAfterAnUnforcedOverwrite(d) ? 1 : 0;
            try (Volume r = Volume.open(d, DIR, 1, OPTS)) {
                r.write(1, 0, 7, VolumeTest.bytes(1000, 3)); // lands where the lost overwrite was, if it was lost
            }
            try (Volume r = Volume.open(d, DIR, 1, OPTS)) {
                assertThat(VolumeTest.array(r.read(1, 0, 7))).as("seed %d", seed)
                        .isEqualTo(VolumeTest.array(VolumeTest.bytes(1000, 3)));
            }
        }
        assertThat(staleSeen).as("seeds where the cut kept the record and lost the needle").isPositive();
    }
}
