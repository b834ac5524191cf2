package io.hayloft.format.needle;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * The first {@value #SIZE} bytes of a volume file. Big-endian.
 *
 * <pre>
 * offset size field
 *      0    4 magic            0x484C5653 ("HLVS")
 *      4    2 format version   1 (other versions are refused)
 *      6    2 flags            bit 0: read-only (sealed); other bits 0
 *      8    8 volume id        signed 64-bit, &ge; 0
 *     16    8 creation time    milliseconds since the epoch
 *     24    4 CRC32C           of bytes 0..23
 *     28    4 reserved         0
 * </pre>
 * The first needle starts at offset {@value #SIZE}. The flags are rewritten in place (with the
 * CRC) when a volume is sealed. That write can be torn by a power cut: since a seal changes only
 * the read-only bit and the CRC, a superblock whose read-only bit is set and whose CRC is, byte by
 * byte, a prefix of the sealed CRC followed by the rest of the unsealed CRC is a torn seal;
 * {@link #decodeAllowingTornSeal} accepts it as sealed (the seal was in flight, so either outcome
 * is allowed) and the volume rewrites it whole when it opens.
 *
 * <p>The one definition of the superblock: the store writes and checks it, the cold tier (which
 * copies a volume's bytes into stripes and back) knows only that needles start at {@link #SIZE}.
 *
 * <p>Immutable and thread-safe.
 */
public record Superblock(int version, int flags, long volumeId, long createdMillis) {
    public static final int MAGIC = 0x484C5653;
    public static final int VERSION = 1;
    public static final int FLAG_READ_ONLY = 1;

    static final int OFF_MAGIC = 0;
    static final int OFF_VERSION = 4;
    static final int OFF_FLAGS = 6;
    static final int OFF_VOLUME_ID = 8;
    static final int OFF_CREATED = 16;
    static final int OFF_CRC = 24;
    static final int OFF_RESERVED = 28;
    public static final int SIZE = OFF_RESERVED + 4;

    public boolean readOnly() {
        return (flags & FLAG_READ_ONLY) != 0;
    }

    public Superblock withFlags(int newFlags) {
        return new Superblock(version, newFlags, volumeId, createdMillis);
    }

    public ByteBuffer encode() {
        ByteBuffer b = ByteBuffer.allocate(SIZE).order(ByteOrder.BIG_ENDIAN);
        b.putInt(OFF_MAGIC, MAGIC);
        b.putShort(OFF_VERSION, (short) version);
        b.putShort(OFF_FLAGS, (short) flags);
        b.putLong(OFF_VOLUME_ID, volumeId);
        b.putLong(OFF_CREATED, createdMillis);
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, OFF_CRC);
        b.putInt(OFF_CRC, (int) crc.getValue());
        b.putInt(OFF_RESERVED, 0);
        return b;
    }

    /**
     * Parses and checks a superblock; {@code where} names the file in error messages.
     *
     * @throws InvalidSuperblockException when the bytes are not a superblock this build reads
     */
    public static Superblock decode(ByteBuffer b, String where) {
        if (b.remaining() < SIZE) {
            throw new InvalidSuperblockException(false, where + ": file shorter than the " + SIZE + "-byte superblock");
        }
        int p = b.position();
        int magic = b.getInt(p + OFF_MAGIC);
        if (magic != MAGIC) {
            throw new InvalidSuperblockException(false, where + ": not a Hayloft volume (magic 0x" + Integer.toHexString(magic) + ")");
        }
        int version = Short.toUnsignedInt(b.getShort(p + OFF_VERSION));
        if (version != VERSION) {
            throw new InvalidSuperblockException(true, where + ": volume format version " + version + " is not supported (this build reads " + VERSION + ")");
        }
        CRC32C crc = new CRC32C();
        ByteBuffer head = b.duplicate();
        head.position(p).limit(p + OFF_CRC);
        crc.update(head);
        if ((int) crc.getValue() != b.getInt(p + OFF_CRC)) {
            throw new InvalidSuperblockException(false, where + ": superblock CRC mismatch");
        }
        return new Superblock(version, Short.toUnsignedInt(b.getShort(p + OFF_FLAGS)), b.getLong(p + OFF_VOLUME_ID),
                b.getLong(p + OFF_CREATED));
    }

    /**
     * {@link #decode}, but a superblock left by a seal torn at a power cut (see the class comment)
     * decodes as sealed; the caller should then rewrite it ({@code !encode().equals(b)}).
     */
    public static Superblock decodeAllowingTornSeal(ByteBuffer b, String where) {
        try {
            return decode(b, where);
        } catch (InvalidSuperblockException e) {
            if (b.remaining() < SIZE || b.getInt(b.position() + OFF_MAGIC) != MAGIC) {
                throw e;
            }
            int p = b.position();
            int flags = Short.toUnsignedInt(b.getShort(p + OFF_FLAGS));
            if ((flags & FLAG_READ_ONLY) == 0 || Short.toUnsignedInt(b.getShort(p + OFF_VERSION)) != VERSION) {
                throw e;
            }
            Superblock sealed = new Superblock(VERSION, flags, b.getLong(p + OFF_VOLUME_ID), b.getLong(p + OFF_CREATED));
            int newCrc = sealed.encode().getInt(OFF_CRC);
            int oldCrc = sealed.withFlags(flags & ~FLAG_READ_ONLY).encode().getInt(OFF_CRC);
            int stored = b.getInt(p + OFF_CRC);
            for (int k = 0; k <= 4; k++) {
                int newMask = k == 0 ? 0 : (int) (0xFFFF_FFFFL << (32 - 8 * k));
                if ((newCrc & newMask | oldCrc & ~newMask) == stored) {
                    return sealed;
                }
            }
            throw e;
        }
    }

    /** Bytes that are not a superblock of this format version: corrupt, or {@linkplain #unsupportedVersion() another version}. */
    public static final class InvalidSuperblockException extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final boolean unsupportedVersion;

        InvalidSuperblockException(boolean unsupportedVersion, String message) {
            super(message);
            this.unsupportedVersion = unsupportedVersion;
        }

        /** True when the superblock is whole but of a format version this build does not read. */
        public boolean unsupportedVersion() {
            return unsupportedVersion;
        }
    }
}
