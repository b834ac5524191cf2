package io.hayloft.raid;

import io.hayloft.cold.ColdReader;
import io.hayloft.format.wire.StripeMap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The raid-node stops dead at every step of an encode (an Error thrown from the checkpoint, which
 * nothing catches, so no rollback runs); a new raid-node recovers. Nothing is lost, nothing orphaned.
 * Each volume is {@link ProcessCrashTest#NEEDLES} needles of up to {@link ProcessCrashTest#MAX_NEEDLE}
 * bytes: two stripes, many needles across a block boundary.
 */
class EncodeCrashTest {

    /** What a kill leaves: the job stops where it is. */
    static final class Crash extends Error {
        Crash(String step) {
            super("simulated crash at " + step);
        }
    }

    static final List<String> STEPS = List.of("begun", "stripe-0", "stripe-1", "index", "verified", "committed", "dropped");

    @TempDir
    Path dir;

    @Test
    void aCrashAtEveryStepLeavesTheReplicasOrACompleteStripeSetAndNoOrphans() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 15); ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            RaidConfig config = cluster.raidConfig("hh-xor+", 16 << 10);
            for (String step : STEPS) {
                int volume = cluster.writeVolume(ProcessCrashTest.NEEDLES, ProcessCrashTest.MAX_NEEDLE);
                RaidNode crashing = new RaidNode(config, runner);
                crashing.checkpoints(s -> {
                    if (s.equals(step)) {
                        throw new Crash(s);
                    }
                });
                assertThatThrownBy(() -> crashing.encode(volume)).isInstanceOf(Crash.class);

                RaidNode restarted = new RaidNode(config, runner);
                restarted.recover();

                VolumeInfo v = cluster.directory.directory().volume(volume);
                boolean committed = STEPS.indexOf(step) >= STEPS.indexOf("committed");
                assertThat(v.state()).as("after a crash at " + step).isEqualTo(committed ? VolumeState.ERASURE_CODED : VolumeState.READ_ONLY);
                if (!committed) {
                    // Rolled back: replicas intact and readable, no blocks anywhere; then a clean encode works.
                    assertThat(v.replicas()).hasSize(3);
                    for (TestCluster.Photo p : cluster.photos.values()) {
                        if (p.volume() == volume) {
                            String replica = cluster.firstReplica(p.volume());
                            assertThat(cluster.send("GET", "http://" + replica + "/" + volume + "/" + p.key() + "/0?cookie="
                                    + p.cookie(), null)).isEqualTo(200);
                        }
                    }
                    assertThat(cluster.allBlocks()).as("blocks after a crash at " + step).allMatch(b -> !b.contains("v" + volume + "-"));
                    restarted.encode(volume);
                }
                v = cluster.directory.directory().volume(volume);
                assertThat(v.state()).isEqualTo(VolumeState.ERASURE_CODED);
                assertThat(restarted.cluster().stripeMap(volume).stripes()).as("stripes of volume %d", volume).hasSizeGreaterThan(1);
                assertThat(v.replicas()).isEmpty();
                for (var s : cluster.stores.values()) {
                    assertThat(s.store().volumes()).extracting(x -> x.id()).doesNotContain((long) volume);
                }
                // Exactly the committed blocks exist: no orphans of the crashed job.
                Set<String> expected = new HashSet<>();
                for (StripeMap m : restarted.cluster().stripeMaps()) {
                    m.allBlocks().forEach(b -> expected.add(b.store() + "/" + b.name()));
                }
                assertThat(cluster.allBlocks()).as("after a crash at " + step).containsExactlyInAnyOrderElementsOf(expected);
            }
            try (ColdReader reader = new ColdReader(new RaidNode(config, runner).cluster())) {
                for (TestCluster.Photo p : cluster.photos.values()) {
                    assertThat(reader.get(p.volume(), p.key(), 0)).isEqualTo(p.data());
                }
            }
        }
    }
}
