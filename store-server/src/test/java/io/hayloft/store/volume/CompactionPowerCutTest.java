package io.hayloft.store.volume;

import org.junit.jupiter.api.Test;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.serverkit.io.SimulatedDisk;
import io.hayloft.store.volume.CompactionCommit.Step;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A power cut (not only a crash) during compaction, on a {@link SimulatedDisk}: after every commit
 * step, and before every fsync (file or directory) the compaction makes. Whatever the disk kept,
 * the reopened volume holds every acknowledged needle, no deleted one, and takes writes.
 */
class CompactionPowerCutTest {
    static final Volume.Options OPTS = IdxDurabilityTest.OPTS;
    static final Path DIR = IdxDurabilityTest.DIR;
    static final int SEEDS = 15;

    private static VolumeModel fill(Volume v) throws Exception {
        VolumeModel model = new VolumeModel();
        for (int i = 0; i < 30; i++) {
            model.write(v, i, 0, 40 + i, 50 + i * 61 % 2000, i);
        }
        for (int i = 0; i < 30; i += 3) {
            model.delete(v, i, 0);
        }
        model.write(v, 1, 0, 41, 700, 99); // an overwrite: the old copy is garbage to compaction
        return model;
    }

    private static void assertRecovered(SimulatedDisk d, VolumeModel model, long seed) throws Exception {
        try (Volume r = Volume.open(d, DIR, 1, OPTS)) {
            model.verify(r);
            model.write(r, 500, 0, 1, 100, 500);
            model.verify(r);
        } catch (Exception | AssertionError e) {
            throw new AssertionError("seed " + seed + ": " + e, e);
        }
        assertThat(d.list(DIR)).as("seed %d: no compaction leftovers", seed).containsExactly("1.dat", "1.idx");
    }

    @ParameterizedTest
    @EnumSource(Step.class)
    void aPowerCutAfterEveryCommitStepRecovers(Step at) throws Exception {
        for (long seed = 0; seed < SEEDS; seed++) {
            SimulatedDisk d = new SimulatedDisk(seed);
            d.createDirectories(DIR);
            Volume v = Volume.create(d, DIR, 1, OPTS);
            VolumeModel model = fill(v);
            assertThatThrownBy(() -> Compactor.compact(v, step -> {
                if (step == at) {
                    d.powerCut();
                    throw new CompactionCommit.SimulatedCrash(step);
                }
            })).isInstanceOf(CompactionCommit.SimulatedCrash.class);
            v.abandon();
            assertRecovered(d, model, seed);
        }
    }

    @Test
    void aPowerCutBeforeEachFsyncOfACompactionRecovers() throws Exception {
        SimulatedDisk probe = new SimulatedDisk(0);
        probe.createDirectories(DIR);
        Volume p = Volume.create(probe, DIR, 1, OPTS);
        fill(p);
        AtomicInteger total = new AtomicInteger();
        probe.beforeForce(path -> total.incrementAndGet());
        Compactor.compact(p);
        probe.beforeForce(null);
        p.close();
        assertThat(total.get()).as("fsyncs (files and directories) of one compaction").isGreaterThanOrEqualTo(8);
        for (int n = 1; n <= total.get(); n++) {
            for (long seed = 0; seed < SEEDS; seed++) {
                SimulatedDisk d = new SimulatedDisk(seed);
                d.createDirectories(DIR);
                Volume v = Volume.create(d, DIR, 1, OPTS);
                VolumeModel model = fill(v);
                AtomicInteger forces = new AtomicInteger();
                int cutAt = n;
                d.beforeForce(path -> {
                    if (forces.incrementAndGet() == cutAt) {
                        d.powerCut();
                    }
                });
                try {
                    Compactor.compact(v);
                } catch (Exception | AssertionError e) {
                    assertThat(d.powerCuts()).as("seed %d: compaction failed without a cut: %s", seed, e).isEqualTo(1);
                }
                d.beforeForce(null);
                assertThat(d.powerCuts()).as("seed %d, fsync %d", seed, n).isEqualTo(1);
                v.abandon();
                assertRecovered(d, model, seed);
            }
        }
    }
}
