package io.hayloft.bench.raid;

import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.raid.BlockFixer;
import io.hayloft.raid.Cluster;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.ThreadPoolRunner;
import io.hayloft.serverkit.io.FileTrees;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code hayloft bench raid-recovery}: the FDS paper's Table 1 for the cold tier. For each cluster
 * size, an embedded cluster of that many stores (one rack each, fsync off) gets the same coded data
 * per store ({@code --per-store-mib} of blocks, in volumes of {@code --stripes-per-volume} stripes),
 * then one store is stopped and {@link BlockFixer#repairAll} rebuilds every block it held, each
 * store's egress and ingress throttled to {@code --store-mbps}. Prints the time to restore full
 * redundancy per cluster size (median of {@code --rounds} stores killed one after another, each
 * after the previous one's blocks were rebuilt and it came back) and the speedup over the smallest.
 */
@Command(name = "raid-recovery", mixinStandardHelpOptions = true,
        description = "Cold tier: time to restore full redundancy after a store dies, by cluster size.")
public final class RaidRecoveryBench implements Callable<Integer> {

    @Option(names = "--stores", defaultValue = "15,30,60", split = ",", description = "cluster sizes (default ${DEFAULT-VALUE})")
    List<Integer> sizes;
    @Option(names = "--block-kib", defaultValue = "128", description = "block size, KiB")
    int blockKib;
    @Option(names = "--per-store-mib", defaultValue = "16", description = "coded bytes per store, MiB")
    int perStoreMib;
    @Option(names = "--stripes-per-volume", defaultValue = "8")
    int stripesPerVolume;
    @Option(names = "--store-mbps", defaultValue = "1", description = "link budget per store (egress and ingress), MB/s")
    double storeMbps;
    @Option(names = "--workers", defaultValue = "64", description = "most repairs in flight (repairWorkers)")
    int workers;
    @Option(names = "--rounds", defaultValue = "3", description = "stores killed one after another (median time reported)")
    int rounds;
    @Option(names = "--codec", defaultValue = "hh-xor+")
    String codec;

    @Override
    public Integer call() throws Exception {
        long block = (long) blockKib << 10;
        System.out.printf(Locale.ROOT, "%-6s %8s %8s %12s %10s %18s %8s %9s%n", "stores", "stripes", "lost",
                "bytes read", "median s", "rounds s", "speedup", "failures");
        Double first = null;
        for (int n : sizes) {
            Path dir = Files.createTempDirectory("hayloft-raid-recovery");
            try (EmbeddedCluster cluster = EmbeddedCluster.start(ClusterOptions.of(dir.resolve("c")).withStores(n, n)
                    .withReplication(1).withVolumeLimit(4L << 30).withTiming(1000, 500, 3).withFsync(false));
                 ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
                RaidConfig config = new RaidConfig();
                config.directory = cluster.directoryAddress();
                config.codec = codec;
                config.blockSize = block;
                config.spoolDir = dir.toString();
                config.requestTimeoutMillis = 120_000;
                config.repairWorkers = workers;
                config.repairBytesPerSecondPerStore = (long) (storeMbps * 1_000_000);
                RaidNode raid = new RaidNode(config, runner);
                int units = config.k + config.r;
                long stripes = Math.round((double) n * perStoreMib * (1 << 20) / (units * block));
                BenchVolumes filler = new BenchVolumes(cluster);
                int needle = (int) Math.min(block / 2, 64 << 10);
                for (long s = 0; s < stripes; s += stripesPerVolume) {
                    long count = Math.min(stripesPerVolume, stripes - s);
                    List<BenchVolumes.Needle> written = filler.fill(count * config.k * block - 4L * needle, needle);
                    raid.encode(written.get(0).volume());
                }
                double[] times = new double[rounds];
                int lost = 0;
                long bytes = 0;
                int failures = 0;
                for (int round = 0; round < rounds; round++) {
                    // A store with the median block count dies (another one each round).
                    Map<String, Integer> perStore = new HashMap<>();
                    Map<String, Cluster.StoreRef> refs = raid.cluster().stores();
                    for (StripeMap m : raid.cluster().stripeMaps()) {
                        for (StripeMap.Stripe st : m.stripes()) {
                            st.blocks().forEach(b -> perStore.merge(b.store(), 1, Integer::sum));
                        }
                    }
                    List<Map.Entry<String, Integer>> sorted = perStore.entrySet().stream()
                            .filter(e -> refs.get(e.getKey()).up()).sorted(Map.Entry.comparingByValue()).toList();
                    Map.Entry<String, Integer> victim = sorted.get(sorted.size() / 2);
                    int dead = cluster.storeIndex(refs.get(victim.getKey()).address());
                    BenchVolumes.kill(cluster, dead);
                    BlockFixer fixer = new BlockFixer(raid.cluster(), config);
                    BlockFixer.Report report = fixer.repairAll();
                    // The store comes back on its port as a replacement: no map names its old blocks (orphans).
                    cluster.startStore(dead);
                    BenchVolumes.awaitUp(cluster, dead);
                    times[round] = report.nanos() / 1e9;
                    lost += victim.getValue();
                    bytes += report.bytesRead();
                    failures += report.failures().size();
                    if (!report.failures().isEmpty()) {
                        System.out.println("  first failure: " + report.failures().get(0));
                    }
                }
                double seconds = RaidBench.median(times);
                first = first == null ? seconds : first;
                System.out.printf(Locale.ROOT, "%-6d %8d %8.1f %12d %10.2f %18s %8.2f %9d%n", n, stripes, (double) lost / rounds,
                        bytes / rounds, seconds, Arrays.toString(Arrays.stream(times)
                                .map(t -> Math.round(t * 100) / 100.0).toArray()), first / seconds, failures);
            } finally {
                FileTrees.delete(dir);
            }
        }
        return 0;
    }
}
