package io.hayloft.bench.raid;

import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.common.wire.Wire;
import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import io.hayloft.raid.EncodeJob;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.ThreadPoolRunner;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code hayloft bench encode}: end-to-end encode throughput of one volume (seal, copy from a replica
 * over HTTP, spool, parity, upload k + r blocks with CRC32C, needle index, verify, commit, drop the
 * replicas) on an embedded cluster of 15 stores, for each block size and number of workers (stripes
 * of the volume in parallel), next to the codec's own in-memory encode throughput measured in the same
 * run. MB/s are volume bytes (10^6) per second. Not thread-safe; one run per process.
 */
@Command(name = "encode", mixinStandardHelpOptions = true,
        description = "Raid-node encode throughput end to end (MB/s) vs the codec's own, by block size and workers.")
public final class EncodeThroughput implements Callable<Integer> {

    @Option(names = "--block-mib", defaultValue = "4,64", split = ",", description = "block sizes in MiB (default ${DEFAULT-VALUE})")
    List<Integer> blockMib;
    @Option(names = "--workers", defaultValue = "1,2", split = ",", description = "worker counts (default ${DEFAULT-VALUE})")
    List<Integer> workers;
    @Option(names = "--stripes", defaultValue = "4", description = "stripes per volume (default ${DEFAULT-VALUE})")
    int stripes;
    @Option(names = "--codec", defaultValue = "hh-xor+", description = "codec (default ${DEFAULT-VALUE})")
    String codec;
    @Option(names = "--photo-mib", defaultValue = "4", description = "photo size in MiB (default ${DEFAULT-VALUE})")
    int photoMib;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @Override
    public Integer call() throws Exception {
        Path dir = Files.createTempDirectory("hayloft-encode-bench");
        int k = 10;
        int r = 4;
        System.out.printf(Locale.ROOT, "%-9s %5s %7s %9s %8s %10s %11s %11s %7s%n", "block MiB", "work", "stripes", "volume MB",
                "secs", "e2e MB/s", "codec MB/s", "stream MB/s", "e2e/codec");
        try (EmbeddedCluster cluster = EmbeddedCluster.start(ClusterOptions.of(dir.resolve("c")).withStores(15, 15)
                .withReplication(3).withVolumeLimit(8L << 30).withTiming(1000, 500, 3).withFsync(false))) {
            for (int mib : blockMib) {
                long block = (long) mib << 20;
                double codecMbps = codecThroughput(CodecKind.fromWireName(codec), k, r, false);
                double streamMbps = codecThroughput(CodecKind.fromWireName(codec), k, r, true);
                for (int w : workers) {
                    int volume = fill(cluster, (long) stripes * k * block);
                    RaidConfig config = new RaidConfig();
                    config.directory = cluster.directoryAddress();
                    config.codec = codec;
                    config.k = k;
                    config.r = r;
                    config.blockSize = block;
                    config.workers = w;
                    config.spoolDir = dir.toString();
                    try (ThreadPoolRunner runner = new ThreadPoolRunner(w)) {
                        EncodeJob.Result res = new RaidNode(config, runner).encode(volume);
                        double secs = res.nanos() / 1e9;
                        double mbps = res.volumeBytes() / 1e6 / secs;
                        System.out.printf(Locale.ROOT, "%-9d %5d %7d %9.0f %8.2f %10.1f %11.1f %11.1f %7.4f%n", mib, w, res.stripes(),
                                res.volumeBytes() / 1e6, secs, mbps, codecMbps, streamMbps, mbps / codecMbps);
                    }
                }
            }
        }
        io.hayloft.common.io.FileTrees.delete(dir);
        return 0;
    }

    /**
     * Writes as many photos as fit in {@code bytes} of volume file (superblock and needle framing
     * included) into one new volume of the cluster; marks it read-only.
     */
    private int fill(EmbeddedCluster cluster, long bytes) throws Exception {
        byte[] data = new byte[photoMib << 20];
        new Random(1).nextBytes(data);
        long photos = (bytes - 32) / ((long) data.length + 40);
        int volume = -1;
        List<String> replicas = null;
        long written = 0;
        while (written < photos) {
            Wire.Lease a = cluster.directory().directory().hotPath().lease(
                    new Wire.LeaseRequest((int) Math.min(8, photos - written), List.of()));
            if (volume < 0) {
                volume = a.volume();
                replicas = a.replicas();
            }
            if (a.volume() != volume) {
                continue;
            }
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            DataOutputStream batch = new DataOutputStream(buf);
            for (long key = a.first(); key < a.first() + a.count(); key++) {
                batch.writeLong(key);
                batch.writeLong(key * 0x9E3779B97F4A7C15L); // the writer's cookie: the directory keeps none
                batch.writeInt(0);
                batch.writeInt(data.length);
                batch.write(data);
                written++;
            }
            for (String replica : replicas) {
                HttpRequest req = HttpRequest.newBuilder(URI.create("http://" + replica + "/" + volume + "/batch"))
                        .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.ofByteArray(buf.toByteArray())).build();
                int code = http.send(req, HttpResponse.BodyHandlers.discarding()).statusCode();
                if (code != 201) {
                    throw new IllegalStateException("batch write to " + replica + " answered " + code);
                }
            }
        }
        cluster.directory().directory().markReadOnly(volume, "encode bench");
        return volume;
    }

    /**
     * The codec alone, one thread, data MB/s: k in-memory 4 MiB units into r parity units, through the
     * in-memory API or ({@code streaming}) the streaming API the encoder uses (chunked reader/writer).
     */
    static double codecThroughput(CodecKind kind, int k, int r, boolean streaming) {
        int unit = 4 << 20;
        ByteBuffer[] units = new ByteBuffer[k + r];
        Random random = new Random(3);
        for (int u = 0; u < k + r; u++) {
            byte[] b = new byte[unit];
            if (u < k) {
                random.nextBytes(b);
            }
            units[u] = ByteBuffer.wrap(b);
        }
        try (ErasureCodec c = ErasureCodec.create(kind, k, r)) {
            ByteBuffer[] data = java.util.Arrays.copyOfRange(units, 0, k);
            ByteBuffer[] parity = java.util.Arrays.copyOfRange(units, k, k + r);
            Runnable once = streaming ? () -> encode(c, units, unit) : () -> c.encode(data, parity);
            long w0 = System.nanoTime();
            while (System.nanoTime() - w0 < 1_000_000_000L) { // warm-up
                once.run();
            }
            long t0 = System.nanoTime();
            int rounds = 0;
            while (System.nanoTime() - t0 < 2_000_000_000L) {
                once.run();
                rounds++;
            }
            return (double) rounds * k * unit / 1e6 / ((System.nanoTime() - t0) / 1e9);
        }
    }

    private static void encode(ErasureCodec c, ByteBuffer[] units, int unit) {
        try {
            c.encode(unit, (u, off, dst) -> dst.put(units[u].duplicate().position((int) off).limit((int) off + dst.remaining())),
                    (u, off, src) -> units[u].duplicate().position((int) off).put(src));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
