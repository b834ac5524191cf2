package io.hayloft.store.crash;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import io.hayloft.serverkit.io.SimulatedDisk;
import io.hayloft.store.Store;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreOperationException;
import io.hayloft.store.volume.CompactionCommit;
import io.hayloft.store.volume.Compactor;
import io.hayloft.store.volume.Volume;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Seeded random schedules of writes, batches, overwrites, deletes, {@code .idx} flushes, seals and
 * compactions against a {@link Store} on a {@link SimulatedDisk}, with a power cut at a random
 * fsync (of a file or a directory, so also between the steps of a compaction commit) or at a
 * random compaction commit step; then the store is crashed, reopened on the same disk and
 * compared with a reference model. Several rounds per seed (recovering recovered state).
 *
 * <p>The model, per (volume, key, alternate key), is the set of outcomes a read may have:
 * an acknowledged write reads back byte-exact, an acknowledged delete stays deleted, and an
 * operation in flight at the cut leaves either its outcome or the previous one (never garbage,
 * never an error other than not-found). After each recovery the observed outcome becomes the
 * only allowed one (recovery forces what it found), and a writable volume must take writes again.
 */
class PowerCutTest {
    private static final String DIR = "/sim/powercut";
    private static final int ROUNDS = 3;
    private static final long[] SPECIAL_KEYS = {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE, 0xFFFF_FFFFL, 1L << 32};
    private static final int[] SPECIAL_ALTS = {0, 1, -1, Integer.MIN_VALUE, Integer.MAX_VALUE};

    /** What a read of one needle may return: a list of allowed data, null meaning not found. */
    private static final class Outcomes {
        final List<byte[]> allowed = new ArrayList<>();

        Outcomes(byte[] only) {
            allowed.add(only);
        }

        boolean permits(byte[] got) {
            for (byte[] a : allowed) {
                if (a == null ? got == null : got != null && Arrays.equals(a, got)) {
                    return true;
                }
            }
            return false;
        }
    }

    private record Id(long volume, long key, int alt) {
        long cookie() {
            return key * 31 + alt;
        }
    }

    private final Map<Id, Outcomes> model = new HashMap<>();
    /** fsync=never: acknowledgements promise nothing across a power cut; reads must still be sane. */
    private boolean never;

    private StoreConfig config() {
        StoreConfig c = new StoreConfig();
        c.dataDirs = new ArrayList<>(List.of(DIR));
        c.fsync = never ? "never" : "always";
        c.volumeSizeLimit = 1 << 20;
        c.idxFlushMillis = Integer.MAX_VALUE; // the test flushes the .idx itself, at random points
        return c;
    }

    @Test
    void acknowledgedWritesAndDeletesSurvivePowerCuts() throws Exception {
        never = false;
        runSeeds(Integer.getInteger("powercut.seeds", 150));
    }

    /**
     * With fsync=never an acknowledged write or delete may be lost at a power cut, but a read
     * returns one of the values written since the last recovery, the value read then, or not
     * found: never garbage, never another error; the volume opens and takes writes again.
     */
    @Test
    void withFsyncNeverReadsAfterAPowerCutAreStillSane() throws Exception {
        never = true;
        runSeeds(Integer.getInteger("powercut.seeds", 150) / 2);
    }

    private void runSeeds(int seeds) throws Exception {
        long base = Long.getLong("powercut.seed", 20261123L);
        AtomicLong cuts = new AtomicLong();
        AtomicLong torn = new AtomicLong();
        AtomicLong lost = new AtomicLong();
        for (long seed = base; seed < base + seeds; seed++) {
            model.clear();
            try {
                runSchedule(seed, cuts, torn, lost);
            } catch (AssertionError | Exception e) {
                throw new AssertionError("power-cut schedule failed (fsync " + (never ? "never" : "always")
                        + "); reproduce with -Dpowercut.seed=" + seed + " -Dpowercut.seeds=1: " + e, e);
            }
        }
        assertThat(cuts.get()).isGreaterThanOrEqualTo(seeds * (long) ROUNDS);
        assertThat(lost.get()).as("bytes the cuts dropped").isPositive();
        if (seeds >= 20) {
            assertThat(torn.get()).as("writes the cuts tore").isPositive();
        }
    }

    private void runSchedule(long seed, AtomicLong cuts, AtomicLong torn, AtomicLong lost) throws Exception {
        SimulatedDisk disk = new SimulatedDisk(seed);
        Random r = new Random(seed);
        List<Long> keys = new ArrayList<>();
        for (long k : SPECIAL_KEYS) {
            keys.add(k);
        }
        for (int i = 0; i < 12; i++) {
            keys.add(r.nextLong());
        }
        long nextVolume = 1;
        Store store = new Store(config(), disk);
        for (int round = 0; round < ROUNDS; round++) {
            long cutsBefore = disk.powerCuts();
            int cutAtForce = 1 + r.nextInt(60);
            PowerCuts.cutBeforeForce(disk, cutAtForce);
            int ops = 0;
            while (disk.powerCuts() == cutsBefore && ops++ < 200) {
                Volume v = writable(store);
                if (v == null) {
                    try {
                        v = store.create(nextVolume++);
                    } catch (Exception e) {
                        if (disk.powerCuts() == cutsBefore) {
                            throw e;
                        }
                        break;
                    }
                }
                nextVolume = Math.max(nextVolume, v.id() + 1);
                step(disk, store, v, r, keys);
            }
            disk.beforeForce(null);
            if (disk.powerCuts() == cutsBefore) {
                disk.powerCut(); // the schedule ended first
            }
            cuts.incrementAndGet();
            store.crash();
            store.close(); // also harmless after a cut: the dead session writes nothing
            store = new Store(config(), disk);
            verifyAndCollapse(store);
            Volume w = writable(store);
            if (w != null) {
                Id id = new Id(w.id(), r.nextLong(), r.nextInt());
                byte[] data = data(r, 100);
                inFlight(id, data);
                w.write(id.key(), id.alt(), id.cookie(), ByteBuffer.wrap(data));
                ack(id, data);
                assertThat(PowerCuts.array(w.read(id.key(), id.alt(), id.cookie()))).isEqualTo(data);
            }
        }
        store.close();
        torn.addAndGet(disk.tornWrites());
        lost.addAndGet(disk.bytesLost());
    }

    private static Volume writable(Store store) {
        for (Volume v : store.volumes()) {
            if (!v.readOnly()) {
                return v;
            }
        }
        return null;
    }

    private static byte[] data(Random r, int max) {
        int n = r.nextInt(20) == 0 ? (64 << 10) + r.nextInt(200 << 10) : r.nextInt(max + 1);
        byte[] b = new byte[n];
        r.nextBytes(b);
        return b;
    }

    private Id pick(Random r, long volume, List<Long> keys) {
        int alt = r.nextInt(3) == 0 ? SPECIAL_ALTS[r.nextInt(SPECIAL_ALTS.length)] : r.nextInt(4);
        return new Id(volume, keys.get(r.nextInt(keys.size())), alt);
    }

    /** An acknowledged write (or delete, {@code data == null}): under fsync=always the only outcome left. */
    private void ack(Id id, byte[] data) {
        if (!never) {
            model.put(id, new Outcomes(data));
        }
    }

    /** Marks {@code id} in flight towards {@code next}: until acknowledged either outcome may be read. */
    private Outcomes inFlight(Id id, byte[] next) {
        Outcomes before = model.get(id);
        Outcomes o = new Outcomes(next);
        if (before == null) {
            o.allowed.add(null);
        } else {
            o.allowed.addAll(before.allowed);
        }
        model.put(id, o);
        return o;
    }

    private void step(SimulatedDisk disk, Store store, Volume v, Random r, List<Long> keys) throws Exception {
        int op = r.nextInt(100);
        long cutsBefore = disk.powerCuts();
        try {
            if (op < 55) {
                Id id = pick(r, v.id(), keys);
                byte[] data = data(r, 4096);
                inFlight(id, data);
                v.write(id.key(), id.alt(), id.cookie(), ByteBuffer.wrap(data));
                ack(id, data);
            } else if (op < 67) {
                int n = 1 + r.nextInt(6);
                Map<Id, byte[]> batch = new HashMap<>();
                List<Volume.NeedleWrite> writes = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    Id id = pick(r, v.id(), keys);
                    if (batch.containsKey(id)) {
                        continue;
                    }
                    byte[] data = data(r, 2048);
                    batch.put(id, data);
                    writes.add(new Volume.NeedleWrite(id.key(), id.alt(), id.cookie(), ByteBuffer.wrap(data)));
                    inFlight(id, data);
                }
                v.write(writes);
                batch.forEach(this::ack);
            } else if (op < 82) {
                Id id = pick(r, v.id(), keys);
                Outcomes o = model.get(id);
                if (o == null || !never && o.allowed.size() != 1 || o.allowed.get(0) == null) {
                    return;
                }
                inFlight(id, null);
                v.delete(id.key(), id.alt(), id.cookie());
                ack(id, null);
            } else if (op < 92) {
                v.flushIndex();
            } else if (op < 98) {
                if (r.nextBoolean()) {
                    Compactor.compact(v);
                } else {
                    CompactionCommit.Step[] steps = CompactionCommit.Step.values();
                    CompactionCommit.Step at = steps[r.nextInt(steps.length)];
                    Compactor.compact(v, s -> {
                        if (s == at) {
                            disk.powerCut();
                            throw new CompactionCommit.SimulatedCrash(s);
                        }
                    });
                }
            } else {
                v.seal();
            }
        } catch (StoreOperationException e) {
            if (disk.powerCuts() != cutsBefore) {
                return;
            }
            if (e.reason() != StoreOperationException.Reason.VOLUME_READ_ONLY
                    && !(never && e.reason() == StoreOperationException.Reason.NEEDLE_NOT_FOUND)) {
                throw e;
            }
            // refused before anything was written (full or sealed volume): the in-flight outcomes stay allowed
        } catch (Exception e) {
            if (disk.powerCuts() == cutsBefore) {
                throw e; // a failure without a power cut is a bug
            }
        }
    }

    private void verifyAndCollapse(Store store) throws Exception {
        for (Map.Entry<Id, Outcomes> e : model.entrySet()) {
            Id id = e.getKey();
            byte[] got;
            try {
                got = PowerCuts.array(store.volume(id.volume()).read(id.key(), id.alt(), id.cookie()));
            } catch (StoreOperationException x) {
                if (x.reason() != StoreOperationException.Reason.NEEDLE_NOT_FOUND) {
                    throw new AssertionError("needle " + id + ": " + x, x);
                }
                got = null;
            }
            if (!e.getValue().permits(got)) {
                fail("needle %s reads %s after the cut; allowed: %s", id, describe(got), e.getValue().allowed.stream()
                        .map(PowerCutTest::describe).toList());
            }
            e.setValue(new Outcomes(got));
        }
    }

    private static String describe(byte[] b) {
        return b == null ? "not found" : b.length + " bytes (hash " + Arrays.hashCode(b) + ")";
    }
}
