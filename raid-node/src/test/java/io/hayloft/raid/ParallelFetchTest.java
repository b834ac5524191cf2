package io.hayloft.raid;

import io.hayloft.cold.ColdReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.format.wire.StripeMap;
import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import io.hayloft.erasure.ReadRange;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Degraded reads and repairs fetch their sources concurrently: correct bytes with 1..r stores
 * stopped, a source that fails during the fetch joins the unavailable set, more than r is a clear
 * error, and a repair split in windows (fetched one ahead) reads exactly what the codec plans.
 */
class ParallelFetchTest {

    static final long BLOCK = 16 << 10;

    @TempDir
    Path dir;

    @Test
    void degradedReadsWithOneToRStoresStoppedThenASourceFailingThenTooMany() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 15); ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            int volume = cluster.writeVolume(80, 4000);
            RaidNode raid = new RaidNode(cluster.raidConfig("hh-xor+", BLOCK), runner);
            raid.encode(volume);
            StripeMap map = raid.cluster().stripeMap(volume);
            List<StripeMap.Block> stripe0 = map.stripes().get(0).blocks();
            String indexHolder = map.index().holders().get(0);
            List<String> victims = new ArrayList<>();
            for (StripeMap.Block b : stripe0) {
                if (victims.size() < 4 && !b.store().equals(indexHolder) && !map.index().holders().contains(b.store())) {
                    victims.add(b.store());
                }
            }
            assertThat(victims).hasSize(4);
            for (int stopped = 1; stopped <= 3; stopped++) {
                cluster.stopStore(victims.get(stopped - 1));
                try (ColdReader reader = new ColdReader(raid.cluster())) {
                    cluster.assertColdReads(reader, List.of(), "");
                    assertThat(reader.degradedReads()).as("%d stores stopped", stopped).isPositive();
                }
            }

            // Three stopped and a fourth source whose block vanishes while its store stays UP: the
            // fetch from it fails, the unit joins the unavailable set and the read is planned again.
            int lostUnit = unitOf(stripe0, victims.get(0));
            int[] down = {unitOf(stripe0, victims.get(1)), unitOf(stripe0, victims.get(2))};
            List<ReadRange> plan;
            try (ErasureCodec codec = ErasureCodec.create(CodecKind.HH_XOR_PLUS, 10, 4)) {
                plan = codec.planReadRange(BLOCK, lostUnit, 0, 100, down);
            }
            StripeMap.Block failing = stripe0.get(unitOf(stripe0, victims.get(3)));
            int failingUnit = stripe0.indexOf(failing);
            assertThat(plan).as("the failing unit is a planned source").anyMatch(r -> r.unit() == failingUnit);
            cluster.stores.get(failing.store()).store().blocks().delete(failing.name());
            try (ColdReader reader = new ColdReader(raid.cluster())) {
                cluster.assertColdReads(reader, List.of(), "");
                assertThat(reader.sourceFailures()).isPositive();
            }

            // r = 4 stores stopped: every needle still reads.
            cluster.stopStore(victims.get(3));
            try (ColdReader reader = new ColdReader(raid.cluster())) {
                cluster.assertColdReads(reader, List.of(), "");
                assertThat(reader.sourceFailures()).isZero();
            }

            // A fifth: needles of stripe 0's lost blocks fail and say why.
            String fifth = stripe0.stream().map(StripeMap.Block::store).filter(s -> !victims.contains(s)
                    && !map.index().holders().contains(s)).findFirst().orElseThrow();
            cluster.stopStore(fifth);
            try (ColdReader reader = new ColdReader(raid.cluster())) {
                assertThat(cluster.readEveryPhotoOrStripeLost(reader)).isPositive();
            }
        }
    }

    @Test
    void aWindowedRepairReadsWhatTheCodecPlansAndSurvivesASourceFailingMidway() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 15); ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            RaidConfig config = cluster.raidConfig("hh-xor+", BLOCK);
            config.repairWindowBytes = 4 << 10; // 4 windows of 2 KiB per substripe
            RaidNode raid = new RaidNode(config, runner);
            int volume = cluster.writeVolume(60, 4000);
            raid.encode(volume);
            StripeMap m = raid.cluster().stripeMap(volume);
            List<StripeMap.Block> blocks = m.stripes().get(0).blocks();

            // Windowed, the single-block repair still reads exactly 13 half blocks.
            StripeMap.Block lost = blocks.get(3);
            cluster.stores.get(lost.store()).store().blocks().delete(lost.name());
            BlockFixer fixer = new BlockFixer(raid.cluster(), config);
            assertThat(fixer.repair(fixer.scan().get(0))).isEqualTo(13 * BLOCK / 2);

            // Lose unit 3 again; after the first window a planned source's block vanishes.
            m = raid.cluster().stripeMap(volume);
            blocks = m.stripes().get(0).blocks();
            lost = blocks.get(3);
            cluster.stores.get(lost.store()).store().blocks().delete(lost.name());
            ErasureCodec codec = ErasureCodec.create(CodecKind.HH_XOR_PLUS, 10, 4);
            int source = codec.planRepair(BLOCK, 3).get(0).unit();
            codec.close();
            StripeMap.Block victim = blocks.get(source);
            int[] windows = {0};
            BlockFixer failing = new BlockFixer(raid.cluster(), config);
            // Ranged reads per window (a block deleted under an open stream is still served from the
            // open file, so this failure only shows there); StreamRepairTest stops a store mid-stream.
            failing.streamSources(false);
            failing.checkpoints(step -> {
                if (step.equals("window") && windows[0]++ == 0) {
                    try {
                        cluster.stores.get(victim.store()).store().blocks().delete(victim.name());
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }
            });
            var damage = failing.scan();
            assertThat(damage).hasSize(1);
            long read = failing.repair(damage.get(0));
            assertThat(read).as("the retry decodes from k whole blocks").isEqualTo(10 * BLOCK);
            assertThat(failing.bytesRead()).as("bytes of the abandoned attempt are counted too").isGreaterThan(read);
            // Unit 3 is rebuilt; unit `source` is now missing and a second repair restores it.
            var left = failing.scan();
            assertThat(left).hasSize(1);
            assertThat(left.get(0).units()).containsExactly(source);
            failing.repair(left.get(0));
            assertThat(failing.scan()).isEmpty();
            try (ColdReader reader = new ColdReader(raid.cluster())) {
                cluster.assertColdReads(reader, List.of(), "");
                assertThat(reader.degradedReads()).as("degraded reads but hedges of slow direct reads").isLessThanOrEqualTo(reader.hedgedReads());
            }

            // Five sources gone: the repair says so.
            m = raid.cluster().stripeMap(volume);
            for (int u : new int[] {0, 1, 2, 4, 5}) {
                StripeMap.Block b = m.stripes().get(0).blocks().get(u);
                cluster.stores.get(b.store()).store().blocks().delete(b.name());
            }
            var five = failing.scan();
            assertThatThrownBy(() -> failing.repair(five.get(0))).hasMessageContaining("more than the 4 the code tolerates");
        }
    }

    private static int unitOf(List<StripeMap.Block> blocks, String store) {
        for (int u = 0; u < blocks.size(); u++) {
            if (blocks.get(u).store().equals(store)) {
                return u;
            }
        }
        throw new AssertionError("no block on " + store);
    }
}
