package io.hayloft.store.volume;

import io.hayloft.format.io.PositionalIo;
import io.hayloft.serverkit.io.Disk;
import io.hayloft.store.StoreOperationException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code N.dseq} file next to volume {@code N}: how far this replica applied the volume's
 * delete log (the sequence number of the last entry whose deletes are durable here). Written only
 * after the deletes it covers were forced ({@link Volume#forceDeletes}), so it never runs ahead of
 * them; replaced whole: written to {@code N.dseq.tmp}, forced, renamed over {@code N.dseq}, and the
 * directory forced.
 *
 * <p>Format, version 1 (20 bytes, big-endian):
 * <pre>
 * offset size field
 * 0      4    magic    0x48445351 ("HDSQ")
 * 4      4    version  1
 * 8      8    seq      last applied delete-log sequence number, &gt;= 0
 * 16     4    crc      CRC32C of bytes 0..15
 * </pre>
 * What it does not protect: a missing file reads as 0, and so does a file that fails its magic,
 * size or CRC (logged): the whole log is then applied again, which is harmless, since applying an
 * entry twice deletes nothing more. An unknown version is refused. Deleted with the volume.
 *
 * <p>Thread-safe (static methods; callers serialise writes of one volume's file).
 */
public final class AppliedDeletes {
    private static final Logger LOG = LoggerFactory.getLogger(AppliedDeletes.class);
    public static final int MAGIC = 0x48445351;
    public static final int VERSION = 1;
    static final int OFF_MAGIC = 0;
    static final int OFF_VERSION = OFF_MAGIC + 4;
    static final int OFF_SEQ = OFF_VERSION + 4;
    static final int OFF_CRC = OFF_SEQ + 8;
    public static final int SIZE = OFF_CRC + 4;
    /** Suffix of the file, after the volume id. */
    public static final String SUFFIX = ".dseq";

    private AppliedDeletes() {
    }

    public static Path path(Path dir, long volume) {
        return dir.resolve(volume + SUFFIX);
    }

    static byte[] encode(long seq) {
        ByteBuffer b = ByteBuffer.allocate(SIZE);
        b.putInt(OFF_MAGIC, MAGIC).putInt(OFF_VERSION, VERSION).putLong(OFF_SEQ, seq);
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, OFF_CRC);
        b.putInt(OFF_CRC, (int) crc.getValue());
        return b.array();
    }

    /** The applied sequence number of volume {@code volume} in {@code dir}; 0 when there is no valid file. */
    public static long read(Disk disk, Path dir, long volume) throws IOException {
        Path file = path(dir, volume);
        if (!disk.exists(file)) {
            return 0;
        }
        ByteBuffer b = ByteBuffer.wrap(disk.readAllBytes(file));
        if (b.remaining() != SIZE || b.getInt(OFF_MAGIC) != MAGIC) {
            LOG.warn("{}: not a delete-sequence file ({} bytes); the delete log will be applied from the start", file,
                    b.remaining());
            return 0;
        }
        int version = b.getInt(OFF_VERSION);
        if (version != VERSION) {
            throw new StoreOperationException(StoreOperationException.Reason.UNSUPPORTED_FORMAT,
                    file + ": delete-sequence file version " + version + " is not supported (only " + VERSION + ")");
        }
        CRC32C crc = new CRC32C();
        crc.update(b.array(), 0, OFF_CRC);
        long seq = b.getLong(OFF_SEQ);
        if (b.getInt(OFF_CRC) != (int) crc.getValue() || seq < 0) {
            LOG.warn("{}: fails its CRC; the delete log will be applied from the start", file);
            return 0;
        }
        return seq;
    }

    /** Durably records {@code seq} as volume {@code volume}'s applied sequence number (see the class comment). */
    public static void write(Disk disk, Path dir, long volume, long seq) throws IOException {
        if (seq < 0) {
            throw new IllegalArgumentException("applied sequence must be >= 0, got " + seq);
        }
        Path file = path(dir, volume);
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (FileChannel ch = disk.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            PositionalIo.writeFully(ch, ByteBuffer.wrap(encode(seq)), 0);
            ch.force(true);
        }
        disk.move(tmp, file);
        FileIo.syncDirectory(disk, dir);
    }

    /** Removes the file (and a stray temporary one) of a dropped or recreated volume; the caller forces the directory. */
    public static void delete(Disk disk, Path dir, long volume) throws IOException {
        Path file = path(dir, volume);
        disk.deleteIfExists(file.resolveSibling(file.getFileName() + ".tmp"));
        disk.deleteIfExists(file);
    }
}
