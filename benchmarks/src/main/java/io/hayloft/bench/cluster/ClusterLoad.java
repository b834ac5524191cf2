package io.hayloft.bench.cluster;

import com.sun.management.OperatingSystemMXBean;
import io.hayloft.bench.Machine;
import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.client.DirectoryClient;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.client.store.StoreClient;
import io.hayloft.client.store.StoreException;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.serverkit.io.FileTrees;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.apache.hc.client5.http.async.methods.SimpleHttpResponse;
import org.apache.hc.client5.http.async.methods.SimpleRequestBuilder;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManagerBuilder;
import org.apache.hc.core5.http2.HttpVersionPolicy;
import org.apache.hc.core5.reactor.IOReactorConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * {@code hayloft bench cluster}: end-to-end throughput through {@link HayloftClient}, on an
 * {@link EmbeddedCluster} (a directory and 3 stores on loopback in this JVM, 3 replicas) or, with
 * {@code --directory}, on a running cluster (e.g. separate processes: {@code benchmarks/cluster-processes.sh}).
 *
 * <p>Per object size (1 KiB and 64 KiB): single puts through the client (coalesced, the client's
 * default, and through a second client with coalescing off) against one store's own
 * single-write rate in the same run ({@link StoreClient#write} of new keys on one store, no
 * directory), batched puts, then a working set of {@code --keys} objects put in batches, and gets of
 * uniformly random ids of that set through the client; the same ids read with
 * {@link StoreClient#read} straight from one store (no directory, no volume map: the transport's own
 * ceiling); and, with {@code --wrk} (when {@code wrk} is on the PATH), the store's own read rate
 * under wrk, a C load tool, with the same number of connections and the same object set (the URLs of
 * the working set's objects on that store, picked at random by a Lua script). Each scenario is a
 * closed loop of {@code --concurrency} operations in flight ({@code --batch-concurrency} for batched
 * puts) for {@code --seconds}; it reports objects per second, MiB per second of payload, the latency
 * of one operation (a batch counts as one) and the directory's requests per 1,000 operations (from
 * its {@code GET /metrics}, {@code hayloft_directory_requests_seconds_count}, stores' heartbeats and
 * the scrape itself left out). All scenarios run in one process, one after the other, so the ratios
 * between them are what to compare on a shared machine.
 *
 * <p>Not thread-safe (one run).
 */
@Command(name = "cluster", mixinStandardHelpOptions = true,
        description = "End-to-end put/get throughput through the client against a store's own rate (StoreClient, wrk).")
public final class ClusterLoad implements Callable<Integer> {
    /** Directory operations that are not the client's doing: stores' heartbeats and the metrics scrape. */
    private static final List<String> BACKGROUND = List.of("heartbeat", "metrics");
    private static final Pattern COUNT = Pattern.compile(
            "^hayloft_directory_requests_seconds_count\\{(.*)\\}\\s+([0-9.eE+-]+)\\s*$");
    private static final Pattern OP = Pattern.compile("op=\"([^\"]*)\"");

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** Single puts with coalescing off, for the side-by-side row; null with {@code --coalesce 0}. */
    private HayloftClient uncoalesced;

    @Option(names = "--seconds", defaultValue = "8", description = "Duration of each scenario (default ${DEFAULT-VALUE}).")
    double seconds;

    @Option(names = "--warmup", defaultValue = "15", description = "Warm-up seconds before each scenario (default ${DEFAULT-VALUE}; the client's JIT needs 10-20 s: with 2 s a 1 KiB get measured a third of its warm rate).")
    double warmup;

    @Option(names = "--concurrency", defaultValue = "16", description = "Operations in flight, and wrk's connections (default ${DEFAULT-VALUE}).")
    int concurrency;

    @Option(names = "--batch", defaultValue = "64", description = "Objects per batched put (default ${DEFAULT-VALUE}).")
    int batch;

    @Option(names = "--batch-concurrency", defaultValue = "4", description = "Batched puts in flight (default ${DEFAULT-VALUE}).")
    int batchConcurrency;

    @Option(names = "--no-fsync", description = "Embedded stores do not fsync before acknowledging (with --directory: the stores' own setting).")
    boolean noFsync;

    @Option(names = "--dir", description = "Embedded cluster data directory (default: a temp dir, removed).")
    Path dir;

    @Option(names = "--directory", paramLabel = "HOST:PORT",
            description = "Load this running cluster instead of an embedded one (it must be open: no cluster secret).")
    String directoryAddress;

    @Option(names = "--keys", defaultValue = "20000",
            description = "Working set of 1 KiB objects for gets, put before them (default ${DEFAULT-VALUE}).")
    int keys;

    @Option(names = "--large-keys", defaultValue = "4000",
            description = "Working set of 64 KiB objects for gets (default ${DEFAULT-VALUE}).")
    int largeKeys;

    @Option(names = "--sizes", split = ",", defaultValue = "1024,65536", description = "Object sizes (default ${DEFAULT-VALUE}).")
    List<Integer> sizes;

    @Option(names = "--wrk", description = "Also measure one store's read rate with wrk (must be on the PATH) on the same objects.")
    boolean wrk;

    @Option(names = "--reads-only", description = "Skip the put scenarios (the working set is still put first).")
    boolean readsOnly;

    @Option(names = "--passes", defaultValue = "1",
            description = "Run every scenario this many times and report the last pass (default ${DEFAULT-VALUE}; 2 warms the JIT "
                    + "for all scenarios before any is measured: otherwise the first scenario, the single put, also pays the compilation of the shared code).")
    int passes;

    @Option(names = "--rounds", defaultValue = "1",
            description = "Measured passes after the warm-up ones (default ${DEFAULT-VALUE}). With more than one, each round's table is "
                    + "printed, then every scenario's median round and every ratio's median with its range: the machine's page-cache "
                    + "writeback moves single rounds by a third.")
    int rounds;

    @Option(names = "--coalesce", defaultValue = "2",
            description = "The client's coalescePuts: combined writes in flight for small puts (default ${DEFAULT-VALUE}, the client's "
                    + "default). Unless 0, single puts are also measured through a second client with coalescing off (one request per "
                    + "replica per put), in the same round.")
    int coalesce;

    @Option(names = "--no-batched", description = "Skip the batched puts (64 KiB batches write about 1 GB/s: several rounds of them fill a disk).")
    boolean noBatched;

    @Option(names = "--writes-only", description = "Only the put scenarios (no working set, no gets, no wrk).")
    boolean writesOnly;

    @Option(names = "--transport", description = "Also read the same objects from the same store with other HTTP clients: "
            + "java.net.http's blocking send (one thread per request in flight) and Apache HttpClient 5 async (HTTP/1.1).")
    boolean transport;

    @Option(names = "--no-client-get", description = "Skip the gets through HayloftClient (transport measurements only).")
    boolean noClientGet;

    /** One result line; {@code dirCalls} is NaN when not measured. */
    record Row(String name, double objectsPerSecond, double mibPerSecond, double p50, double p99, double dirCalls,
                       String directoryOps, double jvmCpuMicros, double toolCpuMicros, double ratio) {
        Row(String name, double objectsPerSecond, double mibPerSecond, double p50, double p99, double dirCalls, String directoryOps,
            double jvmCpuMicros, double toolCpuMicros) {
            this(name, objectsPerSecond, mibPerSecond, p50, p99, dirCalls, directoryOps, jvmCpuMicros, toolCpuMicros, Double.NaN);
        }

        Row(String name, double objectsPerSecond, double mibPerSecond, double p50, double p99, double dirCalls, String directoryOps) {
            this(name, objectsPerSecond, mibPerSecond, p50, p99, dirCalls, directoryOps, Double.NaN, Double.NaN);
        }

        boolean isRatio() {
            return !Double.isNaN(ratio);
        }
    }

    /** CPU time of this JVM so far, in nanoseconds (every thread: with an embedded cluster, the stores' too). */
    private static long jvmCpuNanos() {
        return ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        if (keys < 1 || largeKeys < 1 || concurrency < 1 || batch < 1 || batchConcurrency < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--keys, --large-keys, --concurrency, --batch and --batch-concurrency must be >= 1");
        }
        for (int s : sizes) {
            if (s < 0) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--sizes must be >= 0, got " + s);
            }
        }
        if (passes < 1 || rounds < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--passes and --rounds must be >= 1, got " + passes + " and " + rounds);
        }
        if (wrk && !onPath("wrk")) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--wrk: no wrk on the PATH (apt-get install wrk)");
        }
        boolean embedded = directoryAddress == null;
        boolean temp = embedded && dir == null;
        Path work = !embedded ? null : temp ? Files.createTempDirectory("hayloft-bench-cluster") : Files.createDirectories(dir);
        List<List<Row>> perRound = new ArrayList<>();
        EmbeddedCluster cluster = null;
        try {
            if (embedded) {
                cluster = EmbeddedCluster.start(ClusterOptions.of(work).withStores(3, 3)
                        .withFsync(!noFsync).withDirectoryPort(0).withVolumeLimit(4L << 30));
            }
            String dirAddr = embedded ? cluster.directoryAddress() : directoryAddress;
            HttpTransport http = HttpTransport.builder().requestTimeout(Duration.ofSeconds(30)).build();
            StoreClient stores = new StoreClient(http);
            DirectoryClient directory = new DirectoryClient(http, List.of(dirAddr.split(",")), null);
            try (HayloftClient client = HayloftClient.builder().directory(dirAddr).requestTimeout(Duration.ofSeconds(30))
                    .coalescePuts(coalesce).build();
                 HayloftClient alone = coalesce == 0 ? null
                         : HayloftClient.builder().directory(dirAddr).requestTimeout(Duration.ofSeconds(30)).coalescePuts(0).build()) {
                uncoalesced = alone;
                for (int pass = 1; pass < passes; pass++) { // warm-up passes: every scenario once, figures dropped
                    for (int size : sizes) {
                        size(size, client, stores, directory, dirAddr);
                    }
                }
                for (int round = 1; round <= rounds; round++) {
                    List<Row> these = new ArrayList<>();
                    for (int size : sizes) {
                        these.addAll(size(size, client, stores, directory, dirAddr));
                    }
                    if (rounds > 1) {
                        print(out, "round " + round + " of " + rounds, these);
                    }
                    perRound.add(these);
                }
            }
        } finally {
            if (cluster != null) {
                cluster.close();
            }
            if (temp) {
                FileTrees.delete(work);
            }
        }
        print(out, rounds > 1 ? "median of " + rounds + " rounds (a scenario's median round; a ratio's median, range in brackets)" : null,
                medians(perRound));
        return 0;
    }

    private void print(PrintWriter out, String title, List<Row> rows) {
        if (title != null) {
            out.println("# " + title);
        }
        out.printf(Locale.ROOT, "%-40s %11s %9s %9s %9s %10s %10s %12s  %s%n", "scenario (" + concurrency + "/" + batchConcurrency + " in flight)",
                "objects/s", "MiB/s", "p50 ms", "p99 ms", "jvm us/op", "wrk us/op", "dir/1k ops", "directory ops");
        for (Row r : rows) {
            if (r.isRatio()) {
                out.printf(Locale.ROOT, "%s = %.2f%s%n", r.name(), r.ratio(), r.directoryOps());
                continue;
            }
            out.printf(Locale.ROOT, "%-40s %11s %9s %9s %9s %10s %10s %12s  %s%n", r.name(), fmt(r.objectsPerSecond(), 0),
                    fmt(r.mibPerSecond(), 2), fmt(r.p50(), 2), fmt(r.p99(), 2), fmt(r.jvmCpuMicros(), 1), fmt(r.toolCpuMicros(), 1),
                    fmt(r.dirCalls(), 1), r.directoryOps());
        }
        out.flush();
    }

    /**
     * One table from several rounds: per scenario (matched by name and place in its round) the round with the
     * median rate, per ratio the median of its rounds' values with their range. One round is returned as it is.
     */
    static List<Row> medians(List<List<Row>> rounds) {
        if (rounds.size() == 1) {
            return rounds.get(0);
        }
        Map<String, List<Row>> byKey = new LinkedHashMap<>();
        for (List<Row> round : rounds) {
            Map<String, Integer> seen = new HashMap<>();
            for (Row r : round) {
                int n = seen.merge(r.name(), 1, Integer::sum);
                byKey.computeIfAbsent(r.name() + "#" + n, k -> new ArrayList<>()).add(r);
            }
        }
        List<Row> out = new ArrayList<>();
        for (List<Row> same : byKey.values()) {
            List<Row> sorted = new ArrayList<>(same);
            if (same.get(0).isRatio()) {
                sorted.sort(Comparator.comparingDouble(Row::ratio));
                Row m = sorted.get((sorted.size() - 1) / 2);
                String range = String.format(Locale.ROOT, " (%.2f-%.2f over %d rounds)", sorted.get(0).ratio(),
                        sorted.get(sorted.size() - 1).ratio(), sorted.size());
                out.add(new Row(m.name(), Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, range, Double.NaN, Double.NaN,
                        median(sorted.stream().mapToDouble(Row::ratio).toArray())));
            } else {
                sorted.sort(Comparator.comparingDouble(Row::objectsPerSecond));
                out.add(sorted.get((sorted.size() - 1) / 2));
            }
        }
        return out;
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static String fmt(double v, int decimals) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    private static String label(int size) {
        return size % 1024 == 0 ? size / 1024 + " KiB" : size + " B";
    }

    /** The scenarios of one object size. */
    private List<Row> size(int size, HayloftClient client, StoreClient stores, DirectoryClient directory, String dirAddr)
            throws Exception {
        String s = label(size);
        List<Row> rows = new ArrayList<>();
        Map<Integer, List<String>> places = null;
        if (!readsOnly) {
            Row put = run("put " + s, dirAddr, () -> {
                client.put(payload(size));
                return 1;
            }, size, concurrency);
            rows.add(put);
            Row alone = uncoalesced == null ? null : run("put " + s + " (one request per put)", dirAddr, () -> {
                uncoalesced.put(payload(size));
                return 1;
            }, size, concurrency);
            if (alone != null) {
                rows.add(alone);
            }
            // One store's own single-write rate: new keys far above the allocator's, on a volume it holds;
            // when that volume fills (long runs), on the next volume the client writes to.
            AtomicReference<StoreTarget> at = new AtomicReference<>(
                    storeTarget(client, directory, size));
            if (at.get() != null) {
                AtomicLong next = new AtomicLong((1L << 62) + ThreadLocalRandom.current().nextLong(1L << 40));
                Row w = run("store write " + s + " (StoreClient, 1 store)", dirAddr, () -> {
                    StoreTarget t = at.get();
                    PhotoId id = new PhotoId(t.volume(), next.getAndIncrement(), 0, ThreadLocalRandom.current().nextLong() | 1);
                    return written(stores.write(t.address(), id, payload(size), ""), at, t, client, directory, size);
                }, size, concurrency);
                rows.add(w);
                rows.add(ratio("put " + s + " / store write", put, w));
                if (alone != null) {
                    rows.add(ratio("put " + s + " (one request per put) / store write", alone, w));
                }
                // The put's transport floor: the same three StoreClient writes a put makes (one per
                // replica, in parallel), with none of the client's put logic (no lease, no plan).
                Row fan = run("store write x3 " + s + " (StoreClient, 3 replicas)", dirAddr, () -> {
                    StoreTarget t = at.get();
                    List<String> replicas = places(t.volume(), directory);
                    PhotoId id = new PhotoId(t.volume(), next.getAndIncrement(), 0, ThreadLocalRandom.current().nextLong() | 1);
                    byte[] data = payload(size);
                    List<CompletableFuture<Void>> writes = new ArrayList<>(replicas.size());
                    for (String r : replicas) {
                        writes.add(stores.write(r, id, data, ""));
                    }
                    return written(CompletableFuture.allOf(writes.toArray(new CompletableFuture<?>[0])), at, t, client, directory, size);
                }, size, concurrency);
                rows.add(fan);
                rows.add(ratio("put " + s + " / store write x3", put, fan));
                if (alone != null) {
                    rows.add(ratio("put " + s + " (one request per put) / store write x3", alone, fan));
                }
            }
            if (!noBatched) {
                rows.add(run("put " + s + " batched x" + batch, dirAddr, () -> {
                    client.putAll(batchOf(size));
                    return batch;
                }, size, batchConcurrency));
            }
        }
        if (writesOnly) {
            return rows;
        }
        List<PhotoId> set = preload(client, size, size >= 65536 ? largeKeys : keys);
        PhotoId[] ids = set.toArray(new PhotoId[0]);
        Row get = noClientGet ? null : run("get " + s + " (" + ids.length + " keys)", dirAddr, () -> {
            byte[] b = client.get(ids[ThreadLocalRandom.current().nextInt(ids.length)]);
            check(b, size);
            return 1;
        }, size, concurrency);
        if (get != null) {
            rows.add(get);
        }
        // The store holding most of the working set: StoreClient straight to it, and wrk.
        places = places(directory);
        Map<String, List<PhotoId>> byStore = new HashMap<>();
        for (PhotoId id : ids) {
            for (String a : places.getOrDefault(id.volume(), List.of())) {
                byStore.computeIfAbsent(a, k -> new ArrayList<>()).add(id);
            }
        }
        String store = byStore.entrySet().stream().max(Map.Entry.comparingByValue((a, b) -> Integer.compare(a.size(), b.size())))
                .map(Map.Entry::getKey).orElse(null);
        if (store == null) {
            spec.commandLine().getErr().println("no store address for the working set's volumes: StoreClient and wrk rows skipped");
            return rows;
        }
        PhotoId[] local = byStore.get(store).toArray(new PhotoId[0]);
        Row direct = run("StoreClient.read " + s + " (1 store)", dirAddr, () -> {
            byte[] b = stores.readNow(store, local[ThreadLocalRandom.current().nextInt(local.length)]);
            check(b, size);
            return 1;
        }, size, concurrency);
        rows.add(direct);
        String base = stores.transport().baseUrl(store);
        List<Row> others = transport ? transports(s, base, local, size, dirAddr) : List.of();
        rows.addAll(others);
        if (wrk) {
            Row w = wrk("store read " + s + " (wrk, 1 store)", base, local, size);
            rows.add(w);
            if (get != null) {
                rows.add(ratio("client get / store (wrk)", get, w));
            }
            rows.add(ratio("StoreClient.read / store (wrk)", direct, w));
            for (Row o : others) {
                rows.add(ratio(o.name().replaceFirst(" " + s + ".*", "") + " / store (wrk)", o, w));
            }
        } else if (get != null) {
            rows.add(ratio("client get / StoreClient.read", get, direct));
        }
        return rows;
    }

    /**
     * The same reads through other HTTP clients: java.net.http's blocking {@code send} (no hop of the
     * response to {@code CompletableFuture}'s default executor, which is a new thread per task when the
     * common pool has fewer than 2 threads, as on 2 cores) and Apache HttpClient 5's async client
     * (HTTP/1.1, {@code --concurrency} connections, 2 I/O threads).
     */
    private List<Row> transports(String s, String base, PhotoId[] local, int size, String dirAddr) throws Exception {
        List<Row> rows = new ArrayList<>();
        HttpClient jdk = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
        rows.add(run("java.net.http send " + s + " (1 store)", dirAddr, () -> {
            PhotoId id = local[ThreadLocalRandom.current().nextInt(local.length)];
            try {
                HttpResponse<byte[]> r = jdk.send(HttpRequest.newBuilder(URI.create(base + id.needlePath()))
                        .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofByteArray());
                if (r.statusCode() != 200) {
                    throw new IllegalStateException("GET " + id.needlePath() + ": " + r.statusCode());
                }
                check(r.body(), size);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
            return 1;
        }, size, concurrency));
        rows.add(rawSocket(s, base, local, size, dirAddr));
        try (CloseableHttpAsyncClient hc =
                     HttpAsyncClients.custom()
                             .setVersionPolicy(HttpVersionPolicy.FORCE_HTTP_1)
                             .setIOReactorConfig(IOReactorConfig.custom().setIoThreadCount(2).build())
                             .setConnectionManager(PoolingAsyncClientConnectionManagerBuilder.create()
                                     .setMaxConnTotal(concurrency).setMaxConnPerRoute(concurrency).build())
                             .disableAutomaticRetries().disableCookieManagement().disableRedirectHandling()
                             .build()) {
            hc.start();
            rows.add(run("HttpClient 5 async " + s + " (1 store)", dirAddr, () -> {
                PhotoId id = local[ThreadLocalRandom.current().nextInt(local.length)];
                try {
                    SimpleHttpResponse r = hc.execute(
                            SimpleRequestBuilder.get(base + id.needlePath()).build(), null)
                            .get(30, TimeUnit.SECONDS);
                    if (r.getCode() != 200) {
                        throw new IllegalStateException("GET " + id.needlePath() + ": " + r.getCode());
                    }
                    check(r.getBodyBytes(), size);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                return 1;
            }, size, concurrency));
        }
        return rows;
    }

    /**
     * The floor of any JVM client: a bare HTTP/1.1 GET over one blocking keep-alive socket per load
     * thread (no pool, no parsing beyond the status line and Content-Length).
     */
    private Row rawSocket(String s, String base, PhotoId[] local, int size, String dirAddr) throws Exception {
        URI u = URI.create(base);
        ThreadLocal<Socket[]> socks = ThreadLocal.withInitial(() -> new Socket[1]);
        ConcurrentLinkedQueue<Socket> opened = new ConcurrentLinkedQueue<>();
        byte[] host = ("Host: " + u.getHost() + ":" + u.getPort() + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        try {
            return rawSocketRun(s, u, local, size, dirAddr, socks, host, opened);
        } finally {
            for (Socket so : opened) {
                so.close();
            }
        }
    }

    private Row rawSocketRun(String s, URI u, PhotoId[] local, int size, String dirAddr, ThreadLocal<Socket[]> socks, byte[] host,
                            ConcurrentLinkedQueue<Socket> opened)
            throws InterruptedException {
        return run("raw socket " + s + " (1 store)", dirAddr, () -> {
            PhotoId id = local[ThreadLocalRandom.current().nextInt(local.length)];
            try {
                Socket[] holder = socks.get();
                if (holder[0] == null) {
                    holder[0] = new Socket(u.getHost(), u.getPort());
                    holder[0].setTcpNoDelay(true);
                    opened.add(holder[0]);
                }
                Socket so = holder[0];
                OutputStream out = so.getOutputStream();
                byte[] line = ("GET " + id.needlePath() + " HTTP/1.1\r\n").getBytes(StandardCharsets.US_ASCII);
                byte[] req = new byte[line.length + host.length];
                System.arraycopy(line, 0, req, 0, line.length);
                System.arraycopy(host, 0, req, line.length, host.length);
                out.write(req);
                InputStream in = so.getInputStream();
                StringBuilder head = new StringBuilder();
                int c;
                int state = 0;
                while (state < 4 && (c = in.read()) >= 0) {
                    head.append((char) c);
                    state = (c == '\r' && (state == 0 || state == 2)) || (c == '\n' && (state == 1 || state == 3)) ? state + 1 : 0;
                }
                String h = head.toString().toLowerCase(Locale.ROOT);
                int at = h.indexOf("content-length:");
                int len = Integer.parseInt(h.substring(at + 15, h.indexOf('\r', at)).trim());
                byte[] body = in.readNBytes(len);
                if (!h.startsWith("http/1.1 200")) {
                    throw new IllegalStateException("GET " + id.needlePath() + ": " + h.lines().findFirst().orElse(""));
                }
                check(body, size);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return 1;
        }, size, concurrency);
    }

    /** A volume the client writes to now and the first of its replicas. */
    private record StoreTarget(int volume, String address) {
    }

    /**
     * Waits for the writes of one store-write operation: 1 when done; 0 when the volume filled
     * ({@code VOLUME_READ_ONLY}), after moving {@code at} to the client's next volume (once, however
     * many writers saw it).
     */
    private int written(CompletableFuture<?> writes, AtomicReference<StoreTarget> at, StoreTarget t,
                        HayloftClient client, DirectoryClient directory, int size) {
        try {
            Futures.await(writes);
            return 1;
        } catch (StoreException e) {
            if (e.code() != StoreException.VOLUME_READ_ONLY) {
                throw e;
            }
            synchronized (at) {
                if (at.get() == t) {
                    at.set(storeTarget(client, directory, size));
                }
            }
            return 0;
        }
    }

    /** The volume of a fresh put and its first replica, or null when the map lists none. */
    private StoreTarget storeTarget(HayloftClient client, DirectoryClient directory, int size) {
        PhotoId sample = client.put(payload(size)).id();
        String address = places(directory).getOrDefault(sample.volume(), List.of()).stream().findFirst().orElse(null);
        return address == null ? null : new StoreTarget(sample.volume(), address);
    }

    private static Row ratio(String name, Row a, Row b) {
        return new Row(name, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, "", Double.NaN, Double.NaN,
                a.objectsPerSecond() / b.objectsPerSecond());
    }

    private static void check(byte[] b, int size) {
        if (b.length != size) {
            throw new IllegalStateException("read " + b.length + " bytes, expected " + size);
        }
    }

    private List<byte[]> batchOf(int size) {
        List<byte[]> b = new ArrayList<>(batch);
        for (int i = 0; i < batch; i++) {
            b.add(payload(size));
        }
        return b;
    }

    /** Puts {@code n} objects in batches ({@code --batch-concurrency} in flight) and returns their ids. */
    private List<PhotoId> preload(HayloftClient client, int size, int n) throws InterruptedException {
        long t0 = System.nanoTime();
        AtomicLong left = new AtomicLong(n);
        ConcurrentLinkedQueue<PhotoId> ids = new ConcurrentLinkedQueue<>();
        List<Thread> workers = new ArrayList<>();
        ConcurrentLinkedQueue<RuntimeException> errors = new ConcurrentLinkedQueue<>();
        for (int w = 0; w < batchConcurrency; w++) {
            Thread t = new Thread(() -> {
                try {
                    while (true) {
                        long take = Math.min(batch, left.getAndAdd(-batch));
                        if (take <= 0) {
                            return;
                        }
                        List<byte[]> b = new ArrayList<>();
                        for (int i = 0; i < take; i++) {
                            b.add(payload(size));
                        }
                        for (PutResult r : client.putAll(b)) {
                            ids.add(r.id());
                        }
                    }
                } catch (RuntimeException e) {
                    errors.add(e);
                }
            }, "bench-preload");
            t.setDaemon(true);
            t.start();
            workers.add(t);
        }
        for (Thread t : workers) {
            t.join();
        }
        if (!errors.isEmpty()) {
            throw errors.peek();
        }
        spec.commandLine().getErr().printf(Locale.ROOT, "working set: %d objects of %s put in %.1f s%n", ids.size(), label(size),
                (System.nanoTime() - t0) / 1e9);
        return new ArrayList<>(ids);
    }

    /** Volume id to the addresses of its replicas' stores, from the directory's volume and store lists. */
    private final Map<Integer, List<String>> replicaCache = new ConcurrentHashMap<>();

    /** The replica addresses of one volume (asked once per volume). */
    private List<String> places(int volume, DirectoryClient directory) {
        return replicaCache.computeIfAbsent(volume, v -> places(directory).getOrDefault(v, List.of()));
    }

    private static Map<Integer, List<String>> places(DirectoryClient directory) {
        Map<String, String> address = new HashMap<>();
        for (StoreInfo s : Futures.await(directory.stores())) {
            address.put(s.id(), s.address() == null ? "" : s.address());
        }
        Map<Integer, List<String>> out = new HashMap<>();
        for (VolumeInfo v : Futures.await(directory.volumes())) {
            List<String> a = new ArrayList<>();
            for (String r : v.replicas()) {
                String addr = address.get(r);
                if (addr != null && !addr.isEmpty()) {
                    a.add(addr);
                }
            }
            out.put(v.id(), a);
        }
        return out;
    }

    private static byte[] payload(int size) {
        byte[] b = new byte[size];
        ThreadLocalRandom.current().nextBytes(b);
        return b;
    }

    // ---------------------------------------------------------------- wrk

    /**
     * wrk with {@code --concurrency} connections on 2 threads for {@code --seconds} (after a
     * {@code --warmup} run) against {@code base}, each request a random URL of {@code ids}
     * (written to a temp file that a generated Lua script reads).
     */
    private Row wrk(String name, String base, PhotoId[] ids, int size) throws IOException, InterruptedException {
        Path tmp = Files.createTempDirectory("hayloft-wrk");
        try {
            Path list = tmp.resolve("paths.txt");
            StringBuilder b = new StringBuilder();
            for (PhotoId id : ids) {
                b.append(id.needlePath()).append('\n');
            }
            Files.writeString(list, b, StandardCharsets.US_ASCII);
            Path lua = tmp.resolve("random-paths.lua");
            Files.writeString(lua, wrkScript(list), StandardCharsets.US_ASCII);
            if (warmup > 0) {
                runWrk(base, lua, warmup);
            }
            long cpu0 = jvmCpuNanos();
            String report = runWrk(base, lua, seconds);
            long jvmCpu = jvmCpuNanos() - cpu0;
            spec.commandLine().getErr().println(report.strip());
            double rps = number(report, "Requests/sec:\\s+([0-9.]+)");
            double requests = number(report, "([0-9]+) requests in", 0);
            double wrkCpu = childCpuSeconds(report);
            long non2xx = (long) number(report, "Non-2xx or 3xx responses:\\s+([0-9]+)", 0);
            if (non2xx > 0) {
                throw new IllegalStateException("wrk got " + non2xx + " non-2xx answers from " + base + ":\n" + report);
            }
            return new Row(name, rps, rps * size / 1048576.0, latency(report, "50%"), latency(report, "99%"), Double.NaN, "",
                    requests > 0 ? jvmCpu / 1e3 / requests : Double.NaN, requests > 0 ? wrkCpu * 1e6 / requests : Double.NaN);
        } finally {
            FileTrees.delete(tmp);
        }
    }

    /** wrk's CPU seconds from the last line of sh's {@code times} ("0m1.234s 0m0.567s"), NaN when absent. */
    static double childCpuSeconds(String report) {
        Matcher m = Pattern.compile("(\\d+)m([0-9.]+)s\\s+(\\d+)m([0-9.]+)s\\s*$").matcher(report.strip());
        if (!m.find()) {
            return Double.NaN;
        }
        return Integer.parseInt(m.group(1)) * 60 + Double.parseDouble(m.group(2)) + Integer.parseInt(m.group(3)) * 60
                + Double.parseDouble(m.group(4));
    }

    /** The Lua script: every wrk thread loads the list and sends GETs of uniformly random entries. */
    static String wrkScript(Path list) {
        return "local paths = {}\n"
                + "for line in io.lines(\"" + list.toAbsolutePath() + "\") do paths[#paths + 1] = line end\n"
                + "math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16))\n"
                + "request = function()\n"
                + "  return wrk.format(\"GET\", paths[math.random(#paths)])\n"
                + "end\n";
    }

    private String runWrk(String base, Path lua, double secs) throws IOException, InterruptedException {
        // through sh, whose `times` then prints wrk's CPU time (user and system) as its last line
        List<String> cmd = List.of("sh", "-c", "wrk -t2 -c" + concurrency + " -d" + Math.max(1, Math.round(secs)) + "s --latency -s '"
                + lua + "' '" + base + "' && times");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        byte[] all = p.getInputStream().readAllBytes();
        if (!p.waitFor((long) secs + 60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("wrk did not finish");
        }
        String text = new String(all, StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new IllegalStateException("wrk failed (" + p.exitValue() + "): " + text);
        }
        return text;
    }

    private static double number(String text, String regex) {
        double v = number(text, regex, Double.NaN);
        if (Double.isNaN(v)) {
            throw new IllegalStateException("wrk output has no '" + regex + "':\n" + text);
        }
        return v;
    }

    private static double number(String text, String regex, double absent) {
        Matcher m = Pattern.compile(regex).matcher(text);
        return m.find() ? Double.parseDouble(m.group(1)) : absent;
    }

    /** A latency percentile line of wrk's {@code --latency} distribution ("99%  3.21ms"), in ms. */
    static double latency(String text, String percentile) {
        Matcher m = Pattern.compile("(?m)^\\s*" + Pattern.quote(percentile) + "\\s+([0-9.]+)(us|ms|s|m)\\s*$").matcher(text);
        if (!m.find()) {
            return Double.NaN;
        }
        double v = Double.parseDouble(m.group(1));
        return switch (m.group(2)) {
            case "us" -> v / 1000;
            case "ms" -> v;
            case "s" -> v * 1000;
            default -> v * 60_000;
        };
    }

    private static boolean onPath(String program) {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String d : path.split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, program))) {
                return true;
            }
        }
        return false;
    }

    // ---------------------------------------------------------------- directory metrics

    /** The directory's request counts by op ({@code hayloft_directory_requests_seconds_count} summed over statuses). */
    static Map<String, Double> directoryCounts(String dirAddr) {
        try {
            HttpClient h = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            HttpResponse<String> r = h.send(HttpRequest.newBuilder(URI.create("http://" + dirAddr + "/metrics"))
                    .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                return null;
            }
            return parseCounts(r.body());
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    static Map<String, Double> parseCounts(String metrics) {
        Map<String, Double> byOp = new TreeMap<>();
        for (String line : metrics.split("\n")) {
            Matcher m = COUNT.matcher(line.strip());
            if (m.matches()) {
                Matcher op = OP.matcher(m.group(1));
                byOp.merge(op.find() ? op.group(1) : "?", Double.parseDouble(m.group(2)), Double::sum);
            }
        }
        return byOp;
    }

    // ---------------------------------------------------------------- closed loops

    /** Warm-up, then a closed loop of {@code inFlight} workers for {@code seconds}; {@code op} returns objects done. */
    private Row run(String name, String dirAddr, Supplier<Integer> op, int objectBytes, int inFlight) throws InterruptedException {
        Machine.sync(); // each scenario starts with no dirty pages of the one before (writeback would slow the next writer)
        loop(op, warmup, new Recorder(3), new AtomicLong(), inFlight);
        Recorder rec = new Recorder(3);
        AtomicLong objects = new AtomicLong();
        AtomicLong ops = new AtomicLong();
        Map<String, Double> before = directoryCounts(dirAddr);
        long cpu0 = jvmCpuNanos();
        double took = loop(op, seconds, rec, objects, inFlight, ops);
        long cpu = jvmCpuNanos() - cpu0;
        Map<String, Double> after = directoryCounts(dirAddr);
        Histogram h = rec.getIntervalHistogram();
        double calls = Double.NaN;
        StringBuilder perOp = new StringBuilder();
        if (before != null && after != null) {
            double sum = 0;
            for (Map.Entry<String, Double> e : after.entrySet()) {
                double d = e.getValue() - before.getOrDefault(e.getKey(), 0.0);
                if (d > 0 && !BACKGROUND.contains(e.getKey())) {
                    sum += d;
                    perOp.append(perOp.length() == 0 ? "" : " ").append(e.getKey()).append('=')
                            .append(fmt(d * 1000 / Math.max(1, ops.get()), 1));
                }
            }
            calls = sum * 1000 / Math.max(1, ops.get());
        }
        spec.commandLine().getErr().printf(Locale.ROOT, "%s: %d objects in %.1f s%n", name, objects.get(), took);
        return new Row(name, objects.get() / took, objects.get() * (double) objectBytes / took / 1048576.0,
                h.getValueAtPercentile(50) / 1e6, h.getValueAtPercentile(99) / 1e6, calls, perOp.toString(),
                cpu / 1e3 / Math.max(1, ops.get()), Double.NaN);
    }

    private double loop(Supplier<Integer> op, double secs, Recorder rec, AtomicLong objects, int inFlight)
            throws InterruptedException {
        return loop(op, secs, rec, objects, inFlight, new AtomicLong());
    }

    private double loop(Supplier<Integer> op, double secs, Recorder rec, AtomicLong objects, int inFlight, AtomicLong ops)
            throws InterruptedException {
        long start = System.nanoTime();
        long end = start + (long) (secs * 1e9);
        CountDownLatch done = new CountDownLatch(inFlight);
        AtomicLong failures = new AtomicLong();
        for (int w = 0; w < inFlight; w++) {
            CompletableFuture.runAsync(() -> {
                try {
                    while (System.nanoTime() < end) {
                        long t0 = System.nanoTime();
                        int n = op.get();
                        rec.recordValue(Math.max(1, System.nanoTime() - t0));
                        objects.addAndGet(n);
                        ops.incrementAndGet();
                    }
                } catch (RuntimeException e) {
                    if (failures.incrementAndGet() == 1) {
                        spec.commandLine().getErr().println("operation failed: " + e);
                    }
                } finally {
                    done.countDown();
                }
            }, r -> {
                Thread t = new Thread(r, "bench-worker");
                t.setDaemon(true);
                t.start();
            });
        }
        if (!done.await((long) (secs * 1000) + 120_000, TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException("workers did not finish");
        }
        if (failures.get() > 0) {
            throw new IllegalStateException(failures.get() + " workers failed");
        }
        return (System.nanoTime() - start) / 1e9;
    }
}
