package io.hayloft.bench.cluster;

import io.hayloft.common.io.FileTrees;
import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.client.DirectoryClient;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.common.wire.PhotoId;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code hayloft bench cluster}: end-to-end throughput through {@link HayloftClient} on an
 * {@link EmbeddedCluster} (a directory and 3 stores on loopback, 3 replicas): puts of 1 KiB and
 * 64 KiB objects one by one and batched, gets of the same, and the directory's assign and lookup on
 * their own. Each scenario is a closed loop of {@code --concurrency} operations in flight ({@code --batch-concurrency} for batched puts) for
 * {@code --seconds}; it reports objects per second, MiB per second of payload and the latency of one
 * operation (a batch counts as one operation). All scenarios run in one process, one after the
 * other, so the ratios between them are what to compare on a shared machine.
 *
 * <p>Not thread-safe (one run).
 */
@Command(name = "cluster", mixinStandardHelpOptions = true,
        description = "End-to-end put/get throughput through the client on an embedded cluster; directory assign/lookup.")
public final class ClusterLoad implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--seconds", defaultValue = "8", description = "Duration of each scenario (default ${DEFAULT-VALUE}).")
    double seconds;

    @Option(names = "--warmup", defaultValue = "2", description = "Warm-up seconds before each scenario (default ${DEFAULT-VALUE}).")
    double warmup;

    @Option(names = "--concurrency", defaultValue = "16", description = "Operations in flight (default ${DEFAULT-VALUE}).")
    int concurrency;

    @Option(names = "--batch", defaultValue = "64", description = "Objects per batched put (default ${DEFAULT-VALUE}).")
    int batch;

    @Option(names = "--batch-concurrency", defaultValue = "4", description = "Batched puts in flight (default ${DEFAULT-VALUE}).")
    int batchConcurrency;

    @Option(names = "--no-fsync", description = "Stores do not fsync before acknowledging.")
    boolean noFsync;

    @Option(names = "--dir", description = "Cluster data directory (default: a temp dir, removed).")
    Path dir;

    private record Row(String name, long objects, long bytes, double seconds, Histogram latency) {
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        boolean temp = dir == null;
        Path work = temp ? Files.createTempDirectory("hayloft-bench-cluster") : Files.createDirectories(dir);
        List<Row> rows = new ArrayList<>();
        try (EmbeddedCluster cluster = EmbeddedCluster.start(ClusterOptions.of(work).withStores(3, 3)
                .withFsync(!noFsync).withDirectoryPort(0).withVolumeLimit(4L << 30));
             HayloftClient client = HayloftClient.builder().directory(cluster.directoryAddress())
                     .requestTimeout(Duration.ofSeconds(30)).build()) {
            DirectoryClient directory = new DirectoryClient(HttpTransport.create(), List.of(cluster.directoryAddress()), null);
            PhotoId known = client.put(new byte[16]).id();
            rows.add(run("directory assign (1 key)", () -> Futures.await(directory.assign(1)) == null ? 0 : 1, 0));
            rows.add(run("directory lookup", () -> Futures.await(directory.lookup(known.key())) == null ? 0 : 1, 0));
            for (int size : new int[] {1024, 65536}) {
                String s = size == 1024 ? "1 KiB" : "64 KiB";
                ConcurrentLinkedQueue<PhotoId> ids = new ConcurrentLinkedQueue<>();
                rows.add(run("put " + s, () -> {
                    ids.add(client.put(payload(size)).id());
                    return 1;
                }, size));
                rows.add(run("put " + s + " batched x" + batch, () -> {
                    List<byte[]> b = new ArrayList<>(batch);
                    for (int i = 0; i < batch; i++) {
                        b.add(payload(size));
                    }
                    List<PutResult> r = client.putAll(b);
                    for (int i = 0; i < r.size(); i += 8) {
                        ids.add(r.get(i).id());
                    }
                    return batch;
                }, size));
                PhotoId[] readable = ids.toArray(new PhotoId[0]);
                rows.add(run("get " + s, () -> {
                    byte[] b = client.get(readable[ThreadLocalRandom.current().nextInt(readable.length)]);
                    if (b.length != size) {
                        throw new IllegalStateException("read " + b.length + " bytes, expected " + size);
                    }
                    return 1;
                }, size));
            }
        } finally {
            if (temp) {
                FileTrees.delete(work);
            }
        }
        out.printf(Locale.ROOT, "%-28s %12s %10s %10s %10s%n", "scenario (" + concurrency + "/" + batchConcurrency + " in flight)",
                "objects/s", "MiB/s",
                "p50 ms", "p99 ms");
        for (Row r : rows) {
            out.printf(Locale.ROOT, "%-28s %12.0f %10.2f %10.2f %10.2f%n", r.name(), r.objects() / r.seconds(),
                    r.bytes() / r.seconds() / 1048576.0, r.latency().getValueAtPercentile(50) / 1e6,
                    r.latency().getValueAtPercentile(99) / 1e6);
        }
        out.flush();
        return 0;
    }

    private static byte[] payload(int size) {
        byte[] b = new byte[size];
        ThreadLocalRandom.current().nextBytes(b);
        return b;
    }

    /** Warm-up, then a closed loop of {@code concurrency} workers for {@code seconds}; {@code op} returns objects done. */
    private Row run(String name, Supplier<Integer> op, int objectBytes) throws InterruptedException {
        int inFlight = name.contains("batched") ? batchConcurrency : concurrency;
        loop(op, warmup, new Recorder(3), new AtomicLong(), inFlight);
        Recorder rec = new Recorder(3);
        AtomicLong objects = new AtomicLong();
        double took = loop(op, seconds, rec, objects, inFlight);
        Histogram h = rec.getIntervalHistogram();
        spec.commandLine().getErr().printf(Locale.ROOT, "%s: %d objects in %.1f s%n", name, objects.get(), took);
        return new Row(name, objects.get(), objects.get() * objectBytes, took, h);
    }

    private double loop(Supplier<Integer> op, double secs, Recorder rec, AtomicLong objects, int concurrency)
            throws InterruptedException {
        long start = System.nanoTime();
        long end = start + (long) (secs * 1e9);
        CountDownLatch done = new CountDownLatch(concurrency);
        AtomicLong failures = new AtomicLong();
        for (int w = 0; w < concurrency; w++) {
            CompletableFuture.runAsync(() -> {
                try {
                    while (System.nanoTime() < end) {
                        long t0 = System.nanoTime();
                        int n = op.get();
                        rec.recordValue(Math.max(1, System.nanoTime() - t0));
                        objects.addAndGet(n);
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
