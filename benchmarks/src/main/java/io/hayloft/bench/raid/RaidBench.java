package io.hayloft.bench.raid;

import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.raid.BlockFixer;
import io.hayloft.raid.ColdReader;
import io.hayloft.raid.EncodeJob;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidNode;
import io.hayloft.common.wire.StripeMap;
import io.hayloft.raid.ThreadPoolRunner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code hayloft bench raid}: on an embedded cluster of 15 stores, per codec: encode a volume
 * (end-to-end MB/s), lose data block 0 of stripe 0 and repair it with each store's repair reads
 * throttled to a fixed bandwidth (bytes read and time, Hitchhiker Fig. 11 setup), and time 64 KiB
 * needle reads healthy vs degraded (the needle's store stopped). Results go to stdout as a table.
 */
@Command(name = "raid", mixinStandardHelpOptions = true, description = "Cold tier: encode, single-block repair, degraded reads.")
public final class RaidBench implements Callable<Integer> {

    @Option(names = "--block-mib", defaultValue = "4", description = "block size in MiB (default ${DEFAULT-VALUE})")
    int blockMib;
    @Option(names = "--store-mbps", defaultValue = "100", description = "repair read budget per store, MB/s (default ${DEFAULT-VALUE})")
    long storeMbps;
    @Option(names = "--codecs", defaultValue = "rs,hh-xor,hh-xor+,hh-nonxor", split = ",")
    List<String> codecs;
    @Option(names = "--reads", defaultValue = "300", description = "needle reads per healthy/degraded sample")
    int reads;

    @Override
    public Integer call() throws Exception {
        Path dir = Files.createTempDirectory("hayloft-raid-bench");
        long block = (long) blockMib << 20;
        System.out.printf(Locale.ROOT, "%-10s %10s %12s %12s %10s %10s %10s %10s %10s%n", "codec", "encode MB/s",
                "repair read", "repair ms", "read p50", "read p99", "degr p50", "degr p99", "p99 ratio");
        try (EmbeddedCluster cluster = EmbeddedCluster.start(ClusterOptions.of(dir.resolve("c")).withStores(15, 15)
                .withReplication(3).withVolumeLimit(4L << 30).withTiming(1000, 500, 3).withFsync(false));
             HayloftClient client = cluster.newClient();
             ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            Random random = new Random(1);
            int stopped = -1;
            for (String codec : codecs) {
                if (stopped >= 0) {
                    cluster.startStore(stopped);
                    stopped = -1;
                }
                // One volume of ~k blocks of 64 KiB needles.
                List<PutResult> puts = new ArrayList<>();
                byte[] data = new byte[64 << 10];
                long target = 10 * block;
                int volume = -1;
                long written = 0;
                while (written < target) {
                    random.nextBytes(data);
                    PutResult p = client.put(data);
                    if (volume < 0) {
                        volume = p.id().volume();
                    }
                    if (p.id().volume() == volume) {
                        puts.add(p);
                        written += data.length;
                    }
                }
                cluster.directory().directory().markReadOnly(volume, "bench");
                RaidConfig config = new RaidConfig();
                config.directory = cluster.directoryAddress();
                config.codec = codec;
                config.blockSize = block;
                config.spoolDir = dir.toString();
                config.repairBytesPerSecondPerStore = storeMbps * 1_000_000;
                RaidNode raid = new RaidNode(config, runner);
                EncodeJob.Result enc = raid.encode(volume);
                double encodeMbps = enc.volumeBytes() / 1e6 / (enc.nanos() / 1e9);

                StripeMap map = raid.cluster().stripeMap(volume);
                StripeMap.Block lost = map.stripes().get(0).blocks().get(0);
                int storeIndex = cluster.storeIndex(raid.cluster().stores().get(lost.store()).address());
                cluster.store(storeIndex).store().blocks().delete(lost.name());
                BlockFixer fixer = new BlockFixer(raid.cluster(), config);
                var damage = fixer.scan().stream().filter(d -> d.volume() == map.volume()).toList();
                long t0 = System.nanoTime();
                long read = fixer.repair(damage.get(0));
                double repairMs = (System.nanoTime() - t0) / 1e6;

                // Needles in data block 0 after the repair: healthy, then with that block's store stopped.
                StripeMap repaired = raid.cluster().stripeMap(volume);
                String holder = repaired.stripes().get(0).blocks().get(0).store();
                List<PutResult> inBlock0 = new ArrayList<>();
                for (PutResult p : puts) {
                    inBlock0.add(p);
                    if (inBlock0.size() >= block / (64 << 10) - 2) {
                        break;
                    }
                }
                Histogram healthy = new Histogram(3);
                Histogram degraded = new Histogram(3);
                long degradedPieces;
                try (ColdReader reader = new ColdReader(raid.cluster())) {
                    sample(reader, inBlock0, healthy, reads);
                    stopped = cluster.storeIndex(raid.cluster().stores().get(holder).address());
                    cluster.stopStore(stopped);
                    sample(reader, inBlock0, degraded, reads);
                    degradedPieces = reader.degradedReads();
                }
                System.out.printf(Locale.ROOT, "%s: %d of %d sampled reads went degraded%n", codec, degradedPieces, reads);
                System.out.printf(Locale.ROOT, "%-10s %10.1f %12d %12.0f %10.2f %10.2f %10.2f %10.2f %10.2f%n", codec,
                        encodeMbps, read, repairMs, healthy.getValueAtPercentile(50) / 1e3, healthy.getValueAtPercentile(99) / 1e3,
                        degraded.getValueAtPercentile(50) / 1e3, degraded.getValueAtPercentile(99) / 1e3,
                        (double) degraded.getValueAtPercentile(99) / healthy.getValueAtPercentile(99));
            }
        }
        return 0;
    }

    private static void sample(ColdReader reader, List<PutResult> photos, Histogram h, int n) throws Exception {
        for (int i = 0; i < n; i++) {
            PutResult p = photos.get(i % photos.size());
            long t0 = System.nanoTime();
            if (reader.get(p.id().key(), p.id().alt()) == null) {
                throw new IllegalStateException("photo " + p.id() + " not found");
            }
            h.recordValue((System.nanoTime() - t0) / 1000);
        }
    }
}
