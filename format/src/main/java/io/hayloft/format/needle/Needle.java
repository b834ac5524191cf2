package io.hayloft.format.needle;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The on-disk layout of one needle, version 1. Big-endian; every needle starts at an 8-byte
 * aligned volume offset and its length is a multiple of 8.
 *
 * <pre>
 * offset     size field
 *      0        4 header magic  0x4E45444C ("NEDL")
 *      4        8 cookie        64-bit random, checked on read; never kept in memory
 *     12        8 key           64-bit photo key
 *     20        4 alternate key 32-bit (e.g. the photo size variant)
 *     24        1 flags         bit 0: deleted (set in place, synchronously, on delete)
 *     25        3 reserved      0
 *     28        4 data size     n, unsigned, at most {@link #MAX_DATA_SIZE}
 *     32        n data
 *   32+n        4 footer magic  0x4C44454E ("LDEN")
 *   36+n        4 CRC32C        over bytes 4..23 and 28..31 of the header (cookie, key,
 *                             alternate key, data size), then the n data bytes
 *   40+n    0..7 padding       zeros up to the next multiple of 8
 * </pre>
 * {@link #totalLength} = align8(40 + n). The flags byte is the only byte ever rewritten, which is
 * why the CRC skips it; it also covers the identifying header fields, so that damage to a key or
 * cookie is found like damage to the data.
 *
 * <p>The one definition of the needle format: the store writes and checks needles with it, the cold
 * tier (cold-read, raid-node) parses and checks the same bytes read back from blocks. A volume file
 * starts with a {@link Superblock}; its needles follow from offset {@link Superblock#SIZE}.
 *
 * <p>Thread-safe (stateless).
 */
public final class Needle {
    public static final int HEADER_MAGIC = 0x4E45444C;
    public static final int FOOTER_MAGIC = 0x4C44454E;
    public static final int FLAG_DELETED = 1;

    public static final int OFF_MAGIC = 0;
    public static final int OFF_COOKIE = 4;
    public static final int OFF_KEY = 12;
    public static final int OFF_ALT = 20;
    public static final int OFF_FLAGS = 24;
    public static final int OFF_RESERVED = 25;
    public static final int OFF_SIZE = 28;
    public static final int HEADER_SIZE = OFF_SIZE + 4;
    public static final int FOOTER_SIZE = 4 + 4;
    public static final int ALIGNMENT = 8;
    /** Largest data size: the in-memory index keeps needle lengths in 24 bits of 8-byte units. */
    public static final int MAX_DATA_SIZE = (1 << 27) - 64;

    private Needle() {
    }

    public static long totalLength(long dataSize) {
        return align(HEADER_SIZE + dataSize + FOOTER_SIZE);
    }

    public static long align(long n) {
        return (n + ALIGNMENT - 1) & -ALIGNMENT;
    }

    /**
     * Appends one encoded needle to {@code dst} (which must have {@link #totalLength} room). The store
     * refuses an oversized write with its own error before it gets here.
     *
     * @throws IllegalArgumentException when the data is larger than {@link #MAX_DATA_SIZE}
     */
    public static void encode(ByteBuffer dst, long cookie, long key, int alt, int flags, ByteBuffer data) {
        if (data.remaining() > MAX_DATA_SIZE) {
            throw new IllegalArgumentException("needle data size " + data.remaining() + " is outside 0.." + MAX_DATA_SIZE);
        }
        ByteBuffer out = dst.order(ByteOrder.BIG_ENDIAN);
        int start = out.position();
        int n = data.remaining();
        out.putInt(HEADER_MAGIC).putLong(cookie).putLong(key).putInt(alt).put((byte) flags)
                .put((byte) 0).put((byte) 0).put((byte) 0).putInt(n);
        out.put(data.duplicate());
        out.putInt(FOOTER_MAGIC).putInt(crc(out, start, n));
        int end = start + (int) totalLength(n);
        while (out.position() < end) {
            out.put((byte) 0);
        }
    }

    /**
     * The CRC32C of the needle at {@code p} in {@code b} with {@code n} data bytes (the footer's field):
     * the header's bytes 4..23 and 28..31, then the data. Reads {@code b} absolutely; its position is kept.
     */
    public static int crc(ByteBuffer b, int p, int n) {
        CRC32C crc = headerCrc(b, p);
        crc.update(data(b, p, n));
        return (int) crc.getValue();
    }

    /** A CRC32C over the header fields the footer's CRC covers (bytes 4..23 and 28..31 of the needle at {@code p}). */
    private static CRC32C headerCrc(ByteBuffer b, int p) {
        CRC32C crc = new CRC32C();
        ByteBuffer h = b.duplicate();
        h.limit(p + OFF_FLAGS).position(p + OFF_COOKIE);
        crc.update(h);
        h.limit(p + HEADER_SIZE).position(p + OFF_SIZE);
        crc.update(h);
        return crc;
    }

    /** The {@code n} data bytes of the needle at {@code p} in {@code b}, as a view. */
    private static ByteBuffer data(ByteBuffer b, int p, int n) {
        ByteBuffer d = b.duplicate();
        d.limit(p + HEADER_SIZE + n).position(p + HEADER_SIZE);
        return d;
    }

    /** The outcome of checking bytes that should hold one needle. */
    public enum Check { OK, BAD_HEADER, SHORT, BAD_FOOTER, BAD_CRC }

    /**
     * Checks a whole needle held in {@code b} from its position: magics, size and CRC. The header
     * is only trusted once this returns {@link Check#OK}.
     */
    public static Check check(ByteBuffer b) {
        return check(b, null);
    }

    /**
     * {@link #check(ByteBuffer)}; when {@code dataCrc} is not null, also gives the CRC32C of the data
     * alone in {@code dataCrc[0]} (on {@link Check#OK}), from the same one pass over the data: the
     * stored CRC is then checked as the {@linkplain Crc32c#combine combination} of the header fields'
     * CRC and the data's. Reads {@code b} absolutely; its position is kept.
     */
    public static Check check(ByteBuffer b, int[] dataCrc) {
        int p = b.position();
        if (b.remaining() < HEADER_SIZE) {
            return Check.SHORT;
        }
        if (b.getInt(p + OFF_MAGIC) != HEADER_MAGIC) {
            return Check.BAD_HEADER;
        }
        long n = Integer.toUnsignedLong(b.getInt(p + OFF_SIZE));
        if (n > MAX_DATA_SIZE) {
            return Check.BAD_HEADER;
        }
        if (b.remaining() < HEADER_SIZE + n + FOOTER_SIZE) {
            return Check.SHORT;
        }
        int f = p + HEADER_SIZE + (int) n;
        if (b.getInt(f) != FOOTER_MAGIC) {
            return Check.BAD_FOOTER;
        }
        int stored = b.getInt(f + 4);
        if (dataCrc == null) {
            return crc(b, p, (int) n) == stored ? Check.OK : Check.BAD_CRC;
        }
        int header = (int) headerCrc(b, p).getValue();
        CRC32C crc = new CRC32C();
        crc.update(data(b, p, (int) n));
        int d = (int) crc.getValue();
        if (Crc32c.combine(header, d, n) != stored) {
            return Check.BAD_CRC;
        }
        dataCrc[0] = d;
        return Check.OK;
    }

    public static long cookie(ByteBuffer b) {
        return b.getLong(b.position() + OFF_COOKIE);
    }

    public static long key(ByteBuffer b) {
        return b.getLong(b.position() + OFF_KEY);
    }

    public static int alt(ByteBuffer b) {
        return b.getInt(b.position() + OFF_ALT);
    }

    public static int flags(ByteBuffer b) {
        return b.get(b.position() + OFF_FLAGS) & 0xFF;
    }

    public static int dataSize(ByteBuffer b) {
        return b.getInt(b.position() + OFF_SIZE);
    }

    /** A view of the data bytes of a checked needle. */
    public static ByteBuffer data(ByteBuffer b) {
        ByteBuffer d = b.duplicate();
        d.position(b.position() + HEADER_SIZE).limit(b.position() + HEADER_SIZE + dataSize(b));
        return d.slice();
    }
}
