package io.hayloft.store.volume;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongConsumer;

/**
 * The in-memory index of one volume: (key, alternate key) &rarr; (offset, length, deleted) for every
 * needle, in two primitive arrays and no per-entry objects: 12 bytes per slot.
 *
 * <p>Open addressing with linear probing. A slot is an {@code int} tag (the low 32 bits of the
 * 64-bit {@link #hash}: a hash of the key alone, so every alternate key of one key probes from the
 * same home slot and {@link #offsetsOfKey} finds them in one probe run) and a {@code long} packing:
 * <pre>
 * bits 63..33  offset / 8        31 bits: volumes up to 16 GiB
 * bits 32..9   needle length / 8 24 bits: needles up to 128 MiB
 * bit  8       deleted
 * bits 7..0    8 hash bits of (key, alt) (a 40-bit fingerprint with the tag)
 * </pre>
 * A packed value of 0 is an empty slot (offset 0 is the superblock, never a needle). The keys
 * themselves are not stored: the needle header on disk holds them, so a fingerprint match is
 * confirmed against the disk when it matters. Each (key, alt) has at most one slot: an insert that
 * meets an existing fingerprint with another offset (an overwrite, or a one-in-2^40 collision)
 * asks the {@link KeyCheck} and replaces the slot in place when it is the same key. So a lookup
 * stops at the first match: {@link #first} returns the first fingerprint match unconfirmed (the
 * read that follows checks key and alt in the header it reads anyway, and falls back to
 * {@link #get} on a mismatch, or when the match is a tombstone, which may be another key's); {@link #get} confirms each candidate with the {@link KeyCheck}
 * and returns the first confirmed one. A deleted needle keeps its slot, marked by the deleted
 * bit (a tombstone: slots are never emptied, so a probe never stops early); compaction drops it.
 *
 * <p>The table grows by {@value #GROWTH}x when it passes a load of {@value #MAX_LOAD}; give a
 * capacity hint (e.g. the record count of the {@code .idx}) to size it once on start.
 *
 * <p>Thread-safety: one writer at a time ({@link Volume} holds the index's monitor for
 * {@link #put}, {@link #markDeletedAt} and the statistics), any number of lock-free readers
 * ({@link #first}, {@link #get}, {@link #isLiveAt}). Readers see a consistent table: the arrays are
 * published together through a volatile reference (growth builds a new table, then publishes
 * it), a slot is written with release semantics after its tag and read with acquire semantics
 * before it, and slots only ever go from empty to full or from one entry of the same key to
 * another (a newer needle, or the deleted bit), so a reader finds every entry published before
 * its lookup started, and sees either the old or the new value of one changing under it.
 */
public final class NeedleIndex {
    /** Confirms that the needle at {@code offset} has this key and alternate key (reads its header). */
    @FunctionalInterface
    public interface KeyCheck {
        boolean matches(long offset, long key, int alt);
    }

    public static final double MAX_LOAD = 0.92;
    public static final double GROWTH = 1.25;
    /** Load a table sized by a hint starts at. */
    public static final double TARGET_LOAD = 0.88;
    public static final long MAX_OFFSET = (1L << 31) * 8 - 8;
    public static final long MAX_LENGTH = ((1L << 24) - 1) * 8;

    private static final long DELETED = 1L << 8;
    private static final long FP_MASK = 0xFF;

    private static final VarHandle SLOT =
            MethodHandles.arrayElementVarHandle(long[].class);

    /** The two arrays, published together. */
    private static final class Table {
        final int[] tags;
        final long[] slots;

        Table(int cap) {
            tags = new int[cap];
            slots = new long[cap];
        }
    }

    private volatile Table table;
    private int count;
    private int deleted;

    public NeedleIndex(int expectedEntries) {
        if (expectedEntries < 0) {
            throw new IllegalArgumentException("expectedEntries must be >= 0, got " + expectedEntries);
        }
        int cap = (int) Math.min(Integer.MAX_VALUE - 8, Math.max(16, (long) Math.ceil(expectedEntries / TARGET_LOAD)));
        table = new Table(cap);
    }

    private static long slotAcquire(long[] slots, int i) {
        return (long) SLOT.getAcquire(slots, i);
    }

    private static void setSlot(long[] slots, int i, long value) {
        SLOT.setRelease(slots, i, value);
    }

    /**
     * The 64-bit hash of (key, alt) the table works with: its low 32 bits (the tag, which places the
     * slot) hash the key alone, so every alternate key of one key probes from the same home slot and
     * {@link #offsetsOfKey} finds them all without a second table; its high bits (the fingerprint
     * bits of the packed slot) hash the key and the alternate key.
     */
    static long hash(long key, int alt) {
        return (mix(key ^ (alt * 0x9E3779B97F4A7C15L) ^ 0x5DEECE66DL) & 0xFFFFFFFF00000000L)
                | (mix(key ^ 0x2545F4914F6CDD1DL) & 0xFFFFFFFFL);
    }

    /** The tag of every needle of {@code key}: the low 32 bits of {@link #hash}. */
    static int keyTag(long key) {
        return (int) mix(key ^ 0x2545F4914F6CDD1DL);
    }

    private static long mix(long h) {
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }

    private static int home(int tag, int cap) {
        return (int) (((tag & 0xFFFFFFFFL) * cap) >>> 32);
    }

    static long pack(long offset, long length, boolean isDeleted, long h) {
        if (offset <= 0 || offset > MAX_OFFSET || (offset & 7) != 0) {
            throw new IllegalArgumentException("needle offset " + offset + " is not an 8-aligned offset in 8.." + MAX_OFFSET);
        }
        if (length <= 0 || length > MAX_LENGTH || (length & 7) != 0) {
            throw new IllegalArgumentException("needle length " + length + " is not an 8-aligned length in 8.." + MAX_LENGTH);
        }
        return ((offset >>> 3) << 33) | ((length >>> 3) << 9) | (isDeleted ? DELETED : 0) | ((h >>> 56) & FP_MASK);
    }

    /** Offset in bytes of a packed entry. */
    public static long offset(long packed) {
        return (packed >>> 33) << 3;
    }

    /** Needle length in bytes (header to padding) of a packed entry. */
    public static long length(long packed) {
        return ((packed >>> 9) & 0xFFFFFFL) << 3;
    }

    public static boolean isDeleted(long packed) {
        return (packed & DELETED) != 0;
    }

    /** Entries (live and deleted). */
    public int size() {
        return count;
    }

    public int deletedCount() {
        return deleted;
    }

    public int capacity() {
        return table.slots.length;
    }

    /** Bytes held by the two arrays (array headers included), the whole cost of the index. */
    public long memoryBytes() {
        Table t = table;
        return 16L + 4L * t.tags.length + 16L + 8L * t.slots.length;
    }

    /**
     * Records the needle of (key, alt) at {@code offset}. The highest offset wins: an older
     * needle of the same key (found while replaying a checkpoint) is ignored.
     *
     * @return true if this needle is now the entry of (key, alt)
     */
    public boolean put(long key, int alt, long offset, long length, boolean isDeleted, KeyCheck check) {
        long h = hash(key, alt);
        long value = pack(offset, length, isDeleted, h);
        int tag = (int) h;
        Table t = table;
        int[] tags = t.tags;
        long[] slots = t.slots;
        int cap = slots.length;
        int i = home(tag, cap);
        while (true) {
            long s = slots[i];
            if (s == 0) {
                break;
            }
            if (tags[i] == tag && ((s ^ value) & FP_MASK) == 0) {
                long o = offset(s);
                if (o == offset || check.matches(o, key, alt)) {
                    if (o > offset) {
                        return false;
                    }
                    if (isDeleted(s) != isDeleted) {
                        deleted += isDeleted ? 1 : -1;
                    }
                    setSlot(slots, i, value); // in place: the only slot of (key, alt)
                    return true;
                }
            }
            i = i + 1 == cap ? 0 : i + 1;
        }
        if (count + 1 > (long) (cap * MAX_LOAD)) {
            grow();
            return put(key, alt, offset, length, isDeleted, check);
        }
        tags[i] = tag;
        setSlot(slots, i, value); // after the tag: a reader that sees the slot sees its tag
        count++;
        if (isDeleted) {
            deleted++;
        }
        return true;
    }

    /**
     * The first entry whose fingerprint matches (key, alt), or 0, without a disk check: since
     * (key, alt) has at most one slot, it is the entry of (key, alt) unless another key shares its
     * 40-bit fingerprint (about one lookup in 2^40). The caller must compare the key and alt in
     * the needle it then reads, and on a mismatch ask {@link #get}. Lock-free.
     */
    public long first(long key, int alt) {
        return get(key, alt, ANY);
    }

    /** A check that takes the first fingerprint match ({@link #first}). */
    private static final KeyCheck ANY = (offset, key, alt) -> true;

    /**
     * The packed entry of (key, alt), or 0: the first slot whose fingerprint matches and whose
     * needle {@code check} confirms (one header read per candidate). Lock-free.
     */
    public long get(long key, int alt, KeyCheck check) {
        long h = hash(key, alt);
        int tag = (int) h;
        long fp = (h >>> 56) & FP_MASK;
        Table t = table;
        int[] tags = t.tags;
        long[] slots = t.slots;
        int cap = slots.length;
        for (int i = home(tag, cap);; i = i + 1 == cap ? 0 : i + 1) {
            long s = slotAcquire(slots, i);
            if (s == 0) {
                return 0;
            }
            if (tags[i] == tag && (s & FP_MASK) == fp && check.matches(offset(s), key, alt)) {
                return s;
            }
        }
    }

    /**
     * Visits the offsets of the needles of {@code key} (every alternate key, live, deleted or
     * replaced) and possibly of other keys: candidates, to confirm against the needle header on
     * disk and {@link #isLiveAt}.
     */
    public void offsetsOfKey(long key, LongConsumer visitor) {
        int tag = keyTag(key);
        Table t = table;
        int[] tags = t.tags;
        long[] slots = t.slots;
        int cap = slots.length;
        // Every alternate key of the key has this tag, so it lies in the probe run from the tag's home.
        for (int i = home(tag, cap);; i = i + 1 == cap ? 0 : i + 1) {
            long s = slotAcquire(slots, i);
            if (s == 0) {
                return;
            }
            if (tags[i] == tag) {
                visitor.accept(offset(s));
            }
        }
    }

    /** True if the current entry of (key, alt) is the live needle at {@code offset}. */
    public boolean isLiveAt(long key, int alt, long offset) {
        long s = findAt(key, alt, offset);
        return s != 0 && !isDeleted(s);
    }

    /** Marks the entry of the needle of (key, alt) at {@code offset} deleted; false if none. */
    public boolean markDeletedAt(long key, int alt, long offset) {
        long h = hash(key, alt);
        int tag = (int) h;
        long fp = (h >>> 56) & FP_MASK;
        Table t = table;
        int[] tags = t.tags;
        long[] slots = t.slots;
        int cap = slots.length;
        for (int i = home(tag, cap); slots[i] != 0; i = i + 1 == cap ? 0 : i + 1) {
            long s = slots[i];
            if (tags[i] == tag && (s & FP_MASK) == fp && offset(s) == offset) {
                if (!isDeleted(s)) {
                    setSlot(slots, i, s | DELETED);
                    deleted++;
                }
                return true;
            }
        }
        return false;
    }

    private long findAt(long key, int alt, long offset) {
        long h = hash(key, alt);
        int tag = (int) h;
        long fp = (h >>> 56) & FP_MASK;
        Table t = table;
        int[] tags = t.tags;
        long[] slots = t.slots;
        int cap = slots.length;
        for (int i = home(tag, cap);; i = i + 1 == cap ? 0 : i + 1) {
            long s = slotAcquire(slots, i);
            if (s == 0) {
                return 0;
            }
            if (tags[i] == tag && (s & FP_MASK) == fp && offset(s) == offset) {
                return s;
            }
        }
    }

    /** Tells whether the needles at two offsets have the same key and alternate key (reads both headers). */
    @FunctionalInterface
    public interface SameKey {
        boolean same(long offsetA, long offsetB);
    }

    /**
     * Collects checkpoint records and builds the index in bulk: a stable LSD radix sort of the
     * records by tag (so by home slot), then a sequential placement with no probing (each entry
     * goes to {@code max(home, previous + 1)}). Records of one (key, alt) are merged as
     * {@link #put} would: the highest offset wins, a delete record marks the needle it names.
     * Peak memory: the records (12 bytes each) plus the table.
     *
     * <p>Not thread-safe; used once, on open.
     */
    public static final class Builder {
        private int[] tags;
        private long[] values;
        private int n;

        public Builder(int expected) {
            tags = new int[Math.max(16, expected)];
            values = new long[tags.length];
        }

        public void add(long key, int alt, long offset, long length, boolean isDeleted) {
            if (n == tags.length) {
                tags = Arrays.copyOf(tags, n * 2);
                values = Arrays.copyOf(values, n * 2);
            }
            long h = hash(key, alt);
            tags[n] = (int) h;
            values[n] = pack(offset, length, isDeleted, h);
            n++;
        }

        public NeedleIndex build(SameKey same) {
            NeedleIndex idx = new NeedleIndex(n);
            int[] idxTags = idx.table.tags;
            long[] idxSlots = idx.table.slots;
            int cap = idxSlots.length;
            // By fingerprint first, then (stable) by tag: the records of one (key, alt) end up next to
            // each other although every alternate key of a key shares its tag.
            sortByFingerprint(tags, values, n, idxTags, idxSlots);
            radixSortByTag(tags, values, n, idxTags, idxSlots);
            Arrays.fill(idxTags, 0);
            Arrays.fill(idxSlots, 0);
            List<Long> overflow = new ArrayList<>();
            List<Integer> overflowTags = new ArrayList<>();
            long[] group = new long[4];
            int last = -1;
            int i = 0;
            while (i < n) {
                int tag = tags[i];
                long fp = values[i] & FP_MASK;
                int g = 0;
                for (; i < n && tags[i] == tag && (values[i] & FP_MASK) == fp; i++) {
                    if (g == group.length) {
                        group = Arrays.copyOf(group, g * 2);
                    }
                    g = merge(group, g, values[i], same);
                }
                for (int j = 0; j < g; j++) {
                    int pos = Math.max(home(tag, cap), last + 1);
                    if (pos >= cap) {
                        overflow.add(group[j]);
                        overflowTags.add(tag);
                        continue;
                    }
                    idxTags[pos] = tag;
                    idxSlots[pos] = group[j];
                    idx.count++;
                    if (isDeleted(group[j])) {
                        idx.deleted++;
                    }
                    last = pos;
                }
            }
            for (int j = 0; j < overflow.size(); j++) {
                idx.insertDistinct(overflowTags.get(j), overflow.get(j));
            }
            tags = null;
            values = null;
            return idx;
        }

        /** Adds record v to the survivors group[0..g) of one fingerprint; returns the new size. */
        private static int merge(long[] group, int g, long v, SameKey same) {
            long off = offset(v);
            for (int k = 0; k < g; k++) {
                long o = offset(group[k]);
                if (o == off) {
                    group[k] |= v & DELETED;
                    return g;
                }
            }
            for (int k = 0; k < g; k++) {
                long o = offset(group[k]);
                if (same.same(o, off)) {
                    if (off > o) {
                        group[k] = v;
                    }
                    return g;
                }
            }
            group[g] = v;
            return g + 1;
        }
    }

    private void insertDistinct(int tag, long value) {
        if (count + 1 > (long) (table.slots.length * MAX_LOAD)) {
            grow();
        }
        int[] tags = table.tags;
        long[] slots = table.slots;
        int cap = slots.length;
        int i = home(tag, cap);
        while (slots[i] != 0) {
            i = i + 1 == cap ? 0 : i + 1;
        }
        tags[i] = tag;
        setSlot(slots, i, value);
        count++;
        if (isDeleted(value)) {
            deleted++;
        }
    }

    /** Stable LSD radix sort of (tags, values)[0..n) by unsigned tag; tmp arrays hold at least n. */
    /** One stable counting-sort pass by the fingerprint bits of the values; the result is back in (tags, values). */
    static void sortByFingerprint(int[] tags, long[] values, int n, int[] tmpTags, long[] tmpValues) {
        int[] counts = new int[(int) FP_MASK + 2];
        for (int i = 0; i < n; i++) {
            counts[(int) (values[i] & FP_MASK) + 1]++;
        }
        for (int b = 1; b < counts.length; b++) {
            counts[b] += counts[b - 1];
        }
        for (int i = 0; i < n; i++) {
            int to = counts[(int) (values[i] & FP_MASK)]++;
            tmpTags[to] = tags[i];
            tmpValues[to] = values[i];
        }
        System.arraycopy(tmpTags, 0, tags, 0, n);
        System.arraycopy(tmpValues, 0, values, 0, n);
    }

    static void radixSortByTag(int[] tags, long[] values, int n, int[] tmpTags, long[] tmpValues) {
        int[] srcT = tags;
        long[] srcV = values;
        int[] dstT = tmpTags;
        long[] dstV = tmpValues;
        int[] counts = new int[256];
        for (int shift = 0; shift < 32; shift += 8) {
            Arrays.fill(counts, 0);
            for (int i = 0; i < n; i++) {
                counts[(srcT[i] >>> shift) & 0xFF]++;
            }
            int sum = 0;
            for (int b = 0; b < 256; b++) {
                int c = counts[b];
                counts[b] = sum;
                sum += c;
            }
            for (int i = 0; i < n; i++) {
                int b = (srcT[i] >>> shift) & 0xFF;
                int to = counts[b]++;
                dstT[to] = srcT[i];
                dstV[to] = srcV[i];
            }
            int[] t = srcT;
            srcT = dstT;
            dstT = t;
            long[] v = srcV;
            srcV = dstV;
            dstV = v;
        }
        // four passes: the sorted data is back in (tags, values)
    }

    /** Visits every entry: packed values, for statistics and the {@code .idx} rewrite. */
    public void forEach(LongConsumer visitor) {
        for (long s : table.slots) {
            if (s != 0) {
                visitor.accept(s);
            }
        }
    }

    /** Rehashes into a bigger table, then publishes it; readers on the old one see it as it was. */
    private void grow() {
        int[] oldTags = table.tags;
        long[] oldSlots = table.slots;
        long newCap = Math.max(oldSlots.length + 16, (long) (oldSlots.length * GROWTH));
        if (newCap > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("needle index cannot grow beyond " + oldSlots.length + " slots");
        }
        int cap = (int) newCap;
        Table t = new Table(cap);
        int[] tags = t.tags;
        long[] slots = t.slots;
        for (int j = 0; j < oldSlots.length; j++) {
            long s = oldSlots[j];
            if (s == 0) {
                continue;
            }
            int i = home(oldTags[j], cap);
            while (slots[i] != 0) {
                i = i + 1 == cap ? 0 : i + 1;
            }
            tags[i] = oldTags[j];
            slots[i] = s;
        }
        table = t;
    }
}
