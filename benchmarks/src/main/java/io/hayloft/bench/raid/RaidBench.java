package io.hayloft.bench.raid;

import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.raid.BlockFixer;
import io.hayloft.cold.ColdReader;
import io.hayloft.raid.EncodeJob;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.ThreadPoolRunner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code hayloft bench raid}: on an embedded cluster of 15 stores (15 racks, one replica per
 * volume, fsync off), per block size and codec (10,4): fill one volume of {@code k} blocks, encode
 * it end to end (MB/s), then {@code --rounds} times lose data block 0 of the stripe and rebuild it
 * with {@link BlockFixer#repair}, every source store's egress and the repairer's ingress (the
 * target's, one repair at a time) throttled to {@code --store-mbps} (the Hitchhiker paper's Fig. 11
 * setup: the repairer's NIC carries every byte read). Then, when {@code --reads} is positive,
 * times needle reads of that block through {@link ColdReader}, healthy and with the block's store
 * stopped (degraded). Blocks are deleted after each codec. Prints one row per codec and the
 * repair-time ratios to RS of the same run.
 */
@Command(name = "raid", mixinStandardHelpOptions = true, description = "Cold tier: encode, single-block repair, degraded reads.")
public final class RaidBench implements Callable<Integer> {

    @Option(names = "--block-mib", defaultValue = "4", split = ",", description = "block sizes in MiB (default ${DEFAULT-VALUE})")
    List<Integer> blockMib;
    @Option(names = "--store-mbps", defaultValue = "100", description = "link budget per store (egress and ingress), MB/s")
    long storeMbps;
    @Option(names = "--codecs", defaultValue = "rs,hh-xor,hh-xor+,hh-nonxor", split = ",")
    List<String> codecs;
    @Option(names = "--rounds", defaultValue = "3", description = "repairs of the block per codec (median reported)")
    int rounds;
    @Option(names = "--reads", defaultValue = "300", description = "needle reads per healthy/degraded sample (0: none)")
    int reads;
    @Option(names = "--needle-kib", defaultValue = "64", description = "needle size of the volume, KiB")
    int needleKib;

    @Override
    public Integer call() throws Exception {
        Path dir = Files.createTempDirectory("hayloft-raid-bench");
        System.out.printf(Locale.ROOT, "%-9s %5s %9s %14s %28s %8s %15s %15s %6s%n", "codec", "block", "enc MB/s",
                "repair bytes", "repair ms (rounds)", "median", "healthy p50/p99", "degr p50/p99", "p99 x");
        try (EmbeddedCluster cluster = EmbeddedCluster.start(ClusterOptions.of(dir.resolve("c")).withStores(15, 15)
                .withReplication(1).withVolumeLimit(8L << 30).withTiming(1000, 500, 3).withFsync(false));
             ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            BenchVolumes filler = new BenchVolumes(cluster);
            for (int mib : blockMib) {
                long block = (long) mib << 20;
                Map<String, Double> medians = new LinkedHashMap<>();
                for (String codec : codecs) {
                    RaidConfig config = new RaidConfig();
                    config.directory = cluster.directoryAddress();
                    config.codec = codec;
                    config.blockSize = block;
                    config.spoolDir = dir.toString();
                    config.requestTimeoutMillis = 120_000;
                    config.repairBytesPerSecondPerStore = storeMbps * 1_000_000;
                    int needle = needleKib << 10;
                    // One stripe: k blocks minus room for the needle headers.
                    List<BenchVolumes.Needle> needles = filler.fill(config.k * block - 4L * needle, needle);
                    int volume = needles.get(0).volume();
                    RaidNode raid = new RaidNode(config, runner);
                    EncodeJob.Result enc = raid.encode(volume);
                    double encodeMbps = enc.volumeBytes() / 1e6 / (enc.nanos() / 1e9);

                    long read = 0;
                    double[] ms = new double[rounds];
                    for (int round = 0; round < rounds; round++) {
                        StripeMap map = raid.cluster().stripeMap(volume);
                        StripeMap.Block lost = map.stripes().get(0).blocks().get(0);
                        int storeIndex = cluster.storeIndex(raid.cluster().stores().get(lost.store()).address());
                        cluster.store(storeIndex).store().blocks().delete(lost.name());
                        BlockFixer fixer = new BlockFixer(raid.cluster(), config);
                        var damage = fixer.scan().stream().filter(d -> d.volume() == volume).toList();
                        long t0 = System.nanoTime();
                        read = fixer.repair(damage.get(0));
                        ms[round] = (System.nanoTime() - t0) / 1e6;
                    }
                    double median = median(ms);
                    medians.put(codec, median);

                    String healthyCol = "-";
                    String degradedCol = "-";
                    String ratioCol = "-";
                    StripeMap repaired = raid.cluster().stripeMap(volume);
                    if (reads > 0) {
                        List<BenchVolumes.Needle> inBlock0 = needles.subList(0, (int) Math.max(1, block / (needle + 64) - 1));
                        String holder = repaired.stripes().get(0).blocks().get(0).store();
                        int stopped = cluster.storeIndex(raid.cluster().stores().get(holder).address());
                        Histogram healthy = new Histogram(3);
                        Histogram degraded = new Histogram(3);
                        try (ColdReader reader = new ColdReader(raid.cluster())) {
                            sample(reader, inBlock0, healthy, reads / 3); // warm-up
                            healthy.reset();
                            sample(reader, inBlock0, healthy, reads);
                            BenchVolumes.kill(cluster, stopped);
                            sample(reader, inBlock0, degraded, reads);
                            if (reader.degradedReads() < reads) {
                                throw new IllegalStateException(codec + ": only " + reader.degradedReads() + " of "
                                        + reads + " reads went degraded");
                            }
                        }
                        cluster.startStore(stopped);
                        healthyCol = ms(healthy.getValueAtPercentile(50)) + "/" + ms(healthy.getValueAtPercentile(99));
                        degradedCol = ms(degraded.getValueAtPercentile(50)) + "/" + ms(degraded.getValueAtPercentile(99));
                        ratioCol = String.format(Locale.ROOT, "%.2f",
                                (double) degraded.getValueAtPercentile(99) / healthy.getValueAtPercentile(99));
                    }
                    System.out.printf(Locale.ROOT, "%-9s %5d %9.1f %14d %28s %8.0f %15s %15s %6s%n", codec, mib, encodeMbps,
                            read, Arrays.toString(Arrays.stream(ms).mapToLong(Math::round).toArray()), median,
                            healthyCol, degradedCol, ratioCol);
                    BenchVolumes.dropBlocks(raid.cluster(), raid.cluster().stripeMap(volume));
                }
                Double rs = medians.get("rs");
                if (rs != null) {
                    List<String> ratios = new ArrayList<>();
                    medians.forEach((c, m) -> ratios.add(String.format(Locale.ROOT, "%s %.2f", c, m / rs)));
                    System.out.println("block " + mib + " MiB, repair time / rs: " + String.join(", ", ratios));
                }
            }
        }
        return 0;
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    private static String ms(long micros) {
        return String.format(Locale.ROOT, "%.2f", micros / 1e3);
    }

    private static void sample(ColdReader reader, List<BenchVolumes.Needle> needles, Histogram h, int n) throws Exception {
        for (int i = 0; i < n; i++) {
            BenchVolumes.Needle p = needles.get(i % needles.size());
            long t0 = System.nanoTime();
            if (reader.get(p.volume(), p.key(), 0) == null) {
                throw new IllegalStateException("needle " + p.key() + " not found");
            }
            h.recordValue((System.nanoTime() - t0) / 1000);
        }
    }
}
