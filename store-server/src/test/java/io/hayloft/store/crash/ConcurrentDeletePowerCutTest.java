package io.hayloft.store.crash;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.serverkit.io.SimulatedDisk;
import io.hayloft.store.Store;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreOperationException;
import io.hayloft.store.volume.Volume;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Concurrent writers and deleters sharing the group commit (no fsync under the append lock), the
 * background {@code .idx} flusher running every millisecond, and a power cut before a random
 * fsync: every acknowledged write reads back exact unless a later delete of it began, every
 * acknowledged delete stays deleted, and an operation in flight leaves the key as it was before
 * or as it would be after. Each writer owns its keys; threads are joined, no sleeps.
 */
class ConcurrentDeletePowerCutTest {
    private static final int WRITERS = 6;
    private static final int KEYS = 12;
    /** A model value: the key holds nothing. */
    private static final int NONE = -1;
    /** Deletes acknowledged over all seeds: the test must exercise them. */
    private final AtomicLong ackedDeletes = new AtomicLong();

    private static StoreConfig config() {
        return PowerCuts.concurrentConfig("/sim/concurrent-deletes");
    }

    private static byte[] data(long key, int version) {
        return PowerCuts.data(key, version, 2000);
    }

    private static long key(int writer, int k) {
        return ((long) writer << 59) ^ (k * 0x9E3779B97F4A7C15L);
    }

    @Test
    void acknowledgedWritesAndDeletesSurviveAPowerCut() throws Exception {
        int seeds = Integer.getInteger("powercut.seeds", 150) / 5;
        PowerCuts.eachSeed(seeds, this::run);
        assertThat(ackedDeletes.get()).isGreaterThan(seeds);
    }

    private void run(long seed) throws Exception {
        SimulatedDisk disk = new SimulatedDisk(seed);
        Store store = new Store(config(), disk);
        Volume v = store.create(1);
        long cutAt = 5 + new Random(seed).nextInt(120);
        PowerCuts.cutBeforeForce(disk, cutAt);
        // key -> acknowledged state (a version, or NONE); key -> the state an operation in flight leads to
        Map<Long, Integer> acked = new ConcurrentHashMap<>();
        Map<Long, Integer> inFlight = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(WRITERS);
        List<Future<?>> writers = new ArrayList<>();
        for (int t = 0; t < WRITERS; t++) {
            int writer = t;
            writers.add(pool.submit(() -> {
                Random rnd = new Random(seed * 100 + writer);
                for (int i = 0; disk.powerCuts() == 0 && i < 200; i++) {
                    long key = key(writer, rnd.nextInt(KEYS));
                    int alt = (int) key; // any of the 2^32 alternate keys
                    int cur = acked.getOrDefault(key, NONE);
                    boolean delete = cur != NONE && rnd.nextInt(3) == 0;
                    int next = delete ? NONE : i;
                    inFlight.put(key, next);
                    try {
                        if (delete) {
                            v.delete(key, alt, key);
                        } else {
                            v.write(key, alt, key, ByteBuffer.wrap(data(key, i)));
                        }
                    } catch (Exception e) {
                        assertThat(disk.powerCuts()).as("an operation failed without a power cut: %s", e).isPositive();
                        return null;
                    }
                    acked.put(key, next);
                    inFlight.remove(key);
                    if (delete) {
                        ackedDeletes.incrementAndGet();
                    }
                }
                return null;
            }));
        }
        PowerCuts.joinAndCrash(writers, pool, disk, store);
        Store again = new Store(config(), disk);
        try {
            Volume r = again.volume(1);
            for (int t = 0; t < WRITERS; t++) {
                for (int k = 0; k < KEYS; k++) {
                    long key = key(t, k);
                    int ack = acked.getOrDefault(key, NONE);
                    Integer flying = inFlight.get(key);
                    byte[] got;
                    try {
                        got = PowerCuts.array(r.read(key, (int) key, key));
                    } catch (StoreOperationException e) {
                        assertThat(e.reason()).as("key %s", Long.toUnsignedString(key))
                                .isEqualTo(StoreOperationException.Reason.NEEDLE_NOT_FOUND);
                        got = null;
                    }
                    boolean ok = matches(got, key, ack) || flying != null && matches(got, key, flying);
                    assertThat(ok).as("key %s reads %s; acknowledged %s, in flight %s", Long.toUnsignedString(key),
                            got == null ? "nothing" : got.length + " bytes", ack, flying).isTrue();
                }
            }
            r.write(7, 0, 7, ByteBuffer.wrap(new byte[] {1, 2, 3}));
        } finally {
            again.close();
        }
    }

    private static boolean matches(byte[] got, long key, int state) {
        return state == NONE ? got == null : Arrays.equals(got, data(key, state));
    }
}
