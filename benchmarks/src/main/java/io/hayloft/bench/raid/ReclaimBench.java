package io.hayloft.bench.raid;

import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.raid.EncodeJob;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.ReclaimJob;
import io.hayloft.raid.ThreadPoolRunner;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code hayloft bench reclaim}: on an embedded cluster of 15 stores, one volume of 64 KiB needles
 * written through the client and encoded; then, per dead fraction, client deletes up to that
 * fraction and a reclaim: its time, live MB/s copied and re-encoded, and block bytes before and after,
 * side by side with the encode of the same volume. Results go to stdout as a table. Single-threaded.
 */
@Command(name = "reclaim", mixinStandardHelpOptions = true, description = "Cold tier: reclaim time and space freed.")
public final class ReclaimBench implements Callable<Integer> {

    @Option(names = "--block-mib", defaultValue = "4", description = "block size in MiB (default ${DEFAULT-VALUE})")
    int blockMib;
    @Option(names = "--dead", defaultValue = "0.35,0.6", split = ",", description = "dead fractions, one reclaim each, ascending")
    List<Double> dead;

    @Override
    public Integer call() throws Exception {
        Path dir = Files.createTempDirectory("hayloft-reclaim-bench");
        long block = (long) blockMib << 20;
        try (EmbeddedCluster cluster = EmbeddedCluster.start(ClusterOptions.of(dir.resolve("c")).withStores(15, 15)
                .withReplication(3).withVolumeLimit(4L << 30).withTiming(1000, 500, 3).withFsync(false));
             HayloftClient client = cluster.newClient();
             ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            Random random = new Random(1);
            List<PutResult> puts = new ArrayList<>();
            byte[] data = new byte[64 << 10];
            int volume = -1;
            long written = 0;
            while (written < 20 * block) {
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
            config.blockSize = block;
            config.spoolDir = dir.toString();
            RaidNode raid = new RaidNode(config, runner);
            EncodeJob.Result enc = raid.encode(volume);
            double encodeMbps = enc.volumeBytes() / 1e6 / (enc.nanos() / 1e9);
            System.out.printf(Locale.ROOT, "encode: %d bytes, %d stripes, %.1f MB/s end to end%n", enc.volumeBytes(),
                    enc.stripes(), encodeMbps);
            System.out.printf(Locale.ROOT, "%-6s %12s %12s %8s %14s %14s %10s %12s %14s%n", "dead", "volume B", "live B",
                    "stripes", "block B before", "block B after", "reclaim s", "live MB/s", "vs encode MB/s");
            int deleted = 0;
            for (double target : dead) {
                while (deleted < puts.size() * target) {
                    client.delete(puts.get(deleted++).id());
                }
                StripeMap before = raid.cluster().stripeMap(volume);
                ReclaimJob.Result r = raid.reclaim(volume, 0);
                StripeMap after = raid.cluster().stripeMap(volume);
                double secs = r.nanos() / 1e9;
                double liveMbps = r.before().liveBytes() / 1e6 / secs;
                System.out.printf(Locale.ROOT, "%-6.2f %12d %12d %4d→%-3d %14d %14d %10.2f %12.1f %14.2f%n",
                        r.before().deadFraction(), r.before().volumeBytes(), r.before().liveBytes(), before.stripes().size(),
                        after.stripes().size(), blockBytes(before), blockBytes(after), secs, liveMbps, liveMbps / encodeMbps);
            }
        }
        return 0;
    }

    private static long blockBytes(StripeMap m) {
        return m.allBlocks().stream().mapToLong(StripeMap.Block::length).sum();
    }
}
