package io.hayloft.bench.cache;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.cache.CacheConfig;
import io.hayloft.cache.CacheServer;
import io.hayloft.serverkit.http.HttpResponses;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code hayloft bench cache}: load tool for the cache server, on an in-process store and cache on
 * loopback. {@code hitpath} compares hit-path requests per second with direct store reads, for each
 * size, in alternating phases of one run. {@code zipf} replays a Haystack-like workload (popularity
 * Zipf over recency rank, new uploads becoming the hottest photos) and reports hit rate and store
 * reads saved, optionally with proactive push of uploads.
 */
@Command(name = "cache", mixinStandardHelpOptions = true, description = "Cache server load: hit path vs store, Zipf hit rate.")
public final class CacheLoad implements Callable<Integer> {
    static final long COOKIE = 0x1122334455667788L;

    @Option(names = "--mode", description = "hitpath or zipf (default ${DEFAULT-VALUE})")
    String mode = "hitpath";
    @Option(names = "--sizes", split = ",", description = "hitpath: needle sizes in bytes (default ${DEFAULT-VALUE})")
    List<Integer> sizes = List.of(1024, 65536);
    @Option(names = "--seconds", description = "hitpath: seconds per target and size (default ${DEFAULT-VALUE})")
    int seconds = 8;
    @Option(names = "--threads", description = "load threads, each with one keep-alive connection (default ${DEFAULT-VALUE})")
    int threads = 8;
    @Option(names = "--photos", description = "photos written before the run (default ${DEFAULT-VALUE})")
    int photos = 1000;
    @Option(names = "--size", description = "zipf: photo size in bytes (default ${DEFAULT-VALUE})")
    int size = 1024;
    @Option(names = "--requests", description = "zipf: reads to replay (default ${DEFAULT-VALUE})")
    int requests = 200_000;
    @Option(names = "--zipf", description = "zipf: exponent over recency rank (default ${DEFAULT-VALUE})")
    double exponent = 0.9;
    @Option(names = "--upload-fraction", description = "zipf: fraction of operations that upload a new photo (default ${DEFAULT-VALUE})")
    double uploadFraction = 0.02;
    @Option(names = "--cache-fraction", description = "zipf: cache size as a fraction of all photo bytes (default ${DEFAULT-VALUE})")
    double cacheFraction = 0.1;
    @Option(names = "--push", description = "zipf: push each upload into the cache (proactive push)")
    boolean push;

    @Override
    public Integer call() throws Exception {
        Path dir = Files.createTempDirectory("hayloft-bench-cache");
        StoreConfig sc = new StoreConfig();
        sc.dataDirs = List.of(dir.toString());
        sc.host = "127.0.0.1";
        sc.port = 0;
        sc.fsync = "never";
        sc.volumeSizeLimit = 15L << 30;
        try (StoreServer store = StoreServer.start(sc.validate())) {
            store.store().create(1);
            if ("hitpath".equals(mode)) {
                hitPath(store);
            } else if ("zipf".equals(mode)) {
                zipf(store);
            } else {
                throw new IllegalArgumentException("--mode must be hitpath or zipf, got '" + mode + "'");
            }
        } finally {
            try (var s = Files.walk(dir)) {
                s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        return 0;
    }

    private CacheServer cache(long maxBytes) throws InterruptedException {
        CacheConfig c = new CacheConfig();
        c.host = "127.0.0.1";
        c.port = 0;
        c.maxBytes = maxBytes;
        c.maxObjectBytes = (int) Math.min(maxBytes, 8 << 20);
        c.workerThreads = Math.max(16, threads * 2);
        return CacheServer.start(c);
    }

    private void hitPath(StoreServer store) throws Exception {
        String storeAddr = "127.0.0.1:" + store.port();
        System.out.printf(Locale.ROOT, "hit path: %d threads, %d photos per size, %d s per phase, %s%n", threads, photos, seconds,
                Runtime.version());
        System.out.printf(Locale.ROOT, "%-8s %14s %14s %8s%n", "size", "cache hit/s", "store/s", "ratio");
        long base = 1;
        for (int sz : sizes) {
            long first = base;
            for (int i = 0; i < photos; i++) {
                store.volume(1).write(first + i, 0, COOKIE, ByteBuffer.wrap(data(first + i, sz)));
            }
            base += photos;
            try (CacheServer cache = cache(Math.max(64L << 20, (long) photos * (sz + 256) * 2))) {
                String prefix = "/" + storeAddr;
                for (long k = first; k < first + photos; k++) { // warm: every photo read (and cached) once
                    try (MiniHttp h = new MiniHttp(cache.address())) {
                        int code = h.get(prefix + "/1/" + k + "/0?cookie=" + String.format(Locale.ROOT, "%016x", COOKIE));
                        if (code != 200) {
                            throw new IllegalStateException("warm-up GET of key " + k + " answered " + code);
                        }
                    }
                }
                run(cache.address(), prefix, first, 2); // JIT warm-up of both paths, not counted
                run(storeAddr, "", first, 2);
                double[] c = new double[2];
                double[] s = new double[2];
                for (int round = 0; round < 2; round++) { // alternate, so drift on a shared machine hits both
                    c[round] = run(cache.address(), prefix, first, seconds / 2.0);
                    s[round] = run(storeAddr, "", first, seconds / 2.0);
                }
                double cache1 = (c[0] + c[1]) / 2;
                double store1 = (s[0] + s[1]) / 2;
                JsonNode st = stats(cache.address());
                System.out.printf(Locale.ROOT, "%-8s %14.0f %14.0f %7.2fx   (cache hit rate %.4f, store reads %d, fetch errors %d)%n",
                        sz >= 1024 ? (sz / 1024) + " KiB" : sz + " B", cache1, store1, cache1 / store1,
                        st.get("hitRate").asDouble(), st.get("storeReads").asLong(), st.get("fetchErrors").asLong());
            }
        }
    }

    /** Runs {@code threads} loops of random GETs over the photos for {@code secs} (or one pass if secs < 0). */
    private double run(String target, String prefix, long first, double secs) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        AtomicLong done = new AtomicLong();
        long t0 = System.nanoTime();
        long end = t0 + (long) (secs * 1e9);
        List<Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            fs.add(pool.submit(() -> {
                try (MiniHttp h = new MiniHttp(target)) {
                    Random r = new Random(id);
                    long n = 0;
                    while (System.nanoTime() < end) {
                        long key = first + r.nextInt(photos);
                        int code = h.get(prefix + "/1/" + key + "/0?cookie=" + String.format(Locale.ROOT, "%016x", COOKIE));
                        if (code != 200) {
                            throw new IllegalStateException("GET of key " + key + " from " + target + " answered " + code);
                        }
                        n++;
                    }
                    done.addAndGet(n);
                }
                return null;
            }));
        }
        for (Future<?> f : fs) {
            f.get();
        }
        pool.shutdown();
        return done.get() / ((System.nanoTime() - t0) / 1e9);
    }

    private void zipf(StoreServer store) throws Exception {
        String storeAddr = "127.0.0.1:" + store.port();
        int maxPhotos = photos + (int) (requests * uploadFraction * 1.5) + 16;
        long totalBytes = (long) maxPhotos * size;
        long cacheBytes = Math.max(1024, (long) (totalBytes * cacheFraction));
        double[] cdf = new double[maxPhotos];
        double sum = 0;
        for (int i = 0; i < maxPhotos; i++) {
            sum += 1 / Math.pow(i + 1, exponent);
            cdf[i] = sum;
        }
        for (int i = 0; i < maxPhotos; i++) {
            cdf[i] /= sum;
        }
        long newest = 0;
        for (int i = 0; i < photos; i++) {
            newest++;
            store.volume(1).write(newest, 0, COOKIE, ByteBuffer.wrap(data(newest, size)));
        }
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        try (CacheServer cache = cache(cacheBytes); MiniHttp h = new MiniHttp(cache.address())) {
            Random r = new Random(42);
            long reads = 0;
            long uploads = 0;
            long t0 = System.nanoTime();
            while (reads < requests) {
                if (r.nextDouble() < uploadFraction) {
                    newest++;
                    uploads++;
                    byte[] d = data(newest, size);
                    store.volume(1).write(newest, 0, COOKIE, ByteBuffer.wrap(d));
                    if (push) {
                        CRC32C crc = new CRC32C();
                        crc.update(d);
                        HttpResponse<Void> p = http.send(HttpRequest.newBuilder(URI.create("http://" + cache.address() + "/" + storeAddr
                                + "/1/" + newest + "/0?cookie=" + String.format(Locale.ROOT, "%016x", COOKIE)))
                                .header("X-Hayloft-Crc32c", String.format(Locale.ROOT, "%08x", crc.getValue()))
                                .PUT(HttpRequest.BodyPublishers.ofByteArray(d)).build(), HttpResponse.BodyHandlers.discarding());
                        if (p.statusCode() != 201) {
                            throw new IllegalStateException("push answered " + p.statusCode());
                        }
                    }
                    continue;
                }
                int rank;
                do {
                    int i = Arrays.binarySearch(cdf, r.nextDouble());
                    rank = i >= 0 ? i : -i - 1;
                } while (rank >= newest);
                long key = newest - rank;
                int code = h.get("/" + storeAddr + "/1/" + key + "/0?cookie=" + String.format(Locale.ROOT, "%016x", COOKIE));
                if (code != 200) {
                    throw new IllegalStateException("GET of key " + key + " answered " + code);
                }
                reads++;
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            JsonNode st = stats(cache.address());
            long storeReads = st.get("storeReads").asLong();
            System.out.printf(Locale.ROOT, "zipf: %d reads, %d uploads (push %s), %d photos at the end, %d B each, exponent %.2f over"
                    + " recency rank, cache %d B (%.0f%% of photo bytes), %.1f s%n", reads, uploads, push ? "on" : "off", newest,
                    size, exponent, cacheBytes, cacheFraction * 100, secs);
            System.out.printf(Locale.ROOT, "hit rate %.4f, store reads %d of %d reads: %.1f%% of store reads saved, evictions %d,"
                    + " fetch errors %d%n", st.get("hitRate").asDouble(), storeReads, reads, 100.0 * (reads - storeReads) / reads,
                    st.get("evictions").asLong(), st.get("fetchErrors").asLong());
        }
    }

    private static JsonNode stats(String address) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        byte[] b = http.send(HttpRequest.newBuilder(URI.create("http://" + address + "/stats")).build(),
                HttpResponse.BodyHandlers.ofByteArray()).body();
        return HttpResponses.JSON.readTree(b);
    }

    private static byte[] data(long key, int size) {
        byte[] d = new byte[size];
        new Random(key).nextBytes(d);
        return d;
    }
}
