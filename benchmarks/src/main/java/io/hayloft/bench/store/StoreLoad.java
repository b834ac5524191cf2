package io.hayloft.bench.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code hayloft bench store load}: N connections against a store server (or, with
 * {@code --target plain}, against any HTTP server serving the same objects as files, e.g. nginx),
 * a weighted object size mix, a read/write ratio, single or batched writes; a warm-up, then a
 * fixed duration or request count. Reports req/s, objects/s, MB/s and p50/p99/p999 latency.
 * With {@code --target cache --store ADDR}, reads go to a cache node ({@code hayloft cache}) at
 * {@code --host:--port} through cache URLs naming the store ({@code /<store>/<volume>/<key>/<alt>}),
 * and the preload is written to that store.
 */
@Command(name = "load", mixinStandardHelpOptions = true,
        description = "Load a store server (or nginx serving the same objects as plain files).")
public final class StoreLoad implements Callable<Integer> {
    @Option(names = "--host", defaultValue = "127.0.0.1") String host;
    @Option(names = "--port", defaultValue = "8080") int port;
    @Option(names = "--connections", defaultValue = "16", description = "concurrent connections (one thread each)") int connections;
    @Option(names = "--sizes", defaultValue = "65536",
            description = "object sizes with weights, e.g. 1024 or 1024:3,65536:1") String sizes;
    @Option(names = "--read-ratio", defaultValue = "0", description = "fraction of requests that are reads, 0..1") double readRatio;
    @Option(names = "--batch", defaultValue = "1", description = "needles per write request (1 = PUT, >1 = POST batch)") int batch;
    @Option(names = "--warmup", defaultValue = "5", description = "seconds of warm-up, not measured") double warmup;
    @Option(names = "--duration", defaultValue = "20", description = "seconds measured (unless --count)") double duration;
    @Option(names = "--count", defaultValue = "0", description = "measured requests in total; overrides --duration") long count;
    @Option(names = "--volume", defaultValue = "1") long volume;
    @Option(names = "--create-volume", description = "create the volume first (POST /admin/volumes/ID)") boolean createVolume;
    @Option(names = "--preload", defaultValue = "0", description = "objects written before the run (keys 0..n-1) for reads") long preload;
    @Option(names = "--read-keys", defaultValue = "-1",
            description = "reads pick keys 0..n-1 (default: the --preload count)") long readKeys;
    @Option(names = "--target", defaultValue = "store",
            description = "store, plain (GET <prefix>/<key> from files) or cache (reads through a cache node)") String target;
    @Option(names = "--store", paramLabel = "HOST:PORT",
            description = "with --target cache: the store the cache URLs name, and where the preload is written") String store;
    @Option(names = "--plain-prefix", defaultValue = "/objects") String plainPrefix;
    @Option(names = "--write-files", paramLabel = "DIR",
            description = "with --preload: also write the preloaded objects as files DIR/<key> (for nginx)") Path writeFiles;

    private int[] sizeTable;
    private final AtomicLong nextKey = new AtomicLong();

    static long cookie(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (h ^ (h >>> 29)) | 1;
    }

    static int sizeOfKey(int[] table, long key) {
        return table[(int) Math.floorMod(key * 0x2545F4914F6CDD1DL >>> 16, (long) table.length)];
    }

    private int[] parseSizes() {
        List<Integer> t = new ArrayList<>();
        for (String part : sizes.split(",")) {
            String[] sw = part.trim().split(":");
            int size = Integer.parseInt(sw[0].trim());
            int weight = sw.length > 1 ? Integer.parseInt(sw[1].trim()) : 1;
            if (size < 0 || weight <= 0) {
                throw new IllegalArgumentException("bad size:weight '" + part + "'");
            }
            for (int i = 0; i < weight; i++) {
                t.add(size);
            }
        }
        return t.stream().mapToInt(Integer::intValue).toArray();
    }

    private static byte[] fill(byte[] buf, int n, long key) {
        long x = key * 0xD1B54A32D192ED03L + 1;
        for (int i = 0; i + 8 <= n; i += 8) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            ByteBuffer.wrap(buf, i, 8).putLong(x);
        }
        return buf;
    }

    @Override
    public Integer call() throws Exception {
        if (readRatio < 0 || readRatio > 1) {
            throw new IllegalArgumentException("--read-ratio must be in 0..1, got " + readRatio);
        }
        if (batch < 1) {
            throw new IllegalArgumentException("--batch must be >= 1, got " + batch);
        }
        if (!target.equals("store") && !target.equals("plain") && !target.equals("cache")) {
            throw new IllegalArgumentException("--target must be store, plain or cache, got " + target);
        }
        if (!target.equals("store") && readRatio < 1) {
            throw new IllegalArgumentException("--target " + target + " only reads: use --read-ratio 1");
        }
        if (target.equals("cache") && (store == null || store.lastIndexOf(':') <= 0)) {
            throw new IllegalArgumentException("--target cache needs --store HOST:PORT (the store behind the cache), got " + store);
        }
        sizeTable = parseSizes();
        int maxSize = Arrays.stream(sizeTable).max().orElse(0);
        boolean viaCache = target.equals("cache");
        try (HttpConn c = viaCache ? new HttpConn(store.substring(0, store.lastIndexOf(':')),
                Integer.parseInt(store.substring(store.lastIndexOf(':') + 1))) : new HttpConn(host, port)) {
            if (createVolume) {
                int s = c.send("POST", "/admin/volumes/" + volume, new byte[0], 0);
                System.out.println("create volume " + volume + ": HTTP " + s);
            }
            if (preload > 0) {
                byte[] buf = new byte[maxSize];
                for (long k = 0; k < preload; k++) {
                    int n = sizeOfKey(sizeTable, k);
                    fill(buf, n, k);
                    if (!target.equals("plain")) {
                        int s = c.send("PUT", needlePath(k), buf, n);
                        if (s != 201) {
                            throw new IOException("preload of key " + k + " failed: HTTP " + s);
                        }
                    }
                    if (writeFiles != null) {
                        Files.createDirectories(writeFiles);
                        Files.write(writeFiles.resolve(Long.toString(k)), Arrays.copyOf(buf, n));
                    }
                }
                System.out.println("preloaded " + preload + " objects");
            }
        }
        nextKey.set(Math.max(preload, 1_000_000_000L + System.nanoTime() % 1_000_000_000L));
        if (warmup > 0) {
            run((long) (warmup * 1e9), 0, maxSize);
        }
        Result r = run(count > 0 ? Long.MAX_VALUE : (long) (duration * 1e9), count, maxSize);
        Histogram h = r.histogram;
        double secs = r.nanos / 1e9;
        System.out.printf(Locale.ROOT, "target=%s connections=%d sizes=%s read-ratio=%.2f batch=%d measured=%.1fs%n", target,
                connections, sizes, readRatio, batch, secs);
        System.out.printf(Locale.ROOT,
                "requests=%d req/s=%.0f objects/s=%.0f MB/s=%.1f p50=%.3fms p99=%.3fms p999=%.3fms errors=%d%n",
                r.requests, r.requests / secs, r.objects / secs, r.bytes / secs / 1e6, h.getValueAtPercentile(50) / 1e6,
                h.getValueAtPercentile(99) / 1e6, h.getValueAtPercentile(99.9) / 1e6, r.errors);
        return r.errors > 0 && r.requests == 0 ? 1 : 0;
    }

    private String needlePath(long key) {
        return "/" + volume + "/" + key + "/0?cookie=" + Long.toHexString(cookie(key));
    }

    record Result(long requests, long objects, long bytes, long errors, long nanos, Histogram histogram) {
    }

    private Result run(long nanos, long totalCount, int maxSize) throws InterruptedException {
        long start = System.nanoTime();
        long deadline = nanos == Long.MAX_VALUE ? Long.MAX_VALUE : start + nanos;
        AtomicLong remaining = new AtomicLong(totalCount > 0 ? totalCount : Long.MAX_VALUE);
        List<Thread> threads = new ArrayList<>();
        List<long[]> counters = new ArrayList<>();
        List<Histogram> hists = new ArrayList<>();
        for (int t = 0; t < connections; t++) {
            long[] cnt = new long[4];
            Histogram hist = new Histogram(60_000_000_000L, 3);
            counters.add(cnt);
            hists.add(hist);
            Thread th = new Thread(() -> worker(deadline, remaining, cnt, hist, maxSize), "load-" + t);
            threads.add(th);
            th.start();
        }
        for (Thread th : threads) {
            th.join();
        }
        long elapsed = System.nanoTime() - start;
        Histogram all = new Histogram(60_000_000_000L, 3);
        long req = 0;
        long obj = 0;
        long bytes = 0;
        long err = 0;
        for (int t = 0; t < connections; t++) {
            all.add(hists.get(t));
            req += counters.get(t)[0];
            obj += counters.get(t)[1];
            bytes += counters.get(t)[2];
            err += counters.get(t)[3];
        }
        return new Result(req, obj, bytes, err, elapsed, all);
    }

    private void worker(long deadline, AtomicLong remaining, long[] cnt, Histogram hist, int maxSize) {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        byte[] buf = new byte[Math.max(maxSize, 1)];
        byte[] batchBuf = new byte[batch * (maxSize + 24)];
        fill(buf, buf.length & ~7, rnd.nextLong());
        try (HttpConn c = new HttpConn(host, port)) {
            while (System.nanoTime() < deadline && remaining.getAndDecrement() > 0) {
                boolean read = rnd.nextDouble() < readRatio;
                long t0 = System.nanoTime();
                try {
                    int status;
                    long objects = 1;
                    long bytes;
                    if (read) {
                        long keys = readKeys > 0 ? readKeys : preload;
                        long key = keys > 0 ? rnd.nextLong(keys) : 0;
                        String path = target.equals("plain") ? plainPrefix + "/" + key
                                : target.equals("cache") ? "/" + store + needlePath(key) : needlePath(key);
                        status = c.send("GET", path, null, 0);
                        bytes = c.lastBodyBytes;
                        if (status != 200) {
                            cnt[3]++;
                            continue;
                        }
                    } else if (batch == 1) {
                        long key = nextKey.getAndIncrement();
                        int n = sizeOfKey(sizeTable, key);
                        status = c.send("PUT", needlePath(key), buf, n);
                        bytes = n;
                        if (status != 201) {
                            cnt[3]++;
                            continue;
                        }
                    } else {
                        ByteBuffer b = ByteBuffer.wrap(batchBuf);
                        long key0 = nextKey.getAndAdd(batch);
                        bytes = 0;
                        for (int i = 0; i < batch; i++) {
                            int n = sizeOfKey(sizeTable, key0 + i);
                            b.putLong(key0 + i).putLong(cookie(key0 + i)).putInt(0).putInt(n).put(buf, 0, n);
                            bytes += n;
                        }
                        status = c.send("POST", "/" + volume + "/batch", batchBuf, b.position());
                        objects = batch;
                        if (status != 201) {
                            cnt[3]++;
                            continue;
                        }
                    }
                    hist.recordValue(Math.min(System.nanoTime() - t0, 59_000_000_000L));
                    cnt[0]++;
                    cnt[1] += objects;
                    cnt[2] += bytes;
                } catch (IOException e) {
                    cnt[3]++;
                    c.close();
                }
            }
        }
    }
}
