package io.hayloft.cold;

import static io.hayloft.format.needle.Needle.FOOTER_MAGIC;
import static io.hayloft.format.needle.Needle.FOOTER_SIZE;
import static io.hayloft.format.needle.Needle.HEADER_MAGIC;
import static io.hayloft.format.needle.Needle.HEADER_SIZE;
import static io.hayloft.format.needle.Needle.OFF_ALT;
import static io.hayloft.format.needle.Needle.OFF_COOKIE;
import static io.hayloft.format.needle.Needle.OFF_FLAGS;
import static io.hayloft.format.needle.Needle.OFF_KEY;
import static io.hayloft.format.needle.Needle.OFF_SIZE;

import io.hayloft.format.wire.VolumeIndex;
import io.hayloft.format.needle.Needle;
import java.nio.ByteBuffer;

/**
 * The cold tier's checks of needles read back from blocks, over the one needle format
 * ({@link Needle}, hayloft-format; docs/formats.md): header fields to build the needle index while
 * encoding, and the full check of a needle read back from blocks. Stateless.
 */
public final class NeedleFormat {
    /** Where a volume's first needle starts: after its superblock (io.hayloft.store.volume.Superblock). */
    public static final int SUPERBLOCK_SIZE = 32;

    private NeedleFormat() {
    }

    public static int totalLength(int dataSize) {
        return VolumeIndex.needleLength(dataSize);
    }

    /** Parses the header at the buffer's position into an index entry at volume offset {@code offset} (CRC32C 0: the footer's is not read). */
    public static VolumeIndex.Entry header(ByteBuffer h, long offset) {
        int p = h.position();
        if (h.getInt(p) != HEADER_MAGIC) {
            throw new IllegalStateException("no needle header at volume offset " + offset);
        }
        int size = h.getInt(p + OFF_SIZE);
        int flags = h.get(p + OFF_FLAGS) & 0xFF;
        return new VolumeIndex.Entry(h.getLong(p + OFF_KEY), h.getInt(p + OFF_ALT), flags, offset, totalLength(size), size, 0);
    }

    /**
     * Checks a whole needle read from the cold tier and returns its data.
     *
     * @param cookie the cookie the reader gave, or null to accept the needle's whatever it is
     * @return the data, or null if the key, alt or cookie do not match (a missing needle to the caller)
     * @throws CorruptNeedleException when magic or CRC are wrong
     */
    public static byte[] data(ByteBuffer n, long key, int alt, Long cookie) throws CorruptNeedleException {
        if (n.remaining() < HEADER_SIZE + FOOTER_SIZE || n.getInt(0) != HEADER_MAGIC) {
            throw new CorruptNeedleException("bad needle header magic for key " + key);
        }
        int size = n.getInt(OFF_SIZE);
        if (size < 0 || HEADER_SIZE + size + FOOTER_SIZE > n.remaining()) {
            throw new CorruptNeedleException("needle " + key + " data size " + size + " exceeds what was read");
        }
        if (n.getInt(HEADER_SIZE + size) != FOOTER_MAGIC) {
            throw new CorruptNeedleException("bad needle footer magic for key " + key);
        }
        if (Needle.crc(n, 0, size) != n.getInt(HEADER_SIZE + size + 4)) {
            throw new CorruptNeedleException("needle " + key + " fails its CRC32C");
        }
        if (n.getLong(OFF_KEY) != key || n.getInt(OFF_ALT) != alt || (cookie != null && n.getLong(OFF_COOKIE) != cookie)) {
            return null;
        }
        byte[] data = new byte[size];
        n.get(HEADER_SIZE, data);
        return data;
    }

    /** The cookie in the header of needle {@code n} (at buffer offset 0; checked by {@link #data} first). */
    public static long cookie(ByteBuffer n) {
        return n.getLong(OFF_COOKIE);
    }

    /**
     * Checks a whole needle copied verbatim (reclaim): magic, footer, CRC32C, key and alt; the cookie
     * is not known to the copier and not checked.
     *
     * @throws CorruptNeedleException when anything is wrong
     */
    public static void check(ByteBuffer n, long key, int alt) throws CorruptNeedleException {
        int p = n.position();
        ByteBuffer w = n.slice();
        if (w.remaining() < HEADER_SIZE + FOOTER_SIZE || w.getInt(0) != HEADER_MAGIC) {
            throw new CorruptNeedleException("bad needle header magic for key " + key + " at buffer position " + p);
        }
        int size = w.getInt(OFF_SIZE);
        if (size < 0 || totalLength(size) != w.remaining() || w.getInt(HEADER_SIZE + size) != FOOTER_MAGIC) {
            throw new CorruptNeedleException("needle " + key + ": data size " + size + " does not fit its "
                    + w.remaining() + "-byte slot or the footer magic is wrong");
        }
        if (Needle.crc(w, 0, size) != w.getInt(HEADER_SIZE + size + 4)) {
            throw new CorruptNeedleException("needle " + key + " fails its CRC32C");
        }
        if (w.getLong(OFF_KEY) != key || w.getInt(OFF_ALT) != alt) {
            throw new CorruptNeedleException("needle at the index's offset is " + w.getLong(OFF_KEY) + "/" + w.getInt(OFF_ALT)
                    + ", not " + key + "/" + alt);
        }
    }

    /** A needle whose bytes are wrong: the reader rebuilds its range from other blocks. */
    public static final class CorruptNeedleException extends Exception {
        CorruptNeedleException(String m) {
            super(m);
        }
    }
}
