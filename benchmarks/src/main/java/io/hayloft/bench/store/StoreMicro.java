package io.hayloft.bench.store;

import io.hayloft.serverkit.io.FileTrees;
import io.hayloft.store.volume.NeedleIndex;
import io.hayloft.store.volume.Volume;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** In-process storage measurements of the store: no HTTP, one JVM, one thread. */
public final class StoreMicro {
    private StoreMicro() {
    }


    @Command(name = "files-vs-needles", mixinStandardHelpOptions = true,
            description = "Write N objects as one file each in a directory tree, then as needles in one volume; "
                    + "then read a random sample of each.")
    public static final class FilesVsNeedles implements Callable<Integer> {
        @Option(names = "--count", defaultValue = "1000000") int count;
        @Option(names = "--size", defaultValue = "1024") int size;
        @Option(names = "--reads", defaultValue = "100000") int reads;
        @Option(names = "--dir", required = true, description = "scratch directory (emptied)") Path dir;
        @Option(names = "--fsync", defaultValue = "never", description = "never, or always (fsync each object)") String fsync;

        @Override
        public Integer call() throws Exception {
            boolean sync = fsync.equals("always");
            FileTrees.delete(dir);
            Files.createDirectories(dir);
            byte[] data = new byte[size];
            new Random(1).nextBytes(data);
            Path files = dir.resolve("files");
            long t0 = System.nanoTime();
            for (int i = 0; i < count; i++) {
                Path d = files.resolve(Integer.toString((i >>> 16) & 0xFF)).resolve(Integer.toString((i >>> 8) & 0xFF));
                if ((i & 0xFF) == 0 || i < 65536) {
                    Files.createDirectories(d);
                }
                try (FileChannel ch = FileChannel.open(d.resolve(Integer.toString(i)), StandardOpenOption.CREATE_NEW,
                        StandardOpenOption.WRITE)) {
                    ch.write(ByteBuffer.wrap(data));
                    if (sync) {
                        ch.force(true);
                    }
                }
            }
            double fileSecs = (System.nanoTime() - t0) / 1e9;
            Volume v = Volume.create(Files.createDirectories(dir.resolve("needles")), 1,
                    new Volume.Options(NeedleIndex.MAX_OFFSET, sync ? Volume.Fsync.ALWAYS : Volume.Fsync.NEVER));
            t0 = System.nanoTime();
            for (int i = 0; i < count; i++) {
                v.write(i, 0, i * 31L + 7, ByteBuffer.wrap(data));
            }
            v.flushIndex();
            double needleSecs = (System.nanoTime() - t0) / 1e9;
            Random rnd = new Random(2);
            t0 = System.nanoTime();
            for (int r = 0; r < reads; r++) {
                int i = rnd.nextInt(count);
                Path p = files.resolve(Integer.toString((i >>> 16) & 0xFF)).resolve(Integer.toString((i >>> 8) & 0xFF))
                        .resolve(Integer.toString(i));
                if (Files.readAllBytes(p).length != size) {
                    throw new IllegalStateException("short file " + p);
                }
            }
            double fileReadSecs = (System.nanoTime() - t0) / 1e9;
            t0 = System.nanoTime();
            for (int r = 0; r < reads; r++) {
                int i = rnd.nextInt(count);
                if (v.read(i, 0, i * 31L + 7).remaining() != size) {
                    throw new IllegalStateException("short needle " + i);
                }
            }
            double needleReadSecs = (System.nanoTime() - t0) / 1e9;
            v.close();
            System.out.printf(Locale.ROOT, "objects=%d size=%d fsync=%s%n", count, size, fsync);
            System.out.printf(Locale.ROOT, "files:   write %.0f objects/s (%.1f s), random read %.0f objects/s%n",
                    count / fileSecs, fileSecs, reads / fileReadSecs);
            System.out.printf(Locale.ROOT, "needles: write %.0f objects/s (%.1f s), random read %.0f objects/s%n",
                    count / needleSecs, needleSecs, reads / needleReadSecs);
            System.out.printf(Locale.ROOT, "needles/files: write x%.1f, read x%.1f%n", fileSecs / needleSecs,
                    fileReadSecs / needleReadSecs);
            FileTrees.delete(dir);
            return 0;
        }
    }

    @Command(name = "index-memory", mixinStandardHelpOptions = true,
            description = "Bytes per needle of the in-memory index, by array sizes and by heap used.")
    public static final class IndexMemory implements Callable<Integer> {
        @Option(names = "--needles", defaultValue = "10000000") int needles;
        @Option(names = "--hashmap-sample", defaultValue = "1000000",
                description = "entries of the HashMap<Long,long[]> reference") int sample;

        private static long used() {
            for (int i = 0; i < 3; i++) {
                System.gc();
            }
            Runtime rt = Runtime.getRuntime();
            return rt.totalMemory() - rt.freeMemory();
        }

        private static NeedleIndex fill(NeedleIndex idx, int n) {
            NeedleIndex.KeyCheck distinct = (off, key, alt) -> false; // every key below is distinct
            for (int i = 0; i < n; i++) {
                idx.put(i * 0x9E3779B97F4A7C15L, i & 3, 32 + 64L * i, 64, false, distinct);
            }
            return idx;
        }

        @Override
        public Integer call() {
            long before = used();
            NeedleIndex grown = fill(new NeedleIndex(0), needles);
            long after = used();
            report("grown from empty", grown, after - before);
            grown = null;
            before = used();
            NeedleIndex sized = fill(new NeedleIndex(needles), needles);
            after = used();
            report("sized from a count (restart from .idx)", sized, after - before);
            sized = null;
            before = used();
            HashMap<Long, long[]> map = new HashMap<>();
            for (int i = 0; i < sample; i++) {
                map.put(i * 0x9E3779B97F4A7C15L, new long[] {32 + 64L * i, 64});
            }
            after = used();
            System.out.printf(Locale.ROOT, "HashMap<Long,long[]> reference (%d entries): %.1f bytes/needle (heap)%n", sample,
                    (double) (after - before) / sample);
            return map.size() == sample ? 0 : 1;
        }

        private void report(String what, NeedleIndex idx, long heapDelta) {
            System.out.printf(Locale.ROOT, "%s: %d needles, capacity %d (load %.2f): %.2f bytes/needle by array sizes, "
                            + "%.2f by heap used after GC%n", what, idx.size(), idx.capacity(), (double) idx.size() / idx.capacity(),
                    (double) idx.memoryBytes() / idx.size(), (double) heapDelta / idx.size());
        }
    }

    @Command(name = "restart", mixinStandardHelpOptions = true,
            description = "Time to reopen a volume of N needles from its .idx (and, optionally, by a full scan).")
    public static final class Restart implements Callable<Integer> {
        @Option(names = "--needles", defaultValue = "10000000") int needles;
        @Option(names = "--size", defaultValue = "8", description = "data bytes per needle") int size;
        @Option(names = "--dir", required = true, description = "scratch directory (emptied)") Path dir;
        @Option(names = "--full-scan", description = "also time an open without the .idx") boolean fullScan;

        @Override
        public Integer call() throws Exception {
            FileTrees.delete(dir);
            Files.createDirectories(dir);
            Volume.Options opts = new Volume.Options(NeedleIndex.MAX_OFFSET, Volume.Fsync.NEVER);
            Volume v = Volume.create(dir, 1, opts);
            byte[] data = new byte[size];
            List<Volume.NeedleWrite> batch = new ArrayList<>();
            long t0 = System.nanoTime();
            for (int i = 0; i < needles; i++) {
                batch.add(new Volume.NeedleWrite(i * 0x9E3779B97F4A7C15L, 0, i, ByteBuffer.wrap(data)));
                if (batch.size() == 1000) {
                    v.write(batch);
                    batch.clear();
                    if (i % 1_000_000 == 999) {
                        v.flushIndex();
                    }
                }
            }
            v.write(batch);
            v.close();
            System.out.printf(Locale.ROOT, "wrote %d needles of %d bytes in %.1f s; volume %d MB, .idx %d MB%n", needles, size,
                    (System.nanoTime() - t0) / 1e9, Files.size(Volume.datPath(dir, 1)) >> 20,
                    Files.size(Volume.idxPath(dir, 1)) >> 20);
            for (int round = 0; round < 3; round++) {
                t0 = System.nanoTime();
                try (Volume r = Volume.open(dir, 1, opts)) {
                    double secs = (System.nanoTime() - t0) / 1e9;
                    System.out.printf(Locale.ROOT, "open from .idx (round %d): %.2f s, %d needles%n", round, secs,
                            r.status().needles());
                }
            }
            if (fullScan) {
                Files.delete(Volume.idxPath(dir, 1));
                t0 = System.nanoTime();
                try (Volume r = Volume.open(dir, 1, opts)) {
                    System.out.printf(Locale.ROOT, "open by full scan (no .idx): %.2f s, %d needles%n",
                            (System.nanoTime() - t0) / 1e9, r.status().needles());
                }
            }
            FileTrees.delete(dir);
            return 0;
        }
    }

    @Command(name = "hot-path", mixinStandardHelpOptions = true,
            description = "Index lookups (one thread), then concurrent random reads and writes of one volume.")
    public static final class HotPath implements Callable<Integer> {
        @Option(names = "--needles", defaultValue = "2000000", description = "needles in the index and the volume") int needles;
        @Option(names = "--lookups", defaultValue = "20000000") int lookups;
        @Option(names = "--size", defaultValue = "1024", description = "data bytes per needle") int size;
        @Option(names = "--readers", defaultValue = "4") int readers;
        @Option(names = "--writers", defaultValue = "2") int writers;
        @Option(names = "--seconds", defaultValue = "5") int seconds;
        @Option(names = "--fsync", defaultValue = "always", description = "always or never") String fsync;
        @Option(names = "--dir", required = true, description = "scratch directory (emptied)") Path dir;

        @Override
        public Integer call() throws Exception {
            // 1. index lookups of present keys, at the load a restart sizes the table for
            NeedleIndex idx = new NeedleIndex(needles);
            NeedleIndex.KeyCheck distinct = (off, key, alt) -> false;
            for (int i = 0; i < needles; i++) {
                idx.put(i * 0x9E3779B97F4A7C15L, i & 3, 32 + 64L * i, 64, false, distinct);
            }
            NeedleIndex.KeyCheck confirm = (off, key, alt) -> true;
            long sum = 0;
            for (int round = 0; round < 3; round++) {
                Random rnd = new Random(round);
                long t0 = System.nanoTime();
                for (int l = 0; l < lookups; l++) {
                    int i = rnd.nextInt(needles);
                    sum += idx.get(i * 0x9E3779B97F4A7C15L, i & 3, confirm);
                }
                System.out.printf(Locale.ROOT, "index lookup (round %d, %d needles, load %.2f): %.1f ns/lookup%n", round,
                        idx.size(), (double) idx.size() / idx.capacity(), (System.nanoTime() - t0) / (double) lookups);
            }
            idx = null;
            // 2. concurrent reads and writes
            FileTrees.delete(dir);
            Files.createDirectories(dir);
            Volume v = Volume.create(dir, 1, new Volume.Options(NeedleIndex.MAX_OFFSET,
                    fsync.equals("always") ? Volume.Fsync.ALWAYS : Volume.Fsync.NEVER));
            byte[] data = new byte[size];
            new Random(1).nextBytes(data);
            int preload = Math.min(needles, (int) ((NeedleIndex.MAX_OFFSET / 4) / (size + 64)));
            List<Volume.NeedleWrite> batch = new ArrayList<>();
            for (int i = 0; i < preload; i++) {
                batch.add(new Volume.NeedleWrite(i, 0, i * 31L + 7, ByteBuffer.wrap(data)));
                if (batch.size() == 1000 || i == preload - 1) {
                    v.write(batch);
                    batch.clear();
                }
            }
            v.flushIndex();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong reads = new AtomicLong();
            AtomicLong writes = new AtomicLong();
            ExecutorService pool = Executors.newFixedThreadPool(readers + writers);
            List<Future<?>> fs = new ArrayList<>();
            for (int r = 0; r < readers; r++) {
                int seed = r;
                fs.add(pool.submit(() -> {
                    Random rnd = new Random(seed);
                    long n = 0;
                    while (!stop.get()) {
                        int i = rnd.nextInt(preload);
                        if (v.read(i, 0, i * 31L + 7).remaining() != size) {
                            throw new IllegalStateException("short needle " + i);
                        }
                        n++;
                    }
                    reads.addAndGet(n);
                    return null;
                }));
            }
            for (int w = 0; w < writers; w++) {
                long base = (long) (w + 1) << 40;
                fs.add(pool.submit(() -> {
                    long n = 0;
                    while (!stop.get()) {
                        v.write(base + n, 0, 7, ByteBuffer.wrap(data));
                        n++;
                    }
                    writes.addAndGet(n);
                    return null;
                }));
            }
            long t0 = System.nanoTime();
            Thread.sleep(seconds * 1000L); // the measurement window
            stop.set(true);
            for (Future<?> f : fs) {
                f.get();
            }
            double secs = (System.nanoTime() - t0) / 1e9;
            pool.shutdown();
            v.close();
            System.out.printf(Locale.ROOT, "read+write (%d readers, %d writers, %d B, fsync %s, %d needles): "
                            + "%.0f reads/s, %.0f writes/s%n", readers, writers, size, fsync, preload,
                    reads.get() / secs, writes.get() / secs);
            FileTrees.delete(dir);
            return sum == 42 ? 1 : 0;
        }
    }
}
