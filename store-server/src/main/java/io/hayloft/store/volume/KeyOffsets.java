package io.hayloft.store.volume;

/**
 * The second half of a {@link NeedleIndex}: key &rarr; offsets of the needles of that key, so that
 * every alternate key of one photo is found without scanning (the (key, alt) table cannot: its
 * slots are placed by a hash of both). Open addressing with linear probing over two {@code int}
 * arrays, 8 bytes per slot: a 32-bit tag (a hash of the key alone) and the needle's offset / 8
 * (31 bits, 0 = empty).
 *
 * <p>Entries are candidates, never removed: a tag may be shared by another key, and an offset may
 * name a needle that a later write of the same (key, alt) replaced. Callers confirm each against
 * the needle header on disk and the (key, alt) table ({@link NeedleIndex#isLiveAt}). Compaction
 * builds a fresh index, which drops the stale offsets.
 *
 * <p>Not thread-safe: guarded with the {@link NeedleIndex} that owns it.
 */
final class KeyOffsets {
    private int[] tags;
    private int[] offsets;
    private int count;

    KeyOffsets(int expectedEntries) {
        int cap = (int) Math.min(Integer.MAX_VALUE - 8,
                Math.max(16, (long) Math.ceil(expectedEntries / NeedleIndex.TARGET_LOAD)));
        tags = new int[cap];
        offsets = new int[cap];
    }

    static int tag(long key) {
        long h = key * 0xC2B2AE3D27D4EB4FL;
        h ^= h >>> 31;
        h *= 0x9E3779B97F4A7C15L;
        h ^= h >>> 29;
        return (int) h;
    }

    private static int home(int tag, int cap) {
        return (int) (((tag & 0xFFFFFFFFL) * cap) >>> 32);
    }

    /** Records that a needle of {@code key} is at {@code offset} (8-aligned, > 0); a repeat is ignored. */
    void add(long key, long offset) {
        int tag = tag(key);
        int off = (int) (offset >>> 3);
        int cap = tags.length;
        int i = home(tag, cap);
        while (offsets[i] != 0) {
            if (tags[i] == tag && offsets[i] == off) {
                return;
            }
            i = i + 1 == cap ? 0 : i + 1;
        }
        if (count + 1 > (long) (cap * NeedleIndex.MAX_LOAD)) {
            grow();
            add(key, offset);
            return;
        }
        tags[i] = tag;
        offsets[i] = off;
        count++;
    }

    /** Visits the candidate offsets of {@code key} (unconfirmed; see the class comment). */
    void forEach(long key, java.util.function.LongConsumer visitor) {
        int tag = tag(key);
        int cap = tags.length;
        for (int i = home(tag, cap); offsets[i] != 0; i = i + 1 == cap ? 0 : i + 1) {
            if (tags[i] == tag) {
                visitor.accept((offsets[i] & 0xFFFFFFFFL) << 3);
            }
        }
    }

    /** Bytes held by the two arrays (array headers included). */
    long memoryBytes() {
        return 16L + 4L * tags.length + 16L + 4L * offsets.length;
    }

    int capacity() {
        return tags.length;
    }

    private void grow() {
        int[] oldTags = tags;
        int[] oldOffsets = offsets;
        long newCap = Math.max(oldTags.length + 16, (long) (oldTags.length * NeedleIndex.GROWTH));
        if (newCap > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException("key table cannot grow beyond " + oldTags.length + " slots");
        }
        int cap = (int) newCap;
        tags = new int[cap];
        offsets = new int[cap];
        for (int j = 0; j < oldTags.length; j++) {
            if (oldOffsets[j] == 0) {
                continue;
            }
            int i = home(oldTags[j], cap);
            while (offsets[i] != 0) {
                i = i + 1 == cap ? 0 : i + 1;
            }
            tags[i] = oldTags[j];
            offsets[i] = oldOffsets[j];
        }
    }
}
