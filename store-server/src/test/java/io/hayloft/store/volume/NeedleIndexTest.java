package io.hayloft.store.volume;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class NeedleIndexTest {
    /** The truth: what needle header sits at each offset. */
    private final Map<Long, long[]> disk = new HashMap<>();
    private final NeedleIndex.KeyCheck check = (off, key, alt) -> {
        long[] h = disk.get(off);
        return h != null && h[0] == key && h[1] == alt;
    };

    private void put(NeedleIndex idx, long key, int alt, long off, long len, boolean del) {
        disk.put(off, new long[] {key, alt});
        idx.put(key, alt, off, len, del, check);
    }

    @Test
    void matchesAModelThroughGrowthOverwritesAndDeletes() {
        NeedleIndex idx = new NeedleIndex(0);
        Map<String, long[]> model = new HashMap<>();
        Random rnd = new Random(42);
        long off = 32;
        for (int i = 0; i < 200_000; i++) {
            long key = rnd.nextInt(50_000);
            int alt = rnd.nextInt(4);
            long len = 8L * (6 + rnd.nextInt(100));
            if (rnd.nextInt(10) == 0 && model.containsKey(key + "/" + alt)) {
                long[] e = model.get(key + "/" + alt);
                assertThat(idx.markDeletedAt(key, alt, e[0])).isTrue();
                e[2] = 1;
            } else {
                put(idx, key, alt, off, len, false);
                model.put(key + "/" + alt, new long[] {off, len, 0});
                off += len;
            }
        }
        assertThat(idx.size()).isEqualTo(model.size());
        int deleted = 0;
        for (Map.Entry<String, long[]> e : model.entrySet()) {
            String[] ka = e.getKey().split("/");
            long got = idx.get(Long.parseLong(ka[0]), Integer.parseInt(ka[1]), check);
            assertThat(NeedleIndex.offset(got)).isEqualTo(e.getValue()[0]);
            assertThat(NeedleIndex.length(got)).isEqualTo(e.getValue()[1]);
            assertThat(NeedleIndex.isDeleted(got)).isEqualTo(e.getValue()[2] == 1);
            deleted += (int) e.getValue()[2];
        }
        assertThat(idx.deletedCount()).isEqualTo(deleted);
        assertThat(idx.get(999_999, 0, check)).isZero();
    }

    @Test
    void bulkBuildEqualsOneByOnePuts() {
        Random rnd = new Random(7);
        NeedleIndex one = new NeedleIndex(0);
        NeedleIndex.Builder bulk = new NeedleIndex.Builder(10);
        NeedleIndex.SameKey same = (a, b) -> {
            long[] x = disk.get(a);
            long[] y = disk.get(b);
            return x[0] == y[0] && x[1] == y[1];
        };
        long off = 32;
        List<long[]> written = new ArrayList<>();
        for (int i = 0; i < 100_000; i++) {
            int r = rnd.nextInt(10);
            if (r == 0 && !written.isEmpty()) { // a delete record of an earlier needle
                long[] w = written.get(rnd.nextInt(written.size()));
                one.markDeletedAt(w[0], (int) w[1], w[2]);
                bulk.add(w[0], (int) w[1], w[2], w[3], true);
                continue;
            }
            long key = rnd.nextInt(30_000);
            int alt = rnd.nextInt(2);
            long len = 8L * (6 + rnd.nextInt(50));
            put(one, key, alt, off, len, false);
            bulk.add(key, alt, off, len, false);
            written.add(new long[] {key, alt, off, len});
            off += len;
        }
        NeedleIndex built = bulk.build(same);
        assertThat(built.size()).isEqualTo(one.size());
        assertThat(built.deletedCount()).isEqualTo(one.deletedCount());
        for (long[] w : written) {
            assertThat(built.get(w[0], (int) w[1], check)).as("key %d/%d", w[0], w[1]).isEqualTo(one.get(w[0], (int) w[1], check));
        }
    }

    @Test
    void radixSortIsStableAndUnsigned() {
        int[] tags = {5, -1, 3, 5, Integer.MIN_VALUE, 0};
        long[] vals = {1, 2, 3, 4, 5, 6};
        NeedleIndex.radixSortByTag(tags, vals, 6, new int[6], new long[6]);
        assertThat(tags).containsExactly(0, 3, 5, 5, Integer.MIN_VALUE, -1);
        assertThat(vals).containsExactly(6, 3, 1, 4, 5, 2);
    }

    @Test
    void highestOffsetWinsWhateverTheReplayOrder() {
        NeedleIndex idx = new NeedleIndex(4);
        put(idx, 7, 1, 800, 64, false);
        put(idx, 7, 1, 80, 64, false); // an older record replayed later
        assertThat(NeedleIndex.offset(idx.get(7, 1, check))).isEqualTo(800);
        assertThat(idx.isLiveAt(7, 1, 80)).isFalse();
        assertThat(idx.isLiveAt(7, 1, 800)).isTrue();
        assertThat(idx.size()).isEqualTo(1);
    }

    @Test
    void keysThatDifferOnlyInAltAreDistinct() {
        NeedleIndex idx = new NeedleIndex(4);
        for (int alt = 0; alt < 4; alt++) {
            put(idx, 1, alt, 32 + 64L * alt, 64, false);
        }
        for (int alt = 0; alt < 4; alt++) {
            assertThat(NeedleIndex.offset(idx.get(1, alt, check))).isEqualTo(32 + 64L * alt);
        }
    }

    @Test
    void refusesOffsetsAndLengthsItCannotPack() {
        NeedleIndex idx = new NeedleIndex(4);
        assertThatThrownBy(() -> idx.put(1, 0, 0, 64, false, check)).hasMessageContaining("offset 0");
        assertThatThrownBy(() -> idx.put(1, 0, 33, 64, false, check)).hasMessageContaining("offset 33");
        assertThatThrownBy(() -> idx.put(1, 0, 32, NeedleIndex.MAX_LENGTH + 8, false, check)).hasMessageContaining("length");
    }

    @Test
    void costsTwelveBytesPerSlot() {
        NeedleIndex idx = new NeedleIndex(1_000_000);
        assertThat(idx.memoryBytes()).isEqualTo(32 + 12L * idx.capacity());
        assertThat((double) idx.memoryBytes() / 1_000_000).isLessThan(14.0);
    }

    @Test
    void findsTheOffsetsOfEveryAltOfAKey() {
        NeedleIndex idx = new NeedleIndex(0); // grows many times on the way
        long[] keys = {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE, 1L << 32};
        int[] alts = {0, 1, 150, Integer.MIN_VALUE, -1};
        Map<Long, Set<Long>> expected = new HashMap<>();
        long off = 32;
        for (int round = 0; round < 200; round++) {
            for (long k : keys) {
                long key = k + round * 7919L;
                for (int alt : alts) {
                    put(idx, key, alt, off, 64, false);
                    expected.computeIfAbsent(key, x -> new HashSet<>()).add(off);
                    off += 64;
                }
            }
        }
        for (var e : expected.entrySet()) {
            Set<Long> got = new HashSet<>();
            idx.offsetsOfKey(e.getKey(), got::add);
            assertThat(got).as("key %s", Long.toUnsignedString(e.getKey())).containsAll(e.getValue());
            assertThat(got.size()).isLessThan(e.getValue().size() + 3); // a shared 32-bit tag is rare
        }
        Set<Long> none = new HashSet<>();
        idx.offsetsOfKey(424242424242L, none::add);
        assertThat(none).isEmpty();

        // The same needles through the bulk build of a restart: every alt of a key still in its probe run.
        Map<Long, long[]> at = new HashMap<>();
        NeedleIndex.Builder b = new NeedleIndex.Builder(16);
        long o = 32;
        for (int round = 0; round < 200; round++) {
            for (long k : keys) {
                long key = k + round * 7919L;
                for (int alt : alts) {
                    b.add(key, alt, o, 64, false);
                    at.put(o, new long[] {key, alt});
                    o += 64;
                }
            }
        }
        NeedleIndex built = b.build((x, y) -> Arrays.equals(at.get(x), at.get(y)));
        for (var e : expected.entrySet()) {
            Set<Long> got = new HashSet<>();
            built.offsetsOfKey(e.getKey(), got::add);
            assertThat(got).as("built, key %s", Long.toUnsignedString(e.getKey())).containsAll(e.getValue());
        }
    }

    @Test
    void firstStopsAtTheOnlySlotOfAKeyAndOverwritesReplaceInPlace() {
        NeedleIndex idx = new NeedleIndex(4);
        put(idx, -1L, -1, 32, 64, false);
        put(idx, -1L, -1, 96, 64, false); // an overwrite: same slot
        idx.markDeletedAt(-1L, -1, 96);
        put(idx, -1L, -1, 160, 64, false); // written again after its delete: same slot, live
        assertThat(idx.size()).isEqualTo(1);
        assertThat(idx.deletedCount()).isZero();
        assertThat(NeedleIndex.offset(idx.first(-1L, -1))).isEqualTo(160);
        assertThat(idx.first(-1L, 0)).isZero();
        assertThat(idx.first(0, -1)).isZero();
    }

    @Test
    void lockFreeReadersSeeEveryPublishedEntryWhileTheTableGrows() throws Exception {
        NeedleIndex idx = new NeedleIndex(0);
        int n = 300_000;
        AtomicInteger published = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(3);
        NeedleIndex.KeyCheck byOffset = (off, key, alt) -> off == 8 * (key + 1) || off == 8 * (key + 1) + (1L << 33);
        Future<?> writer = pool.submit(() -> {
            for (int k = 0; k < n; k++) {
                synchronized (idx) {
                    idx.put(k, (int) (k * 7L), 8L * (k + 1), 8, false, byOffset);
                    if (k % 3 == 0 && k > 0) {
                        // overwrite an earlier key in place with a newer needle, then delete it
                        int old = k / 3;
                        idx.put(old, (int) (old * 7L), 8L * (old + 1) + (1L << 33), 8, false, byOffset);
                        idx.markDeletedAt(old, (int) (old * 7L), 8L * (old + 1) + (1L << 33));
                    }
                }
                published.set(k + 1);
            }
            return null;
        });
        List<Future<Integer>> readers = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            int seed = r;
            readers.add(pool.submit(() -> {
                Random rnd = new Random(seed);
                int checked = 0;
                while (published.get() < n || checked < 1000) {
                    int upTo = published.get();
                    if (upTo == 0) {
                        continue;
                    }
                    int k = rnd.nextInt(upTo);
                    long e = idx.first(k, (int) (k * 7L));
                    assertThat(e).as("key %d published, not found", k).isNotZero();
                    long off = NeedleIndex.offset(e);
                    assertThat(off == 8L * (k + 1) || off == 8L * (k + 1) + (1L << 33)).as("key %d at %d", k, off).isTrue();
                    assertThat(idx.get(k, (int) (k * 7L), byOffset)).isNotZero();
                    checked++;
                }
                return checked;
            }));
        }
        writer.get(2, TimeUnit.MINUTES);
        for (Future<Integer> r : readers) {
            assertThat(r.get(1, TimeUnit.MINUTES)).isPositive();
        }
        pool.shutdown();
        assertThat(idx.size()).isEqualTo(n);
    }
}
