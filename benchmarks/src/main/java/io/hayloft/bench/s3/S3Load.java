package io.hayloft.bench.s3;

import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.serverkit.config.Ports;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Recorder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * {@code hayloft bench s3}: the S3 gateway as its users meet it, against the Java client on the same
 * cluster in the same run. The cluster and its gateway run as one separate process
 * ({@code hayloft cluster --s3 PORT}, started from this jar's class path, fsync on); this process
 * drives both with {@code --threads} threads: for each object size, puts through the AWS SDK for
 * Java v2 ({@code S3Client}, default integrity protections: aws-chunked bodies with CRC32 trailers)
 * and through {@link HayloftClient}, then gets of uniformly random objects of each one's working set
 * ({@code --keys} objects a size, at least as many as the puts made). Every scenario runs
 * {@code --seconds} after {@code --warmup}; the rounds alternate S3 and client so that a noisy
 * machine hurts both alike, and the report gives each scenario's median rate and the ratio
 * S3 ÷ client. Not thread-safe: one run per instance.
 */
@Command(name = "s3", mixinStandardHelpOptions = true,
        description = "S3 gateway vs the Java client on one cluster process: puts and gets, rates and ratios.")
public final class S3Load implements Callable<Integer> {
    @Option(names = "--sizes", split = ",", defaultValue = "1024,65536,1048576", description = "Object sizes in bytes (default: ${DEFAULT-VALUE}).")
    List<Integer> sizes;
    @Option(names = "--threads", defaultValue = "16", description = "Threads driving each scenario (default: ${DEFAULT-VALUE}).")
    int threads;
    @Option(names = "--keys", defaultValue = "2000", description = "Objects per size in each working set (default: ${DEFAULT-VALUE}).")
    int keys;
    @Option(names = "--seconds", defaultValue = "8", description = "Measured seconds per scenario and round (default: ${DEFAULT-VALUE}).")
    int seconds;
    @Option(names = "--warmup", defaultValue = "4", description = "Warm-up seconds before each scenario (default: ${DEFAULT-VALUE}).")
    int warmup;
    @Option(names = "--rounds", defaultValue = "3", description = "Rounds of every scenario (default: ${DEFAULT-VALUE}).")
    int rounds;
    @Option(names = "--dir", description = "Where the cluster keeps its data (default: a temporary directory, deleted after).")
    Path dir;

    /** One measured scenario: a rate in operations a second, and the latency histogram's median and 99th percentile. */
    record Rate(double perSecond, double p50Millis, double p99Millis) {
    }

    @Override
    public Integer call() throws Exception {
        Path data = dir != null ? dir : Files.createTempDirectory("hayloft-bench-s3");
        Process cluster = null;
        try {
            int port = Ports.free();
            int s3Port = Ports.free();
            List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx2g", "-cp", System.getProperty("java.class.path"), "io.hayloft.cli.Hayloft", "cluster",
                    "--dir", data.resolve("cluster").toString(), "--port", String.valueOf(port), "--s3", String.valueOf(s3Port)));
            cluster = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String[] found = awaitReady(cluster); // directory, s3 endpoint, access key, secret key
            System.out.printf(Locale.ROOT, "%d cores, JDK %s; cluster process: directory %s, S3 %s; %d threads, %d keys a size%n",
                    Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), found[0], found[1], threads, keys);
            try (HayloftClient client = HayloftClient.builder().directory(found[0]).build();
                 S3Client s3 = S3Client.builder().endpointOverride(URI.create(found[1])).region(Region.US_EAST_1)
                         .forcePathStyle(true).httpClient(ApacheHttpClient.builder().maxConnections(threads * 2).build())
                         .credentialsProvider(StaticCredentialsProvider.create(AwsBasicCredentials.create(found[2], found[3])))
                         .build()) {
                s3.createBucket(b -> b.bucket("bench"));
                System.out.println("scenario                 size      S3 ops/s (p50/p99 ms)       client ops/s (p50/p99 ms)   S3/client");
                for (int size : sizes) {
                    run(client, s3, size);
                }
            }
            return 0;
        } finally {
            if (cluster != null) {
                cluster.destroy();
                if (!cluster.waitFor(20, TimeUnit.SECONDS)) {
                    cluster.destroyForcibly();
                }
            }
            if (dir == null) {
                try {
                    io.hayloft.serverkit.io.FileTrees.delete(data);
                } catch (IOException e) {
                    System.err.println("could not delete " + data + ": " + e.getMessage());
                }
            }
        }
    }

    private void run(HayloftClient client, S3Client s3, int size) throws InterruptedException {
        byte[] body = new byte[size];
        ThreadLocalRandom.current().nextBytes(body);
        List<String> s3Keys = java.util.Collections.synchronizedList(new ArrayList<>());
        List<PhotoId> ids = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicLong seq = new AtomicLong();
        List<Rate> s3Puts = new ArrayList<>();
        List<Rate> clientPuts = new ArrayList<>();
        List<Rate> s3Gets = new ArrayList<>();
        List<Rate> clientGets = new ArrayList<>();
        for (int r = 0; r < rounds; r++) {
            s3Puts.add(measure(() -> {
                String key = "obj/" + size + "/" + seq.incrementAndGet();
                s3.putObject(b -> b.bucket("bench").key(key), RequestBody.fromBytes(body));
                s3Keys.add(key);
            }));
            clientPuts.add(measure(() -> {
                PutResult p = client.put(body);
                ids.add(p.id());
            }));
        }
        fill(s3Keys, keys, () -> {
            String key = "obj/" + size + "/" + seq.incrementAndGet();
            s3.putObject(b -> b.bucket("bench").key(key), RequestBody.fromBytes(body));
            s3Keys.add(key);
        });
        fill(ids, keys, () -> ids.add(client.put(body).id()));
        List<String> keyList = List.copyOf(s3Keys);
        List<PhotoId> idList = List.copyOf(ids);
        for (int r = 0; r < rounds; r++) {
            s3Gets.add(measure(() -> {
                String key = keyList.get(ThreadLocalRandom.current().nextInt(keyList.size()));
                if (s3.getObjectAsBytes(b -> b.bucket("bench").key(key)).asByteArrayUnsafe().length != size) {
                    throw new IllegalStateException("short read of " + key);
                }
            }));
            clientGets.add(measure(() -> {
                PhotoId id = idList.get(ThreadLocalRandom.current().nextInt(idList.size()));
                if (client.get(id).length != size) {
                    throw new IllegalStateException("short read of " + id);
                }
            }));
        }
        report("put", size, s3Puts, clientPuts);
        report("get (" + keyList.size() + "/" + idList.size() + " objects)", size, s3Gets, clientGets);
    }

    /** Puts until {@code list} holds {@code n} entries, on the benchmark's threads. */
    private void fill(List<?> list, int n, ThrowingRunnable put) throws InterruptedException {
        List<Thread> ts = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                while (list.size() < n && failure.get() == null) {
                    try {
                        put.run();
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }
            });
            th.start();
            ts.add(th);
        }
        for (Thread th : ts) {
            th.join();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("filling the working set failed", failure.get());
        }
    }

    /** Runs {@code op} on every thread: {@code warmup} seconds unmeasured, then {@code seconds} measured. */
    private Rate measure(ThrowingRunnable op) throws InterruptedException {
        Recorder recorder = new Recorder(3);
        AtomicLong done = new AtomicLong();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long start = System.nanoTime();
        long measureFrom = start + TimeUnit.SECONDS.toNanos(warmup);
        long end = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
        CountDownLatch finished = new CountDownLatch(threads);
        for (int t = 0; t < threads; t++) {
            new Thread(() -> {
                try {
                    long now;
                    while ((now = System.nanoTime()) < end && failure.get() == null) {
                        op.run();
                        long after = System.nanoTime();
                        if (now >= measureFrom) {
                            done.incrementAndGet();
                            recorder.recordValue(Math.max(1, (after - now) / 1000));
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                } finally {
                    finished.countDown();
                }
            }).start();
        }
        finished.await();
        if (failure.get() != null) {
            throw new IllegalStateException("a benchmark operation failed", failure.get());
        }
        var h = recorder.getIntervalHistogram();
        return new Rate(done.get() / (double) seconds, h.getValueAtPercentile(50) / 1000.0, h.getValueAtPercentile(99) / 1000.0);
    }

    private static void report(String what, int size, List<Rate> s3, List<Rate> client) {
        Rate a = median(s3);
        Rate b = median(client);
        System.out.printf(Locale.ROOT, "%-24s %8d  %9.0f (%6.2f/%7.2f)   %9.0f (%6.2f/%7.2f)   %5.2f%n", what, size,
                a.perSecond(), a.p50Millis(), a.p99Millis(), b.perSecond(), b.p50Millis(), b.p99Millis(), a.perSecond() / b.perSecond());
    }

    private static Rate median(List<Rate> rates) {
        List<Rate> sorted = new ArrayList<>(rates);
        sorted.sort(java.util.Comparator.comparingDouble(Rate::perSecond));
        return sorted.get(sorted.size() / 2);
    }

    /** Reads the cluster's output until READY: its directory, S3 endpoint and keys. */
    private static String[] awaitReady(Process p) throws IOException {
        String[] found = new String[4];
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        String line;
        while ((line = out.readLine()) != null) {
            if (line.startsWith("DIRECTORY ")) {
                found[0] = line.substring("DIRECTORY ".length()).trim();
            } else if (line.startsWith("S3 ")) {
                found[1] = line.substring(3).trim().split(" ")[0];
            } else if (line.startsWith("S3_ACCESS_KEY ")) {
                found[2] = line.substring("S3_ACCESS_KEY ".length()).trim();
            } else if (line.startsWith("S3_SECRET_KEY ")) {
                found[3] = line.substring("S3_SECRET_KEY ".length()).trim();
            } else if (line.equals("READY")) {
                break;
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("the cluster process was not ready within 2 minutes");
            }
        }
        for (String f : found) {
            if (f == null) {
                throw new IOException("the cluster process ended or printed no DIRECTORY/S3/S3_ACCESS_KEY/S3_SECRET_KEY before READY");
            }
        }
        // Keep draining its output so that it never blocks on a full pipe.
        Thread drain = new Thread(() -> {
            try {
                while (out.readLine() != null) {
                    // discarded
                }
            } catch (IOException ignored) {
                // the process ended
            }
        }, "cluster-output");
        drain.setDaemon(true);
        drain.start();
        return found;
    }

    @FunctionalInterface
    private interface ThrowingRunnable {
        void run() throws Exception;
    }
}
