package io.hayloft.format.wire;

import io.hayloft.format.needle.Needle;
import java.io.IOException;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * The exact needle index of a sealed volume: for every (key, alternate key) the place of its newest
 * needle in the volume file, its data size, its flags and the CRC32C of its needle. The raid-node
 * writes it whole (replicated, not encoded) as the index block of an erasure-coded volume, so a cold
 * reader learns which block and range hold a needle; a store writes the same format as the listing
 * of a replica's own index ({@code GET /volumes/ID/index}), which the raid-node compares against
 * what it built before it commits an encode or a reclaim.
 *
 * <p>Index block format, version 2, big-endian:
 * <table>
 * <caption>index block</caption>
 * <tr><th>offset</th><th>size</th><th>field</th></tr>
 * <tr><td>0</td><td>4</td><td>magic {@code 0x484C5849} ("HLXI")</td></tr>
 * <tr><td>4</td><td>4</td><td>version (2)</td></tr>
 * <tr><td>8</td><td>4</td><td>logical volume id</td></tr>
 * <tr><td>12</td><td>4</td><td>record count {@code n}</td></tr>
 * <tr><td>16 + 40i</td><td>8</td><td>key</td></tr>
 * <tr><td>24 + 40i</td><td>4</td><td>alternate key</td></tr>
 * <tr><td>28 + 40i</td><td>4</td><td>flags (bit 0 = deleted; other bits 0)</td></tr>
 * <tr><td>32 + 40i</td><td>8</td><td>offset of the needle in the volume file (8-aligned, at least 32)</td></tr>
 * <tr><td>40 + 40i</td><td>4</td><td>total needle length with padding, {@code align8(40 + data size)}</td></tr>
 * <tr><td>44 + 40i</td><td>4</td><td>data size</td></tr>
 * <tr><td>48 + 40i</td><td>4</td><td>the needle's CRC32C (its footer's)</td></tr>
 * <tr><td>52 + 40i</td><td>4</td><td>reserved, 0</td></tr>
 * </table>
 * Records are sorted by key, then alternate key, both compared as unsigned numbers, with no (key,
 * alt) twice: a reader finds a needle by binary search. Version 1 (32-byte records without the CRC,
 * in offset order) is still read; its entries have no CRC ({@link #hasCrcs()} is false). Version 1
 * blocks were keyed by {@code key * 31 + alt} when they were built, so one may lack needles whose
 * pairs collided: the raid-node refuses to reclaim a volume with such an index. Any other version,
 * a record count that does not match the length, unsorted or repeated pairs, and impossible offsets
 * or lengths are refused with an {@link IndexFormatException} naming the volume and the block,
 * never read as a wrong photo.
 *
 * <p>In memory the index is six primitive arrays (29 bytes per needle), no object per entry.
 * Immutable once built; thread-safe.
 */
public final class VolumeIndex {

    public static final int MAGIC = 0x484C5849;
    public static final int VERSION = 2;
    public static final int VERSION_1 = 1;
    public static final int HEADER_SIZE = 16;
    public static final int R_KEY = 0;
    public static final int R_ALT = 8;
    public static final int R_FLAGS = 12;
    public static final int R_OFFSET = 16;
    public static final int R_LENGTH = 24;
    public static final int R_SIZE = 28;
    public static final int R_CRC = 32;
    public static final int R_RESERVED = 36;
    public static final int RECORD_SIZE = R_RESERVED + 4;
    /** Version 1 record: key, alt, flags, offset, length, data size. */
    public static final int RECORD_SIZE_V1 = 8 + 4 + 4 + 8 + 4 + 4;
    public static final int FLAG_DELETED = 1;
    /** The volume file's superblock; no needle starts before it. */
    public static final int FIRST_NEEDLE_OFFSET = 32;
    /** The highest needle offset a volume can have (volumes are at most 16 GiB). */
    public static final long MAX_OFFSET = 1L << 34;
    private static final int BYTES_PER_ENTRY = 8 + 4 + 8 + 4 + 4 + 1;

    /** One needle: its place in the volume file. */
    public record Entry(long key, int alt, int flags, long offset, int length, int dataSize, int crc32c)
            implements Serializable {
        public boolean deleted() {
            return (flags & FLAG_DELETED) != 0;
        }

        /** This entry with its CRC32C. */
        public Entry withCrc(int crc) {
            return new Entry(key, alt, flags, offset, length, dataSize, crc);
        }
    }

    /** An index block that cannot be read: names the volume and the block. */
    public static final class IndexFormatException extends IOException {
        public IndexFormatException(String message) {
            super(message);
        }
    }

    /** Orders needles as the block does: key, then alternate key, unsigned. */
    public static final Comparator<Entry> ORDER = (a, b) -> {
        int c = Long.compareUnsigned(a.key(), b.key());
        return c != 0 ? c : Integer.compareUnsigned(a.alt(), b.alt());
    };

    private final int volume;
    private final int version;
    private final long[] keys;
    private final int[] alts;
    private final long[] offsets;
    private final int[] sizes;
    private final int[] crcs;
    private final byte[] flags;

    private VolumeIndex(int volume, int version, int n) {
        this.volume = volume;
        this.version = version;
        keys = new long[n];
        alts = new int[n];
        offsets = new long[n];
        sizes = new int[n];
        crcs = new int[n];
        flags = new byte[n];
    }

    /** The total length of a needle of {@code dataSize} bytes: header 32, data, footer 8, padded to 8. */
    public static int needleLength(int dataSize) {
        return (int) Needle.totalLength(dataSize);
    }

    /**
     * An index of {@code entries}; where a (key, alt) appears more than once the needle at the
     * highest offset wins, as in the store (an overwrite appends a newer needle).
     */
    public static VolumeIndex of(int volume, List<Entry> entries) {
        return of(volume, VERSION, entries);
    }

    private static VolumeIndex of(int volume, int version, List<Entry> entries) {
        Entry[] sorted = entries.toArray(new Entry[0]);
        Arrays.sort(sorted, ORDER.thenComparingLong(Entry::offset));
        int n = 0;
        for (int i = 0; i < sorted.length; i++) {
            if (i + 1 < sorted.length && ORDER.compare(sorted[i], sorted[i + 1]) == 0) {
                continue; // a newer needle of the same pair follows
            }
            sorted[n++] = sorted[i];
        }
        VolumeIndex x = new VolumeIndex(volume, version, n);
        for (int i = 0; i < n; i++) {
            x.set(i, sorted[i]);
        }
        return x;
    }

    private void set(int i, Entry e) {
        if (e.length() != needleLength(e.dataSize())) {
            throw new IllegalArgumentException("needle " + e.key() + "/" + Integer.toUnsignedString(e.alt()) + " of volume "
                    + volume + ": length " + e.length() + " does not match data size " + e.dataSize());
        }
        keys[i] = e.key();
        alts[i] = e.alt();
        offsets[i] = e.offset();
        sizes[i] = e.dataSize();
        crcs[i] = e.crc32c();
        flags[i] = (byte) e.flags();
    }

    public int volume() {
        return volume;
    }

    /** The block version this index was read from (or {@link #VERSION} when built). */
    public int version() {
        return version;
    }

    /** False for an index read from a version 1 block: its entries carry no CRC32C. */
    public boolean hasCrcs() {
        return version >= 2;
    }

    public int size() {
        return keys.length;
    }

    /** The number of needles not marked deleted. */
    public int liveCount() {
        int n = 0;
        for (byte f : flags) {
            n += (f & FLAG_DELETED) == 0 ? 1 : 0;
        }
        return n;
    }

    /** Bytes this index holds in memory (for caches bounded by bytes). */
    public long memoryBytes() {
        return 64 + (long) BYTES_PER_ENTRY * keys.length;
    }

    /** The i-th entry in key order. */
    public Entry entry(int i) {
        return new Entry(keys[i], alts[i], flags[i] & 0xFF, offsets[i], needleLength(sizes[i]), sizes[i], crcs[i]);
    }

    /** Every entry, in key order (a view; entries are made as they are read). */
    public List<Entry> entries() {
        return new AbstractList<>() {
            @Override
            public Entry get(int i) {
                return entry(i);
            }

            @Override
            public int size() {
                return keys.length;
            }
        };
    }

    /** The entry of a needle, or null: a binary search on the exact (key, alt). */
    public Entry find(long key, int alt) {
        int lo = 0;
        int hi = keys.length - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int c = Long.compareUnsigned(keys[mid], key);
            if (c == 0) {
                c = Integer.compareUnsigned(alts[mid], alt);
            }
            if (c < 0) {
                lo = mid + 1;
            } else if (c > 0) {
                hi = mid - 1;
            } else {
                return entry(mid);
            }
        }
        return null;
    }

    /** Every entry of {@code key} (deleted ones included), in alternate-key order (unsigned). */
    public List<Entry> entriesOf(long key) {
        int lo = 0;
        int hi = keys.length;
        while (lo < hi) { // the first index whose key is not below key
            int mid = (lo + hi) >>> 1;
            if (Long.compareUnsigned(keys[mid], key) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        List<Entry> out = new ArrayList<>();
        for (int i = lo; i < keys.length && keys[i] == key; i++) {
            out.add(entry(i));
        }
        return out;
    }

    /** The version 2 block of this index. */
    public byte[] encode() {
        ByteBuffer b = ByteBuffer.allocate(HEADER_SIZE + RECORD_SIZE * keys.length);
        b.putInt(MAGIC).putInt(VERSION).putInt(volume).putInt(keys.length);
        for (int i = 0; i < keys.length; i++) {
            b.putLong(keys[i]).putInt(alts[i]).putInt(flags[i] & 0xFF).putLong(offsets[i]).putInt(needleLength(sizes[i]))
                    .putInt(sizes[i]).putInt(crcs[i]).putInt(0);
        }
        return b.array();
    }

    /**
     * Reads an index block.
     *
     * @param block      the block's name, for messages
     * @param volumeSize the volume file's size: every needle must lie inside it (0: not checked)
     * @throws IndexFormatException naming the volume and block when the bytes are not a valid block
     */
    public static VolumeIndex decode(byte[] bytes, String block, long volumeSize) throws IndexFormatException {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        if (bytes.length < HEADER_SIZE || b.getInt() != MAGIC) {
            throw new IndexFormatException("index block " + block + " is not a needle-index block (bad magic or only "
                    + bytes.length + " bytes)");
        }
        int version = b.getInt();
        int volume = b.getInt();
        int n = b.getInt();
        String where = "index block " + block + " of volume " + volume;
        if (version != VERSION && version != VERSION_1) {
            throw new IndexFormatException(where + " has format version " + version + "; this build reads versions "
                    + VERSION_1 + " and " + VERSION);
        }
        int recordSize = version == VERSION ? RECORD_SIZE : RECORD_SIZE_V1;
        if (n < 0 || (long) n * recordSize != bytes.length - HEADER_SIZE) {
            throw new IndexFormatException(where + " says " + n + " records of " + recordSize + " bytes but has "
                    + (bytes.length - HEADER_SIZE) + " bytes of records");
        }
        if (version == VERSION_1) {
            List<Entry> es = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                es.add(new Entry(b.getLong(), b.getInt(), b.getInt(), b.getLong(), b.getInt(), b.getInt(), 0));
            }
            for (Entry e : es) {
                check(where, e, volumeSize);
            }
            VolumeIndex v1 = of(volume, VERSION_1, es);
            v1.checkNoOverlap(where);
            return v1;
        }
        VolumeIndex x = new VolumeIndex(volume, VERSION, n);
        for (int i = 0; i < n; i++) {
            long key = b.getLong();
            int alt = b.getInt();
            int flags = b.getInt();
            long offset = b.getLong();
            int length = b.getInt();
            int size = b.getInt();
            int crc = b.getInt();
            int reserved = b.getInt();
            if (reserved != 0 || (flags & ~FLAG_DELETED) != 0) {
                throw new IndexFormatException(where + ": record " + i + " has unknown flags " + flags
                        + " or reserved bits " + reserved);
            }
            if (offset < FIRST_NEEDLE_OFFSET || offset > MAX_OFFSET || (offset & 7) != 0 || size < 0
                    || length != needleLength(size) || (volumeSize > 0 && offset + length > volumeSize)) {
                check(where, new Entry(key, alt, flags, offset, length, size, crc), volumeSize);
            }
            if (i > 0) {
                int c = Long.compareUnsigned(x.keys[i - 1], key);
                if (c > 0 || (c == 0 && Integer.compareUnsigned(x.alts[i - 1], alt) >= 0)) {
                    throw new IndexFormatException(where + ": record " + i + " (" + Long.toUnsignedString(key) + "/"
                            + Integer.toUnsignedString(alt) + ") is not after record " + (i - 1) + " (" + name(x.entry(i - 1))
                            + "): the block is not sorted or names a needle twice");
                }
            }
            x.keys[i] = key;
            x.alts[i] = alt;
            x.offsets[i] = offset;
            x.sizes[i] = size;
            x.crcs[i] = crc;
            x.flags[i] = (byte) flags;
        }
        x.checkNoOverlap(where);
        return x;
    }

    private static void check(String where, Entry e, long volumeSize) throws IndexFormatException {
        if (e.offset() < FIRST_NEEDLE_OFFSET || e.offset() > MAX_OFFSET || (e.offset() & 7) != 0 || e.dataSize() < 0
                || e.length() != needleLength(e.dataSize())
                || (volumeSize > 0 && e.offset() + e.length() > volumeSize)) {
            throw new IndexFormatException(where + ": needle " + name(e) + " has an impossible place (offset " + e.offset()
                    + ", length " + e.length() + ", data size " + e.dataSize()
                    + (volumeSize > 0 ? ", volume size " + volumeSize : "") + ")");
        }
    }

    /** Two needles of the index may not share bytes of the volume file. */
    private void checkNoOverlap(String where) throws IndexFormatException {
        // (offset / 8) << 27 | i: offsets are 8-aligned and at most MAX_OFFSET, and n < 2^27 (a block's
        // records fit an int of bytes), so sorting the packed longs sorts the needles by offset
        long[] byOffset = new long[keys.length];
        for (int i = 0; i < byOffset.length; i++) {
            byOffset[i] = (offsets[i] >>> 3) << 27 | i;
        }
        Arrays.sort(byOffset);
        for (int j = 1; j < byOffset.length; j++) {
            int a = (int) (byOffset[j - 1] & ((1 << 27) - 1));
            int c = (int) (byOffset[j] & ((1 << 27) - 1));
            if (offsets[a] + needleLength(sizes[a]) > offsets[c]) {
                throw new IndexFormatException(where + ": needles " + name(entry(a)) + " and " + name(entry(c))
                        + " overlap in the volume file");
            }
        }
    }

    /** A needle's name in messages: key/alt, both unsigned as in URLs. */
    public static String name(Entry e) {
        return Long.toUnsignedString(e.key()) + "/" + Integer.toUnsignedString(e.alt());
    }

    /**
     * The first way {@code actual} fails to hold every live needle of {@code expected}, or null when
     * it holds them all: the same live (key, alt) set (so the same live count), each with the same
     * data size and CRC32C (when {@code expected} has CRCs: version 1 has none) and, if
     * {@code sameOffsets}, at the same offset. Deleted needles of either side are not compared.
     */
    public static String difference(VolumeIndex expected, VolumeIndex actual, boolean sameOffsets) {
        return difference(expected, actual, sameOffsets, true);
    }

    /**
     * As {@link #difference(VolumeIndex, VolumeIndex, boolean)}; with {@code sameLiveSet} false,
     * {@code actual} may also hold live needles {@code expected} lacks (a rebuilt index recovering
     * needles an incomplete one lost).
     */
    public static String difference(VolumeIndex expected, VolumeIndex actual, boolean sameOffsets, boolean sameLiveSet) {
        int live = 0;
        for (int i = 0; i < expected.size(); i++) {
            Entry e = expected.entry(i);
            if (e.deleted()) {
                continue;
            }
            live++;
            Entry a = actual.find(e.key(), e.alt());
            if (a == null || a.deleted()) {
                return "needle " + name(e) + " (offset " + e.offset() + ", " + e.dataSize() + " bytes) is "
                        + (a == null ? "missing from" : "marked deleted in") + " the index built for volume " + actual.volume();
            }
            if (a.dataSize() != e.dataSize() || (expected.hasCrcs() && a.crc32c() != e.crc32c())
                    || (sameOffsets && a.offset() != e.offset())) {
                return "needle " + name(e) + " differs: expected offset " + e.offset() + ", " + e.dataSize() + " bytes, CRC32C "
                        + Integer.toHexString(e.crc32c()) + "; built offset " + a.offset() + ", " + a.dataSize()
                        + " bytes, CRC32C " + Integer.toHexString(a.crc32c());
            }
        }
        int builtLive = actual.liveCount();
        if (sameLiveSet && builtLive != live) {
            for (int i = 0; i < actual.size(); i++) {
                Entry a = actual.entry(i);
                Entry e = expected.find(a.key(), a.alt());
                if (!a.deleted() && (e == null || e.deleted())) {
                    return "the index built for volume " + actual.volume() + " has " + builtLive + " live needles, the source "
                            + live + ": needle " + name(a) + " is live only in the built index";
                }
            }
            return "the index built for volume " + actual.volume() + " has " + builtLive + " live needles, the source " + live;
        }
        return null;
    }
}
