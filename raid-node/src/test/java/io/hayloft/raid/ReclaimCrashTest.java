package io.hayloft.raid;

import io.hayloft.cold.ColdReader;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.format.wire.StripeMap;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The raid-node stops dead at every step of a reclaim (an Error thrown from the checkpoint, which
 * nothing catches, so no rollback runs); a new raid-node recovers. Before the swap the old stripe set
 * is in force and the new blocks are gone; after it the new set is, and the old blocks are gone. Every
 * live needle reads, every deleted one stays deleted, and no orphan block is left on any store.
 * Each volume is {@link ProcessReclaimCrashTest#NEEDLES} needles of up to
 * {@link ProcessReclaimCrashTest#MAX_NEEDLE} bytes: two stripes, its compacted image one.
 */
class ReclaimCrashTest {

    @TempDir
    Path dir;

    @Test
    void aCrashAtEveryStepLeavesTheOldOrTheNewStripeSetAndNoOrphans() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 15); ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            RaidConfig config = cluster.raidConfig("hh-xor+", 16 << 10);
            RaidNode clean = new RaidNode(config, runner);
            Set<Long> deleted = new HashSet<>();

            // The steps a reclaim reports (EncodeJob's own included), from one clean run.
            int first = prepared(cluster, clean, deleted);
            List<String> steps = new ArrayList<>();
            clean.checkpoints(steps::add);
            assertThat(clean.reclaim(first).reclaimed()).isTrue();
            clean.checkpoints(Checkpoints.NONE);
            assertThat(steps).contains("compacted", "reclaim-begun", "swapped", "old-deleted")
                    .anyMatch(s -> s.startsWith("stripe-"));

            for (String step : steps) {
                int volume = prepared(cluster, clean, deleted);
                String oldJob = clean.cluster().stripeMap(volume).job();
                RaidNode crashing = new RaidNode(config, runner);
                crashing.checkpoints(s -> {
                    if (s.equals(step)) {
                        throw new EncodeCrashTest.Crash(s);
                    }
                });
                assertThatThrownBy(() -> crashing.reclaim(volume)).isInstanceOf(EncodeCrashTest.Crash.class);

                RaidNode restarted = new RaidNode(config, runner);
                restarted.recover();

                boolean swapped = steps.indexOf(step) >= steps.indexOf("swapped");
                StripeMap now = restarted.cluster().stripeMap(volume);
                assertThat(now.status()).isEqualTo(StripeMap.COMMITTED);
                assertThat(now.job().equals(oldJob)).as("old map in force after a crash at " + step).isEqualTo(!swapped);
                assertThat(restarted.cluster().reclaims()).as("pending reclaims after " + step).isEmpty();
                cluster.assertOnlyMappedBlocks(restarted.cluster(), "after a crash at " + step);
                try (ColdReader reader = new ColdReader(restarted.cluster())) {
                    cluster.assertColdReads(reader, deleted, "after a crash at " + step);
                }
                if (!swapped) {
                    assertThat(restarted.reclaim(volume).reclaimed()).isTrue();
                    cluster.assertOnlyMappedBlocks(restarted.cluster(), "after a crash at " + step + " then a clean reclaim");
                    try (ColdReader reader = new ColdReader(restarted.cluster())) {
                        cluster.assertColdReads(reader, deleted, "after a crash at " + step + " then a clean reclaim");
                    }
                }
            }
            try (var images = Files.newDirectoryStream(dir, "hayloft-reclaim-*")) {
                assertThat(images).as("reclaim images left in the spool directory").isEmpty();
            }
        }
    }

    /** A coded volume with two thirds of its needle bytes deleted. */
    private static int prepared(TestCluster cluster, RaidNode raid, Set<Long> deleted) throws Exception {
        int volume = cluster.writeVolume(ProcessReclaimCrashTest.NEEDLES, ProcessReclaimCrashTest.MAX_NEEDLE);
        raid.encode(volume);
        assertThat(raid.cluster().stripeMap(volume).stripes()).as("stripes of volume %d", volume).hasSizeGreaterThan(1);
        deleted.addAll(cluster.deletePhotos(volume, 0.67));
        return volume;
    }
}
