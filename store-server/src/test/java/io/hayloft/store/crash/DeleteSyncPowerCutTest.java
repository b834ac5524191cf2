package io.hayloft.store.crash;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.serverkit.io.SimulatedDisk;
import io.hayloft.format.wire.Wire;
import io.hayloft.store.Store;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreOperationException;
import io.hayloft.store.volume.AppliedDeletes;
import io.hayloft.store.volume.Volume;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Applying a delete log ({@link Store#applyDeletes}) with a power cut at a random fsync or
 * directory sync of a {@link SimulatedDisk}: after the restart, the applied sequence in
 * {@code N.dseq} never runs ahead of durable deletes (every entry up to it is deleted), never falls
 * behind an apply that returned, and applying on from it finishes the job. Under both fsync
 * policies: the sync forces its deletes whatever the policy.
 */
class DeleteSyncPowerCutTest {
    private static final String DIR = "/sim/deletesync";
    private static final int KEYS = 48;
    private static final int BATCH = 5;

    private static StoreConfig config(boolean never) {
        StoreConfig c = new StoreConfig();
        c.dataDirs = new ArrayList<>(List.of(DIR));
        c.fsync = never ? "never" : "always";
        c.volumeSizeLimit = 1 << 20;
        c.idxFlushMillis = Integer.MAX_VALUE;
        return c;
    }

    /** Key of entry {@code seq}: spread over the unsigned 64-bit range. */
    private static long key(long seq) {
        return seq * 0x9E3779B97F4A7C15L;
    }

    private static long cookie(long seq) {
        return -seq;
    }

    private static List<Wire.DeleteEntry> entries(long from, long to) {
        List<Wire.DeleteEntry> out = new ArrayList<>();
        for (long s = from; s <= to; s++) {
            out.add(new Wire.DeleteEntry(s, key(s), Long.toHexString(cookie(s)), 2));
        }
        return out;
    }

    private static void applyFrom(Store store, long applied) throws Exception {
        for (long s = applied + 1; s <= KEYS; s += BATCH) {
            long upTo = Math.min(KEYS, s + BATCH - 1);
            store.applyDeletes(1, entries(s, upTo), upTo);
        }
    }

    @Test
    void theAppliedSequenceNeverRunsAheadOfDurableDeletes() throws Exception {
        int cutsInsideApply = 0;
        for (int seed = 0; seed < 40; seed++) {
            boolean never = seed % 2 == 1;
            SimulatedDisk disk = new SimulatedDisk(seed);
            Random r = new Random(seed);
            Store store = new Store(config(never), disk);
            Volume v = store.create(1);
            List<Volume.NeedleWrite> writes = new ArrayList<>();
            for (long s = 1; s <= KEYS; s++) {
                writes.add(new Volume.NeedleWrite(key(s), 0, cookie(s), ByteBuffer.wrap(new byte[] {1, 2, 3})));
                writes.add(new Volume.NeedleWrite(key(s), -1, cookie(s), ByteBuffer.allocate(0)));
                writes.add(new Volume.NeedleWrite(key(s), 7, cookie(s) + 1, ByteBuffer.wrap(new byte[] {9}))); // another cookie
            }
            v.write(writes);
            v.forceDeletes(); // the needles are durable under either policy
            v.flushIndex();
            int cutAt = 1 + r.nextInt(KEYS / BATCH * 4);
            PowerCuts.cutBeforeForce(disk, cutAt);
            long returned = 0;
            try {
                for (long s = 1; s <= KEYS; s += BATCH) {
                    long upTo = Math.min(KEYS, s + BATCH - 1);
                    store.applyDeletes(1, entries(s, upTo), upTo);
                    returned = upTo;
                }
            } catch (Exception e) {
                assertThat(disk.powerCuts()).as("only the cut may fail an apply: %s", e).isEqualTo(1);
                cutsInsideApply++;
            }
            disk.beforeForce(null);
            if (disk.powerCuts() == 0) {
                disk.powerCut();
            }
            store.crash();
            store = new Store(config(never), disk);
            try {
                long applied = store.appliedDeletes(1);
                assertThat(applied).as("seed %d", seed).isGreaterThanOrEqualTo(returned).isLessThanOrEqualTo(KEYS);
                Volume again = store.volume(1);
                for (long s = 1; s <= KEYS; s++) {
                    long seq = s;
                    if (s <= applied) {
                        assertThat(again.liveAlts(key(s), cookie(s))).as("seed %d entry %d of %d applied", seed, s, applied)
                                .isEmpty();
                        assertThatThrownBy(() -> again.read(key(seq), 0, cookie(seq)))
                                .isInstanceOfSatisfying(StoreOperationException.class,
                                        e -> assertThat(e.reason()).isEqualTo(StoreOperationException.Reason.NEEDLE_NOT_FOUND));
                    }
                    assertThat(again.liveAlts(key(s), cookie(s) + 1)).as("another cookie is untouched")
                            .containsExactly(new Volume.LiveAlt(7, 1));
                }
                applyFrom(store, applied);
                assertThat(store.appliedDeletes(1)).isEqualTo(KEYS);
                for (long s = 1; s <= KEYS; s++) {
                    assertThat(again.liveAlts(key(s), cookie(s))).isEmpty();
                }
            } finally {
                store.close();
            }
            store = new Store(config(never), disk);
            assertThat(store.appliedDeletes(1)).isEqualTo(KEYS);
            store.close();
        }
        assertThat(cutsInsideApply).as("cuts that hit an apply").isGreaterThan(10);
    }

    @Test
    void theFileIsCheckedAndAnUnknownVersionRefused() throws Exception {
        SimulatedDisk disk = new SimulatedDisk(1);
        Path dir = Path.of(DIR);
        disk.createDirectories(dir);
        assertThat(AppliedDeletes.read(disk, dir, 3)).isZero();
        for (long seq : new long[] {0, 1, 150, Long.MAX_VALUE}) {
            AppliedDeletes.write(disk, dir, 3, seq);
            assertThat(AppliedDeletes.read(disk, dir, 3)).isEqualTo(seq);
        }
        assertThat(disk.size(AppliedDeletes.path(dir, 3))).isEqualTo(AppliedDeletes.SIZE);
        assertThatThrownBy(() -> AppliedDeletes.write(disk, dir, 3, -1)).hasMessageContaining("-1");
        try (FileChannel ch = disk.open(AppliedDeletes.path(dir, 3), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(new byte[] {0x55}), 12); // a flipped byte of the sequence
        }
        assertThat(AppliedDeletes.read(disk, dir, 3)).as("a bad CRC: apply the log again from the start").isZero();
        try (FileChannel ch = disk.open(AppliedDeletes.path(dir, 3), StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.allocate(4).putInt(0, 2), 4);
        }
        assertThatThrownBy(() -> AppliedDeletes.read(disk, dir, 3)).hasMessageContaining("version 2");
        AppliedDeletes.delete(disk, dir, 3);
        assertThat(AppliedDeletes.read(disk, dir, 3)).isZero();
    }
}
