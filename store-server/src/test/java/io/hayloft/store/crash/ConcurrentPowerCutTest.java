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
import org.junit.jupiter.api.Test;

/**
 * Concurrent writers (group commit) and the background {@code .idx} flusher running every
 * millisecond, with a power cut before a random fsync: every acknowledged write reads back exact,
 * every write in flight reads back exact or not at all. Each writer owns its keys; the threads are
 * joined (no sleeps) and the outcome does not depend on timing, only on what was acknowledged.
 */
class ConcurrentPowerCutTest {
    private static final int WRITERS = 6;

    private static StoreConfig config() {
        return PowerCuts.concurrentConfig("/sim/concurrent");
    }

    private static byte[] data(long key, int version) {
        return PowerCuts.data(key, version, 3000);
    }

    @Test
    void acknowledgedConcurrentWritesSurviveAPowerCut() throws Exception {
        int seeds = Integer.getInteger("powercut.seeds", 150) / 5;
        PowerCuts.eachSeed(seeds, this::run);
    }

    private void run(long seed) throws Exception {
        SimulatedDisk disk = new SimulatedDisk(seed);
        Store store = new Store(config(), disk);
        Volume v = store.create(1);
        long cutAt = 5 + new Random(seed).nextInt(80);
        PowerCuts.cutBeforeForce(disk, cutAt);
        Map<Long, Integer> acked = new ConcurrentHashMap<>();
        Map<Long, Integer> inFlight = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(WRITERS);
        List<Future<?>> writers = new ArrayList<>();
        for (int t = 0; t < WRITERS; t++) {
            long base = (long) t << 40;
            writers.add(pool.submit(() -> {
                for (int i = 0; disk.powerCuts() == 0 && i < 200; i++) {
                    long key = base + i % 15;
                    int version = i;
                    inFlight.put(key, version);
                    try {
                        v.write(key, 0, key, ByteBuffer.wrap(data(key, version)));
                    } catch (Exception e) {
                        assertThat(disk.powerCuts()).as("a write failed without a power cut: %s", e).isPositive();
                        return null;
                    }
                    acked.put(key, version);
                    inFlight.remove(key);
                }
                return null;
            }));
        }
        PowerCuts.joinAndCrash(writers, pool, disk, store);
        Store again = new Store(config(), disk);
        try {
            Volume r = again.volume(1);
            for (int t = 0; t < WRITERS; t++) {
                for (int k = 0; k < 15; k++) {
                    long key = ((long) t << 40) + k;
                    Integer ack = acked.get(key);
                    Integer flying = inFlight.get(key);
                    byte[] got;
                    try {
                        got = PowerCuts.array(r.read(key, 0, key));
                    } catch (StoreOperationException e) {
                        assertThat(e.reason()).as("key %d", key).isEqualTo(StoreOperationException.Reason.NEEDLE_NOT_FOUND);
                        got = null;
                    }
                    boolean ok = ack == null && flying == null ? got == null
                            : ack != null && Arrays.equals(got, data(key, ack))
                            || flying != null && Arrays.equals(got, data(key, flying))
                            || ack == null && got == null;
                    assertThat(ok).as("key %d reads %s; acknowledged version %s, in flight %s", key,
                            got == null ? "nothing" : got.length + " bytes", ack, flying).isTrue();
                }
            }
            r.write(7, 0, 7, ByteBuffer.wrap(new byte[] {1, 2, 3}));
        } finally {
            again.close();
        }
    }
}
