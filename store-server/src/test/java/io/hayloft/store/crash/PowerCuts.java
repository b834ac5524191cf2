package io.hayloft.store.crash;

import io.hayloft.serverkit.io.SimulatedDisk;
import io.hayloft.store.Store;
import io.hayloft.store.StoreConfig;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the power-cut tests of this package share: the concurrent tests' store and data, one schedule
 * per seed, a cut armed before the n-th fsync, the end of a concurrent schedule (writers joined, a cut if none came, the store crashed), and a buffer's bytes.
 * Stateless; the hooks it arms are the disk's.
 */
final class PowerCuts {

    private PowerCuts() {
    }

    /** A store on one simulated data directory, fsync always, its {@code .idx} flushed every millisecond. */
    static StoreConfig concurrentConfig(String dataDir) {
        StoreConfig c = new StoreConfig();
        c.dataDirs = new ArrayList<>(List.of(dataDir));
        c.fsync = "always";
        c.volumeSizeLimit = 64L << 20;
        c.idxFlushMillis = 1;
        return c;
    }

    /** The bytes of version {@code version} of {@code key}: fewer than {@code max}, the same on every call. */
    static byte[] data(long key, int version, int max) {
        Random r = new Random(key * 1_000_003L + version);
        byte[] b = new byte[r.nextInt(max)];
        r.nextBytes(b);
        return b;
    }

    /** One schedule of a power-cut test, for {@link #eachSeed}. */
    interface Schedule {
        void run(long seed) throws Exception;
    }

    /** Runs {@code schedule} for seeds 0 to {@code seeds - 1}; a failure names its seed. */
    static void eachSeed(int seeds, Schedule schedule) {
        for (long seed = 0; seed < seeds; seed++) {
            try {
                schedule.run(seed);
            } catch (AssertionError | Exception e) {
                throw new AssertionError("seed " + seed + ": " + e, e);
            }
        }
    }

    /** Cuts the power of {@code disk} just before its {@code n}-th force (1-based) from now. */
    static void cutBeforeForce(SimulatedDisk disk, long n) {
        AtomicLong forces = new AtomicLong();
        disk.beforeForce(p -> {
            if (forces.incrementAndGet() == n) {
                disk.powerCut();
            }
        });
    }

    /**
     * Joins {@code writers} (2 minutes each at most), shuts {@code pool} down, disarms the cut, cuts
     * the power if no cut came, then crashes and closes {@code store}: the disk holds what survived.
     */
    static void joinAndCrash(List<Future<?>> writers, ExecutorService pool, SimulatedDisk disk, Store store)
            throws Exception {
        for (Future<?> f : writers) {
            f.get(2, TimeUnit.MINUTES);
        }
        pool.shutdown();
        disk.beforeForce(null);
        if (disk.powerCuts() == 0) {
            disk.powerCut();
        }
        store.crash();
        store.close();
    }

    /** The remaining bytes of {@code b}, without moving its position. */
    static byte[] array(ByteBuffer b) {
        byte[] a = new byte[b.remaining()];
        b.duplicate().get(a);
        return a;
    }
}
