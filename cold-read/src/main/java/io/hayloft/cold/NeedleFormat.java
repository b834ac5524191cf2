package io.hayloft.cold;

import io.hayloft.format.needle.Needle;
import io.hayloft.format.wire.VolumeIndex;
import java.nio.ByteBuffer;

/**
 * The cold tier's checks of needles read back from blocks, over the one needle format
 * ({@link Needle}, with {@link Needle#check} its one check; docs/formats.md): header fields to build
 * the needle index while encoding, and the full check of a needle read back from blocks, with the
 * cold tier's answers (a missing needle, or a {@link CorruptNeedleException} that makes the reader
 * rebuild the range from other blocks). A volume's first needle starts after its superblock, at
 * {@link io.hayloft.format.needle.Superblock#SIZE}. Stateless.
 */
public final class NeedleFormat {
    private NeedleFormat() {
    }

    /** Parses the header at the buffer's position into an index entry at volume offset {@code offset} (CRC32C 0: the footer's is not read). */
    public static VolumeIndex.Entry header(ByteBuffer h, long offset) {
        if (h.getInt(h.position() + Needle.OFF_MAGIC) != Needle.HEADER_MAGIC) {
            throw new IllegalStateException("no needle header at volume offset " + offset);
        }
        int size = Needle.dataSize(h);
        return new VolumeIndex.Entry(Needle.key(h), Needle.alt(h), Needle.flags(h), offset, VolumeIndex.needleLength(size), size, 0);
    }

    /**
     * Checks a whole needle read from the cold tier (at buffer offset 0, perhaps followed by more
     * bytes) and returns its data.
     *
     * @param cookie the cookie the reader gave, or null to accept the needle's whatever it is
     * @return the data, or null if the key, alt or cookie do not match (a missing needle to the caller)
     * @throws CorruptNeedleException when {@link Needle#check} finds the needle's bytes wrong
     */
    public static byte[] data(ByteBuffer n, long key, int alt, Long cookie) throws CorruptNeedleException {
        ByteBuffer w = n.duplicate().position(0);
        check(w, key);
        if (Needle.key(w) != key || Needle.alt(w) != alt || (cookie != null && Needle.cookie(w) != cookie)) {
            return null;
        }
        byte[] data = new byte[Needle.dataSize(w)];
        Needle.data(w).get(data);
        return data;
    }

    /** The cookie in the header of needle {@code n} (at buffer offset 0; checked by {@link #data} first). */
    public static long cookie(ByteBuffer n) {
        return Needle.cookie(n.duplicate().position(0));
    }

    /**
     * Checks a whole needle copied verbatim (reclaim), from the buffer's position to its limit (the
     * needle's slot, padding included): {@link Needle#check}, the slot's length, key and alt; the
     * cookie is not known to the copier and not checked.
     *
     * @throws CorruptNeedleException when anything is wrong
     */
    public static void check(ByteBuffer n, long key, int alt) throws CorruptNeedleException {
        ByteBuffer w = n.slice();
        check(w, key);
        int size = Needle.dataSize(w);
        if (Needle.totalLength(size) != w.remaining()) {
            throw new CorruptNeedleException("needle " + key + ": data size " + size + " does not fit its "
                    + w.remaining() + "-byte slot at buffer position " + n.position());
        }
        if (Needle.key(w) != key || Needle.alt(w) != alt) {
            throw new CorruptNeedleException("needle at the index's offset is " + Needle.key(w) + "/" + Needle.alt(w)
                    + ", not " + key + "/" + alt);
        }
    }

    private static void check(ByteBuffer w, long key) throws CorruptNeedleException {
        Needle.Check c = Needle.check(w);
        switch (c) {
            case OK:
                return;
            case BAD_CRC:
                throw new CorruptNeedleException("needle " + key + " fails its CRC32C");
            case BAD_FOOTER:
                throw new CorruptNeedleException("bad needle footer magic for key " + key);
            case SHORT:
                throw new CorruptNeedleException("needle " + key + " is longer than the " + w.remaining() + " bytes read");
            default:
                throw new CorruptNeedleException("bad needle header for key " + key);
        }
    }

    /** A needle whose bytes are wrong: the reader rebuilds its range from other blocks. */
    public static final class CorruptNeedleException extends Exception {
        private static final long serialVersionUID = 1L;

        CorruptNeedleException(String m) {
            super(m);
        }
    }
}
