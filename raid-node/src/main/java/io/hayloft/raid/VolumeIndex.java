package io.hayloft.raid;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The needle index of an erasure-coded volume: where each live (key, alt) needle starts in the
 * sealed volume file, kept whole (replicated, not encoded) as a block on several stores so any of
 * them can tell a reader which block and range hold a needle.
 *
 * <p>Index block format, version 1, big-endian:
 * <table>
 * <caption>index block</caption>
 * <tr><th>offset</th><th>size</th><th>field</th></tr>
 * <tr><td>0</td><td>4</td><td>magic {@code 0x484C5849} ("HLXI")</td></tr>
 * <tr><td>4</td><td>4</td><td>version (1)</td></tr>
 * <tr><td>8</td><td>4</td><td>logical volume id</td></tr>
 * <tr><td>12</td><td>4</td><td>record count {@code n}</td></tr>
 * <tr><td>16</td><td>32 × n</td><td>records: key (8), alt (4), flags (4, bit 0 = deleted), offset of the
 *     needle in the volume file (8), total needle length with padding (4), data size (4)</td></tr>
 * </table>
 * The store keeps the block's CRC32C; the stripe map records it, and readers check it.
 * Deletes made after encoding are not written here: the directory's photo record is the tombstone.
 *
 * <p>Immutable once built; thread-safe.
 */
public final class VolumeIndex {

    public static final int MAGIC = 0x484C5849;
    public static final int VERSION = 1;
    public static final int HEADER_SIZE = 16;
    public static final int RECORD_SIZE = 8 + 4 + 4 + 8 + 4 + 4;
    public static final int FLAG_DELETED = 1;

    /** One needle: its place in the volume file. */
    public record Entry(long key, int alt, int flags, long offset, int length, int dataSize) implements java.io.Serializable {
        public boolean deleted() {
            return (flags & FLAG_DELETED) != 0;
        }
    }

    private final int volume;
    private final Map<Long, Entry> byKey = new HashMap<>();

    private VolumeIndex(int volume, List<Entry> entries) {
        this.volume = volume;
        for (Entry e : entries) {
            Entry old = byKey.get(slot(e.key(), e.alt()));
            if (old == null || old.offset() < e.offset()) { // highest offset wins, as in the store
                byKey.put(slot(e.key(), e.alt()), e);
            }
        }
    }

    public static VolumeIndex of(int volume, List<Entry> entries) {
        return new VolumeIndex(volume, entries);
    }

    private static long slot(long key, int alt) {
        return key * 31 + alt; // collisions are checked in find()
    }

    public int volume() {
        return volume;
    }

    public int size() {
        return byKey.size();
    }

    public List<Entry> entries() {
        return new ArrayList<>(byKey.values());
    }

    /** The entry of a needle, or null. */
    public Entry find(long key, int alt) {
        Entry e = byKey.get(slot(key, alt));
        return e != null && e.key() == key && e.alt() == alt ? e : null;
    }

    public byte[] encode() {
        List<Entry> es = entries();
        es.sort((a, b) -> Long.compare(a.offset(), b.offset()));
        ByteBuffer b = ByteBuffer.allocate(HEADER_SIZE + RECORD_SIZE * es.size());
        b.putInt(MAGIC).putInt(VERSION).putInt(volume).putInt(es.size());
        for (Entry e : es) {
            b.putLong(e.key()).putInt(e.alt()).putInt(e.flags()).putLong(e.offset()).putInt(e.length()).putInt(e.dataSize());
        }
        return b.array();
    }

    /** @throws IllegalArgumentException naming what is wrong when the bytes are not an index block */
    public static VolumeIndex decode(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        if (bytes.length < HEADER_SIZE || b.getInt() != MAGIC) {
            throw new IllegalArgumentException("not a needle-index block (bad magic or " + bytes.length + " bytes)");
        }
        int version = b.getInt();
        if (version != VERSION) {
            throw new IllegalArgumentException("needle-index block version " + version + ", this code reads " + VERSION);
        }
        int volume = b.getInt();
        int n = b.getInt();
        if (n < 0 || (long) n * RECORD_SIZE != bytes.length - HEADER_SIZE) {
            throw new IllegalArgumentException("needle-index block of volume " + volume + " says " + n + " records but has "
                    + (bytes.length - HEADER_SIZE) + " bytes of records");
        }
        List<Entry> es = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            es.add(new Entry(b.getLong(), b.getInt(), b.getInt(), b.getLong(), b.getInt(), b.getInt()));
        }
        return new VolumeIndex(volume, es);
    }
}
