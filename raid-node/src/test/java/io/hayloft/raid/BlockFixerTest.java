package io.hayloft.raid;

import io.hayloft.cold.ColdReader;
import io.hayloft.format.wire.StripeMap;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Lost, missing and corrupt blocks are rebuilt; HH-XOR+ single-block repairs read 65% of what RS reads. */
class BlockFixerTest {

    static final long BLOCK = 16 << 10;

    @TempDir
    Path dir;

    @Test
    void singleBlockRepairReadsSixtyFivePercentOfReedSolomonAndMultipleLossesAreDecoded() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 15); ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            int rsVolume = cluster.writeVolume(60, 4000);
            int hhVolume = cluster.writeVolume(60, 4000);
            RaidNode rs = new RaidNode(cluster.raidConfig("rs", BLOCK), runner);
            RaidNode hh = new RaidNode(cluster.raidConfig("hh-xor+", BLOCK), runner);
            rs.encode(rsVolume);
            hh.encode(hhVolume);
            BlockFixer fixer = new BlockFixer(hh.cluster(), hh.config());
            assertThat(fixer.scan()).isEmpty();

            // Lose data block 3 of stripe 0 of each volume.
            long rsRead = loseAndRepair(cluster, fixer, rs.cluster().stripeMap(rsVolume), new int[] {3});
            long hhRead = loseAndRepair(cluster, fixer, hh.cluster().stripeMap(hhVolume), new int[] {3});
            assertThat(rsRead).isEqualTo(10 * BLOCK);
            assertThat(hhRead).isEqualTo(13 * BLOCK / 2);
            assertThat((double) hhRead / rsRead).isEqualTo(0.65);

            // Two lost blocks plus a corrupt one in one stripe: a full decode.
            StripeMap m = hh.cluster().stripeMap(hhVolume);
            StripeMap.Block corrupt = m.stripes().get(0).blocks().get(12);
            cluster.stores.get(corrupt.store()).store().blocks().put(corrupt.name(), ByteBuffer.wrap(new byte[(int) BLOCK]));
            long read = loseAndRepair(cluster, fixer, m, new int[] {0, 11});
            assertThat(read).isEqualTo(10 * BLOCK);
            assertThat(fixer.scan()).isEmpty();

            readEverything(cluster, hh);
        }
    }

    @Test
    void aDeadStoreHasAllItsBlocksRebuiltElsewhere() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 15); ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            RaidConfig config = cluster.raidConfig("hh-xor", BLOCK);
            config.workers = 3;
            RaidNode raid = new RaidNode(config, runner);
            int v1 = cluster.writeVolume(100, 4000);
            int v2 = cluster.writeVolume(100, 4000);
            raid.encode(v1);
            raid.encode(v2);
            String dead = raid.cluster().stripeMap(v1).stripes().get(0).blocks().get(0).store();
            cluster.stopStore(dead);
            BlockFixer fixer = new BlockFixer(raid.cluster(), config);
            int damaged = fixer.scan().size();
            assertThat(damaged).isPositive();

            BlockFixer.Report report = fixer.repairAll();

            assertThat(report.failures()).isEmpty();
            assertThat(report.stripes()).isEqualTo(damaged);
            assertThat(fixer.scan()).isEmpty();
            for (StripeMap m : raid.cluster().stripeMaps()) {
                for (StripeMap.Stripe s : m.stripes()) {
                    Set<String> holders = new HashSet<>();
                    s.blocks().forEach(b -> holders.add(b.store()));
                    assertThat(holders).hasSize(14).doesNotContain(dead);
                }
            }
            readEverything(cluster, raid);
        }
    }

    @Test
    void aCrashDuringARepairLeavesNoOrphanAfterRecovery() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 15); ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            RaidConfig config = cluster.raidConfig("hh-xor+", BLOCK);
            RaidNode raid = new RaidNode(config, runner);
            int v = cluster.writeVolume(60, 4000);
            raid.encode(v);
            StripeMap.Block corrupt = raid.cluster().stripeMap(v).stripes().get(0).blocks().get(5);
            cluster.stores.get(corrupt.store()).store().blocks().put(corrupt.name(), ByteBuffer.wrap(new byte[(int) BLOCK]));
            for (String step : new String[] {"rebuilt", "replaced"}) {
                BlockFixer crashing = new BlockFixer(raid.cluster(), config);
                crashing.checkpoints(s -> {
                    if (s.equals(step)) {
                        throw new EncodeCrashTest.Crash(s);
                    }
                });
                var damage = crashing.scan();
                try {
                    crashing.repair(damage.get(0));
                    throw new AssertionError("no crash at " + step);
                } catch (EncodeCrashTest.Crash expected) {
                    // the raid-node died here
                }
                new RaidNode(config, runner).recover();
                Set<String> expected = new HashSet<>();
                raid.cluster().stripeMap(v).allBlocks().forEach(b -> expected.add(b.store() + "/" + b.name()));
                assertThat(cluster.allBlocks()).as("after a crash at " + step).containsExactlyInAnyOrderElementsOf(expected);
            }
            assertThat(new BlockFixer(raid.cluster(), config).scan()).isEmpty();
            readEverything(cluster, raid);
        }
    }

    private static long loseAndRepair(TestCluster cluster, BlockFixer fixer, StripeMap m, int[] units) throws Exception {
        for (int u : units) {
            StripeMap.Block b = m.stripes().get(0).blocks().get(u);
            cluster.stores.get(b.store()).store().blocks().delete(b.name());
        }
        var damage = fixer.scan().stream().filter(d -> d.volume() == m.volume()).toList();
        assertThat(damage).hasSize(1);
        return fixer.repair(damage.get(0));
    }

    private static void readEverything(TestCluster cluster, RaidNode raid) throws Exception {
        try (ColdReader reader = new ColdReader(raid.cluster())) {
            for (TestCluster.Photo p : cluster.photos.values()) {
                assertThat(reader.get(p.volume(), p.key(), 0)).isEqualTo(p.data());
            }
            assertThat(reader.degradedReads()).as("degraded reads but hedges of slow direct reads").isLessThanOrEqualTo(reader.hedgedReads());
        }
    }
}
