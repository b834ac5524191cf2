package io.hayloft.raid;

import io.hayloft.cold.ColdReader;
import java.util.Comparator;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.wire.StripeMap;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code raid-recovery --rounds 3} stall, small: in a cluster of exactly {@code k + r + 1} stores
 * a store dies and is rebuilt, comes back empty on the same port (a replacement), then a second
 * store dies. After the first repair every stripe leaves out the replacement, so it is the only
 * legal target of every block of the second repair. With the repair modelled as running on its
 * target, every source read of the second repair crossed the replacement's one throttled ingress
 * (about nine times the bytes it receives), and the whole round queued behind it. The reads must now
 * spread over the other stores' links, the replacement receiving only the rebuilt blocks; the
 * repairs go through the raid-node's pooled connections to the restarted port.
 */
class ReplacementStoreRepairTest {

    static final long BLOCK = 4 << 10;

    @TempDir
    Path dir;

    @Test
    void aSecondRepairOntoAnEmptyReplacementSpreadsItsReadsOverEveryStoresLinks() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 15); ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            RaidConfig config = cluster.raidConfig("hh-xor+", BLOCK);
            config.repairBytesPerSecondPerStore = 4_000_000;
            RaidNode raid = new RaidNode(config, runner);
            for (int v = 0; v < 3; v++) {
                raid.encode(cluster.writeVolume(120, 4000));
            }

            // Round 1: a store dies and its blocks are rebuilt; it comes back empty on its port.
            String first = busiest(raid, Set.of());
            cluster.stopStore(first);
            assertThat(repair(raid, config).failures()).isEmpty();
            cluster.replaceStore(first);
            assertThat(cluster.allBlocks()).noneMatch(b -> b.startsWith(first + "/"));
            for (StripeMap m : raid.cluster().stripeMaps()) {
                m.stripes().forEach(s -> assertThat(s.blocks()).as("every stripe leaves out the replacement")
                        .noneMatch(b -> b.store().equals(first)));
            }

            // Round 2: another store dies; the replacement is the only legal target of each lost block.
            String second = busiest(raid, Set.of(first));
            int lost = blocksOn(raid, second);
            cluster.stopStore(second);
            BlockFixer fixer = new BlockFixer(raid.cluster(), config);
            BlockFixer.Report report = CompletableFuture.supplyAsync(() -> {
                try {
                    return fixer.repairAll();
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            }).get(120, TimeUnit.SECONDS);

            assertThat(report.failures()).isEmpty();
            assertThat(report.blocks()).isEqualTo(lost);
            assertThat(blocksOn(raid, first)).isEqualTo(lost);
            assertThat(fixer.scan()).isEmpty();
            Throttle links = fixer.throttle();
            long rebuilt = lost * BLOCK;
            long ingress = 0;
            for (String s : cluster.stores.keySet()) {
                ingress += links.ingressBytes(s);
            }
            // Reads of the repairer's own block cross no link; every other read crosses one ingress,
            // every rebuilt block decoded elsewhere the replacement's ingress.
            assertThat(ingress).isLessThanOrEqualTo(report.bytesRead() + rebuilt);
            assertThat(links.ingressBytes(first)).as("replacement's ingress").isGreaterThanOrEqualTo(rebuilt / 2)
                    .isLessThan(report.bytesRead() / 2);
            for (String s : cluster.stores.keySet()) {
                assertThat(links.ingressBytes(s)).as("ingress of " + s).isLessThan(report.bytesRead() / 2);
                assertThat(links.egressBytes(s)).as("egress of " + s).isLessThan(report.bytesRead() / 2);
            }

            try (ColdReader reader = new ColdReader(raid.cluster())) {
                for (TestCluster.Photo p : cluster.photos.values()) {
                    assertThat(reader.get(p.volume(), p.key(), 0)).isEqualTo(p.data());
                }
                assertThat(reader.degradedReads()).as("degraded reads but hedges of slow direct reads").isLessThanOrEqualTo(reader.hedgedReads());
            }
        }
    }

    private static BlockFixer.Report repair(RaidNode raid, RaidConfig config) throws Exception {
        BlockFixer.Report r = new BlockFixer(raid.cluster(), config).repairAll();
        assertThat(new BlockFixer(raid.cluster(), config).scan()).isEmpty();
        return r;
    }

    /** The store holding the most blocks, outside {@code skip}. */
    private static String busiest(RaidNode raid, Set<String> skip) throws Exception {
        List<String> holders = new ArrayList<>();
        for (StripeMap m : raid.cluster().stripeMaps()) {
            m.stripes().forEach(s -> s.blocks().forEach(b -> holders.add(b.store())));
        }
        return new HashSet<>(holders).stream().filter(s -> !skip.contains(s))
                .max(Comparator.comparingLong((String s) -> holders.stream().filter(s::equals).count())
                        .thenComparing(s -> s)).orElseThrow();
    }

    private static int blocksOn(RaidNode raid, String store) throws Exception {
        int n = 0;
        for (StripeMap m : raid.cluster().stripeMaps()) {
            for (StripeMap.Stripe s : m.stripes()) {
                n += (int) s.blocks().stream().filter(b -> b.store().equals(store)).count();
            }
        }
        return n;
    }
}
