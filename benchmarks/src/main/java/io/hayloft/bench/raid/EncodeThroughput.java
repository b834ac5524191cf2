package io.hayloft.bench.raid;

import io.hayloft.bench.Machine;
import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.store.NeedleData;
import io.hayloft.cold.ClusterReads;
import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import io.hayloft.format.wire.BatchBody;
import io.hayloft.format.wire.VolumeIndex;
import io.hayloft.format.wire.Wire;
import io.hayloft.raid.Cluster;
import io.hayloft.raid.EncodeJob;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.ThreadPoolRunner;
import io.hayloft.serverkit.io.Disk;
import io.hayloft.serverkit.io.FileTrees;
import io.hayloft.serverkit.io.ForwardingDisk;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code hayloft bench encode}: end-to-end encode throughput of one volume (seal, stripes encoded, needle
 * index, verify, commit, drop the replicas) on an embedded cluster of 15 stores, for each codec, block
 * size, number of workers (stripes of the volume in parallel) and place of encoding ({@code --encode-at}:
 * {@code store}, a replica holder reads its own file and sends the blocks; {@code raid-node}, the
 * raid-node fetches the volume over HTTP, spools it, computes parity and uploads every block), next to
 * the codec's own in-memory encode throughput measured in the same run. Per encode it reports the
 * network bytes per volume byte: {@code in/B} the bytes every server of the cluster received
 * ({@code hayloft_http_received_bytes_total} deltas on the stores and the directory), {@code out/B}
 * what they sent (the replica reads of the raid-node path; on the store path only the index check,
 * the block listings of the verification and JSON answers). With {@code --dd} it first reads the
 * volume file of a replica with {@code dd iflag=direct} (past the page cache, no root needed) to show
 * what the disk reads. MB/s are volume bytes (10^6) per second.
 *
 * <p>How each volume is filled ({@code --fill}): {@code sequential} (the default) writes batches of
 * photos to one replica after the other from one thread, so the replicas are byte-identical;
 * {@code concurrent} puts the same photos through a {@link HayloftClient} from {@code --writers}
 * threads at once, so each replica holds them in the order its store received them, as a volume written
 * by many clients does (issue 24); the {@code replicas} column says whether the replicas' needle orders
 * differ. Either way the directory keeps one writable volume at a time ({@code minWritableVolumes 1}),
 * so every photo of a fill lands in the one volume then encoded. Not thread-safe; one run per process.
 */
@Command(name = "encode", mixinStandardHelpOptions = true,
        description = {"Encode throughput end to end (MB/s) vs the codec's own, by codec, block size, workers and place of",
                "encoding, with the network bytes per volume byte; e.g. the issue-15 run:",
                "  hayloft bench encode --volume-mib 1024 --codec rs,hh-xor+ --encode-at store,raid-node --block-mib 16 --workers 4 --dd",
                "and issue 24's, volumes filled one after the other and by 8 concurrent writers, stores fsyncing:",
                "  hayloft bench encode --volume-mib 1024 --codec rs,hh-xor+ --encode-at store,raid-node --block-mib 16 --workers 4 \\",
                "    --fill sequential,concurrent --writers 8 --fsync --rounds 3 --warmup-mib 1024"})
public final class EncodeThroughput implements Callable<Integer> {

    @Option(names = "--block-mib", defaultValue = "4,64", split = ",", description = "block sizes in MiB (default ${DEFAULT-VALUE})")
    List<Integer> blockMib;
    @Option(names = "--workers", defaultValue = "1,2", split = ",", description = "worker counts (default ${DEFAULT-VALUE})")
    List<Integer> workers;
    @Option(names = "--stripes", defaultValue = "4", description = "stripes per volume when --volume-mib is 0 (default ${DEFAULT-VALUE})")
    int stripes;
    @Option(names = "--volume-mib", defaultValue = "0", description = "volume size in MiB (0: --stripes full stripes) (default ${DEFAULT-VALUE})")
    long volumeMib;
    @Option(names = "--codec", defaultValue = "hh-xor+", split = ",", description = "codecs (default ${DEFAULT-VALUE})")
    List<String> codecs;
    @Option(names = "--encode-at", defaultValue = "store", split = ",",
            description = "where stripes are encoded: store, raid-node or both (default ${DEFAULT-VALUE})")
    List<String> encodeAt;
    @Option(names = "--photo-mib", defaultValue = "4", description = "photo size in MiB (default ${DEFAULT-VALUE})")
    int photoMib;
    @Option(names = "--dd", description = "read each volume file once with dd iflag=direct before encoding it (the disk's read speed), "
            + "and write (k + r) / k of its size with dd conv=fsync (the disk's durable write speed: an encode writes that much)")
    boolean dd;
    @Option(names = "--fsync", description = "stores fsync their writes (as in production: an encode's blocks are then durable "
            + "before the replicas are dropped); default off")
    boolean fsync;
    @Option(names = "--rounds", defaultValue = "1",
            description = "measure every row this many times, the codecs taking turns, and end with each row's median (default ${DEFAULT-VALUE}): "
                    + "single encodes on this shared machine vary by a fifth")
    int rounds;
    @Option(names = "--warmup-mib", defaultValue = "0",
            description = "before measuring, encode one untimed volume of this many MiB per codec and encode-at, so that the first "
                    + "measured row does not pay the JIT's compilation (default ${DEFAULT-VALUE}: none)")
    long warmupMib;
    @Option(names = "--block-writes", defaultValue = "direct", split = ",",
            description = "how the stores write blocks: direct (around the page cache where the file system allows, the default "
                    + "of directBlockWrites) or buffered (through it); both: rows of each on the same cluster (default ${DEFAULT-VALUE})")
    List<String> blockWrites;
    @Option(names = "--fill", defaultValue = "sequential", split = ",",
            description = "how each volume is filled: sequential (batches to one replica after the other, one thread: identical "
                    + "replicas) or concurrent (puts through the client from --writers threads: the replicas hold the photos in "
                    + "different orders); both: rows of each on the same cluster (default ${DEFAULT-VALUE})")
    List<String> fills;
    @Option(names = "--writers", defaultValue = "8", description = "threads putting at once in a concurrent fill (default ${DEFAULT-VALUE})")
    int writers;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @Override
    public Integer call() throws Exception {
        if (rounds < 1 || warmupMib < 0) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this),
                    "--rounds must be >= 1 and --warmup-mib >= 0, got " + rounds + " and " + warmupMib);
        }
        for (String f : fills) {
            if (!f.equals("sequential") && !f.equals("concurrent")) {
                throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this),
                        "--fill takes sequential or concurrent, got '" + f + "'");
            }
        }
        if (writers < 1) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this), "--writers must be >= 1, got " + writers);
        }
        for (String w : blockWrites) {
            if (!w.equals("direct") && !w.equals("buffered")) {
                throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this),
                        "--block-writes takes direct or buffered, got '" + w + "'");
            }
        }
        // the stores' disk: Disk.REAL, with writes around the page cache while the row's mode is direct
        AtomicBoolean buffered = new AtomicBoolean();
        Disk disk = new ForwardingDisk(Disk.REAL) {
            @Override
            public Direct openDirect(Path file) throws IOException {
                return buffered.get() ? null : super.openDirect(file);
            }
        };
        Path dir = Files.createTempDirectory("hayloft-encode-bench");
        int k = 10;
        int r = 4;
        System.out.printf(Locale.ROOT, "%-8s %-9s %-8s %-10s %-8s %-9s %4s %7s %9s %8s %9s %7s %7s %8s %9s %10s %11s %9s%n", "codec", "at",
                "blocks", "fill", "replicas", "block MiB",
                "work", "stripes", "volume MB", "secs", "e2e MB/s", "in/B", "out/B", "dd MB/s", "ddw MB/s", "codec MB/s", "stream MB/s",
                "e2e/codec");
        try (EmbeddedCluster cluster = EmbeddedCluster.start(ClusterOptions.of(dir.resolve("c")).withStores(15, 15)
                .withReplication(3).withVolumeLimit(8L << 30).withTiming(1000, 500, 3).withFsync(fsync),
                i -> disk, c -> c.minWritableVolumes = 1)) {
            Map<String, double[]> codecRates = new HashMap<>();
            for (String codec : codecs) {
                if (!codecRates.containsKey(codec)) {
                    codecRates.put(codec, new double[] {codecThroughput(CodecKind.fromWireName(codec), k, r, false),
                            codecThroughput(CodecKind.fromWireName(codec), k, r, true)});
                }
            }
            if (warmupMib > 0) {
                for (String codec : new LinkedHashSet<>(codecs)) {
                    for (String at : new LinkedHashSet<>(encodeAt)) {
                        int volume = fill(cluster, fills.get(0), warmupMib << 20);
                        try (ThreadPoolRunner runner = new ThreadPoolRunner(workers.get(0))) {
                            new RaidNode(config(cluster, dir, codec, k, r, (long) blockMib.get(0) << 20, workers.get(0), at), runner).encode(volume);
                        }
                        System.out.printf(Locale.ROOT, "# warm-up: %s at %s, %d MiB volume, not measured%n", codec, at, warmupMib);
                    }
                }
            }
            Map<String, List<Double>> byRow = new LinkedHashMap<>();
            for (int round = 1; round <= rounds; round++) {
                for (String codec : codecs) {
                    double codecMbps = codecRates.get(codec)[0];
                    double streamMbps = codecRates.get(codec)[1];
                    for (int mib : blockMib) {
                        long block = (long) mib << 20;
                        for (int w : workers) {
                            for (String at : encodeAt) {
                              for (String writes : blockWrites) {
                               for (String how : fills) {
                                buffered.set(writes.equals("buffered"));
                                int volume = fill(cluster, how, volumeMib > 0 ? volumeMib << 20 : (long) stripes * k * block);
                                String order = replicaOrder(cluster, volume);
                                double ddMbps = dd ? dd(cluster, volume) : Double.NaN;
                                double ddWriteMbps = dd ? ddWrite(dir, (long) Math.ceil(volumeBytes(cluster, volume) * (k + r) / (double) k)) : Double.NaN;
                                Machine.sync(); // the fill's dirty pages on disk before the clock starts, as a sealed volume's are
                                long[] before = networkBytes(cluster);
                                try (ThreadPoolRunner runner = new ThreadPoolRunner(w)) {
                                    EncodeJob.Result res = new RaidNode(config(cluster, dir, codec, k, r, block, w, at), runner).encode(volume);
                                    long[] after = networkBytes(cluster);
                                    double secs = res.nanos() / 1e9;
                                    double mbps = res.volumeBytes() / 1e6 / secs;
                                    double vb = Math.max(1, res.volumeBytes());
                                    System.out.printf(Locale.ROOT,
                                            "%-8s %-9s %-8s %-10s %-8s %-9d %4d %7d %9.0f %8.2f %9.1f %7.3f %7.3f %8s %9s %10.1f %11.1f %9.4f%n",
                                            codec, at, writes, how, order, mib, w, res.stripes(), res.volumeBytes() / 1e6, secs, mbps,
                                            (after[0] - before[0]) / vb, (after[1] - before[1]) / vb,
                                            Double.isNaN(ddMbps) ? "-" : String.format(Locale.ROOT, "%.1f", ddMbps),
                                            Double.isNaN(ddWriteMbps) ? "-" : String.format(Locale.ROOT, "%.1f", ddWriteMbps), codecMbps, streamMbps,
                                            mbps / codecMbps);
                                    byRow.computeIfAbsent(String.format(Locale.ROOT, "%-8s %-9s %-8s %-10s %-9d %4d", codec, at, writes, how,
                                            mib, w), x -> new ArrayList<>()).add(mbps);
                                }
                               }
                              }
                            }
                        }
                    }
                }
            }
            if (rounds > 1 || byRow.values().stream().anyMatch(l -> l.size() > 1)) {
                System.out.printf(Locale.ROOT, "# median end-to-end MB/s per row, with every measurement%n");
                for (Map.Entry<String, List<Double>> e : byRow.entrySet()) {
                    List<Double> v = new ArrayList<>(e.getValue());
                    Collections.sort(v);
                    int n = v.size();
                    double median = n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
                    System.out.printf(Locale.ROOT, "%s  median %7.1f  of %s%n", e.getKey(), median,
                            e.getValue().stream().map(x -> String.format(Locale.ROOT, "%.1f", x)).toList());
                }
            }
        }
        FileTrees.delete(dir);
        return 0;
    }

    private static RaidConfig config(EmbeddedCluster cluster, Path dir, String codec, int k, int r, long block, int workers, String at) {
        RaidConfig config = new RaidConfig();
        config.directory = cluster.directoryAddress();
        config.codec = codec;
        config.k = k;
        config.r = r;
        config.blockSize = block;
        config.workers = workers;
        config.encodeAt = at;
        config.transferBytes = 8 << 20;
        config.requestTimeoutMillis = 60_000;
        config.spoolDir = dir.toString();
        return config;
    }

    /** Bytes received and sent by every server of the cluster (stores and directory), from their /metrics. */
    private long[] networkBytes(EmbeddedCluster cluster) throws Exception {
        long[] out = new long[2];
        List<String> servers = new ArrayList<>();
        servers.add(cluster.directoryAddress());
        for (int i = 0; i < cluster.storeCount(); i++) {
            servers.add(cluster.storeAddress(i));
        }
        Pattern in = Pattern.compile("(?m)^hayloft_http_received_bytes_total(?:\\{[^}]*\\})? (\\S+)$");
        Pattern sent = Pattern.compile("(?m)^hayloft_http_sent_bytes_total(?:\\{[^}]*\\})? (\\S+)$");
        for (String s : servers) {
            String text = http.send(HttpRequest.newBuilder(URI.create("http://" + s + "/metrics")).timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            Matcher a = in.matcher(text);
            Matcher b = sent.matcher(text);
            if (a.find() && b.find()) {
                out[0] += (long) Double.parseDouble(a.group(1));
                out[1] += (long) Double.parseDouble(b.group(1));
            }
        }
        return out;
    }

    /** The size of {@code volume}'s file on its first replica, or 0. */
    private static long volumeBytes(EmbeddedCluster cluster, int volume) throws Exception {
        Path dat = volumeFile(cluster, volume);
        return dat == null ? 0 : Files.size(dat);
    }

    /** {@code volume}'s file on its first replica, or null. */
    private static Path volumeFile(EmbeddedCluster cluster, int volume) throws Exception {
        for (int i = 0; i < cluster.storeCount(); i++) {
            try (Stream<Path> files = Files.walk(cluster.storeDir(i))) {
                Path dat = files.filter(p -> p.getFileName().toString().equals(volume + ".dat")).findFirst().orElse(null);
                if (dat != null) {
                    return dat;
                }
            }
        }
        return null;
    }

    /**
     * Writes {@code bytes} (rounded up to 4 MiB) of zeros to a new file in {@code dir} with
     * {@code dd bs=4M conv=fsync} and deletes it: the disk's durable write speed in MB/s, or NaN when dd fails.
     */
    private static double ddWrite(Path dir, long bytes) throws Exception {
        Machine.sync();
        Path f = dir.resolve("dd-write.tmp");
        long count = Math.max(1, (bytes + (4 << 20) - 1) >> 22);
        Process p = new ProcessBuilder("dd", "if=/dev/zero", "of=" + f, "bs=4M", "count=" + count, "conv=fsync")
                .redirectErrorStream(true).start();
        long t0 = System.nanoTime();
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int code = p.waitFor();
        double secs = (System.nanoTime() - t0) / 1e9;
        Files.deleteIfExists(f);
        if (code != 0) {
            System.err.println("dd failed: " + text.trim());
            return Double.NaN;
        }
        return (count << 22) / 1e6 / secs;
    }

    /**
     * Reads the volume file of the first replica of {@code volume} with {@code dd bs=4M iflag=direct}
     * (O_DIRECT: from the disk, not the page cache the fill left it in); MB/s, or NaN when dd fails.
     */
    private static double dd(EmbeddedCluster cluster, int volume) throws Exception {
        Path dat = volumeFile(cluster, volume);
        if (dat == null) {
            return Double.NaN;
        }
        long size = Files.size(dat);
        Process p = new ProcessBuilder("dd", "if=" + dat, "of=/dev/null", "bs=4M", "iflag=direct").redirectErrorStream(true).start();
        long t0 = System.nanoTime();
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int code = p.waitFor();
        double secs = (System.nanoTime() - t0) / 1e9;
        if (code != 0) {
            System.err.println("dd failed: " + text.trim());
            return Double.NaN;
        }
        return size / 1e6 / secs;
    }

    /**
     * Writes as many photos as fit in {@code bytes} of volume file (superblock and needle framing
     * included) into one new volume of the cluster, {@code how} ({@code sequential} or
     * {@code concurrent}); marks it read-only.
     */
    private int fill(EmbeddedCluster cluster, String how, long bytes) throws Exception {
        byte[] data = new byte[photoMib << 20];
        new Random(1).nextBytes(data);
        long photos = (bytes - 32) / ((long) data.length + 40);
        return how.equals("concurrent") ? fillConcurrently(cluster, data, photos) : fillSequentially(cluster, data, photos);
    }

    /** One thread: batches of up to 8 photos to each replica in turn (the replicas are byte-identical). */
    private int fillSequentially(EmbeddedCluster cluster, byte[] data, long photos) throws Exception {
        int volume = -1;
        List<String> replicas = null;
        long written = 0;
        while (written < photos) {
            Wire.Lease a = cluster.directory().directory().hotPath().lease(
                    new Wire.LeaseRequest((int) Math.max(1, Math.min(8, photos - written)), List.of()));
            if (volume < 0) {
                volume = a.volume();
                replicas = a.replicas();
            }
            if (a.volume() != volume) {
                continue;
            }
            List<NeedleData> needles = new ArrayList<>();
            for (long key = a.first(); key < a.first() + a.count(); key++) {
                // the writer's cookie: the directory keeps none
                needles.add(new NeedleData(key, 0, key * 0x9E3779B97F4A7C15L, data));
                written++;
            }
            byte[] body = BatchBody.encode(needles);
            for (String replica : replicas) {
                HttpRequest req = HttpRequest.newBuilder(URI.create("http://" + replica + "/" + volume + "/batch"))
                        .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
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
     * {@link #writers} threads putting {@code photos} photos at once through one {@link HayloftClient}
     * (each photo its own put, written to the three replicas in parallel): each replica holds them in
     * the order its store took them. The directory has one writable volume, so all land in it.
     */
    private int fillConcurrently(EmbeddedCluster cluster, byte[] data, long photos) throws Exception {
        AtomicLong next = new AtomicLong();
        Set<Integer> volumes = ConcurrentHashMap.newKeySet();
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try (HayloftClient client = cluster.clientBuilder().requestTimeout(Duration.ofSeconds(60)).build()) {
            List<Future<?>> running = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                running.add(pool.submit(() -> {
                    while (next.getAndIncrement() < photos) {
                        volumes.add(client.put(data).id().volume());
                    }
                    return null;
                }));
            }
            for (Future<?> f : running) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        if (volumes.size() != 1) {
            throw new IllegalStateException("a concurrent fill of " + photos + " photos landed in volumes " + volumes
                    + ", not in one (the directory must keep one writable volume)");
        }
        int volume = volumes.iterator().next();
        cluster.directory().directory().markReadOnly(volume, "encode bench");
        return volume;
    }

    /**
     * {@code same} when every replica of {@code volume} holds each live needle at the same offset
     * (compared through each store's own index), else {@code differs}; not timed.
     */
    private static String replicaOrder(EmbeddedCluster cluster, int volume) throws Exception {
        Cluster http = new Cluster(cluster.directoryAddress(), cluster.options().adminToken(),
                Duration.ofSeconds(60));
        Map<String, ClusterReads.StoreRef> stores = http.stores();
        List<VolumeIndex> indexes = new ArrayList<>();
        for (String id : http.volume(volume).replicas()) {
            indexes.add(http.volumeIndex(stores.get(id).address(), volume));
        }
        for (VolumeIndex other : indexes.subList(1, indexes.size())) {
            for (VolumeIndex.Entry e : indexes.get(0).entries()) {
                VolumeIndex.Entry o = other.find(e.key(), e.alt());
                if (!e.deleted() && (o == null || o.offset() != e.offset())) {
                    return "differs";
                }
            }
        }
        return "same";
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
            ByteBuffer[] data = Arrays.copyOfRange(units, 0, k);
            ByteBuffer[] parity = Arrays.copyOfRange(units, k, k + r);
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
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
