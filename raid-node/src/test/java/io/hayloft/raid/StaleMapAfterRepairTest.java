package io.hayloft.raid;

import io.hayloft.cold.ColdReader;
import java.util.List;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.wire.StripeMap;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A long-lived {@link ColdReader} (the client's, a cache node's) caches a volume's stripe map. A
 * repair moves a block (same job, new store and name) and deletes the old one; the reader must
 * notice rather than count the old block as unavailable for ever. Found by the life-cycle checker:
 * after two repairs of one stripe of a (4, 2) code, one store going down made the stripe look lost.
 */
class StaleMapAfterRepairTest {

    @TempDir
    Path dir;

    @Test
    void aReaderFollowsRepairsOfItsCachedVolume() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 8); ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            RaidConfig config = cluster.raidConfig("rs", 16 << 10);
            config.k = 4;
            config.r = 2;
            RaidNode raid = new RaidNode(config, runner);
            int volume = cluster.writeVolume(20, 2000); // one stripe
            raid.encode(volume);
            BlockFixer fixer = new BlockFixer(raid.cluster(), config);
            try (ColdReader reader = new ColdReader(raid.cluster())) {
                cluster.assertColdReads(reader, List.of(), "before any repair"); // caches the map

                for (int unit : new int[] {0, 1}) {
                    StripeMap.Block b = raid.cluster().stripeMap(volume).stripes().get(0).blocks().get(unit);
                    cluster.stores.get(b.store()).store().blocks().delete(b.name());
                    assertThat(fixer.repairAll().blocks()).isEqualTo(1);
                }
                // Two blocks moved: a reader still on the old map sees units 0 and 1 gone. One store down
                // more leaves the real stripe one block short, well within r = 2.
                String down = raid.cluster().stripeMap(volume).stripes().get(0).blocks().get(2).store();
                cluster.stopStore(down);

                cluster.assertColdReads(reader, List.of(), "after two repairs and with " + down + " down");
            }
        }
    }
}
