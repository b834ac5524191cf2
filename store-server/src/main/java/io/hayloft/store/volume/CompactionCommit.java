package io.hayloft.store.volume;

import io.hayloft.format.io.PositionalIo;
import io.hayloft.serverkit.io.Disk;
import io.hayloft.store.StoreOperationException.Reason;
import io.hayloft.store.StoreOperationException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The crash protocol that replaces a volume's files by their compacted copies, and its recovery.
 *
 * <p>Files of volume {@code N}: {@code N.dat}, {@code N.idx} (live); {@code N.dat.cpt},
 * {@code N.idx.cpt} (the compacted copies); {@code N.compact} (the commit marker) and
 * {@code N.compact.tmp}. The commit, in order, each step named by a {@link Step} after which a
 * test can stop the process:
 * ({@link Step#LIVE_COPIED} is not part of the commit: the online copy is done and writes are
 * about to be blocked for the catch-up; tests use it to act while a compaction is running.)
 * <ol>
 *   <li>{@link Step#TEMP_FILES_SYNCED}: the copies are complete and forced.</li>
 *   <li>{@link Step#MARKER_TEMP_WRITTEN}: the marker is written to {@code N.compact.tmp} and forced.</li>
 *   <li>{@link Step#MARKER_COMMITTED}: it is renamed to {@code N.compact} and the directory forced.
 *       This is the commit point: from here recovery rolls forward, before it rolls back.</li>
 *   <li>{@link Step#DAT_RENAMED}: {@code N.dat.cpt} is renamed over {@code N.dat}.</li>
 *   <li>{@link Step#IDX_RENAMED}: {@code N.idx.cpt} is renamed over {@code N.idx}.</li>
 *   <li>{@link Step#DIRECTORY_SYNCED}: the directory is forced.</li>
 *   <li>{@link Step#MARKER_DELETED}: the marker is deleted and the directory forced.</li>
 * </ol>
 * Recovery ({@link #recover}), run before a volume is opened: with a marker, rename whichever
 * copies remain over the live files (checking the data copy has the length the marker recorded),
 * force the directory, delete the marker; without one, delete any copies and a temporary marker.
 *
 * <p>Marker file {@code N.compact}, big-endian:
 * <pre>
 * offset size field
 *      0    4 magic            0x484C434D ("HLCM")
 *      4    2 format version   1
 *      6    2 reserved         0
 *      8    8 volume id
 *     16    8 length of N.dat.cpt
 *     24    8 length of N.idx.cpt
 *     32    4 CRC32C           of bytes 0..31
 *     36    4 reserved         0
 * </pre>
 *
 * <p>Thread-safe (stateless); callers serialize commits of one volume.
 */
public final class CompactionCommit {
    private static final Logger LOG = LoggerFactory.getLogger(CompactionCommit.class);

    public static final int MARKER_MAGIC = 0x484C434D;
    public static final int MARKER_VERSION = 1;
    public static final int MARKER_SIZE = 40;

    /** The steps of the commit, in order. */
    public enum Step { LIVE_COPIED, TEMP_FILES_SYNCED, MARKER_TEMP_WRITTEN, MARKER_COMMITTED, DAT_RENAMED, IDX_RENAMED,
        DIRECTORY_SYNCED, MARKER_DELETED }

    /** Called after each step; a test throws {@link SimulatedCrash} to stop the commit there. */
    @FunctionalInterface
    public interface Hook {
        void after(Step step);

        Hook NONE = step -> { };
    }

    /** Thrown by a test hook: the commit stops dead, leaving the files as a crash would. */
    public static final class SimulatedCrash extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public SimulatedCrash(Step step) {
            super("simulated crash after " + step);
        }
    }

    private CompactionCommit() {
    }

    static Path datCopy(Path dir, long id) {
        return dir.resolve(id + ".dat.cpt");
    }

    static Path idxCopy(Path dir, long id) {
        return dir.resolve(id + ".idx.cpt");
    }

    static Path marker(Path dir, long id) {
        return dir.resolve(id + ".compact");
    }

    static Path markerTemp(Path dir, long id) {
        return dir.resolve(id + ".compact.tmp");
    }

    /** Runs steps 2..7 once the copies are complete and forced (step 1). */
    static void commit(Disk disk, Path dir, long id, long datLength, long idxLength, Hook hook) throws IOException {
        hook.after(Step.TEMP_FILES_SYNCED);
        ByteBuffer m = ByteBuffer.allocate(MARKER_SIZE).order(ByteOrder.BIG_ENDIAN);
        m.putInt(MARKER_MAGIC).putShort((short) MARKER_VERSION).putShort((short) 0).putLong(id).putLong(datLength)
                .putLong(idxLength);
        CRC32C crc = new CRC32C();
        crc.update(m.array(), 0, 32);
        m.putInt((int) crc.getValue()).putInt(0).flip();
        try (FileChannel ch = disk.open(markerTemp(dir, id), StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            PositionalIo.writeFully(ch, m, 0);
            ch.force(true);
        }
        hook.after(Step.MARKER_TEMP_WRITTEN);
        disk.move(markerTemp(dir, id), marker(dir, id));
        FileIo.syncDirectory(disk, dir);
        hook.after(Step.MARKER_COMMITTED);
        disk.move(datCopy(dir, id), Volume.datPath(dir, id));
        hook.after(Step.DAT_RENAMED);
        disk.move(idxCopy(dir, id), Volume.idxPath(dir, id));
        hook.after(Step.IDX_RENAMED);
        FileIo.syncDirectory(disk, dir);
        hook.after(Step.DIRECTORY_SYNCED);
        deleteExisting(disk, marker(dir, id));
        FileIo.syncDirectory(disk, dir);
        hook.after(Step.MARKER_DELETED);
    }

    private static void deleteExisting(Disk disk, Path file) throws IOException {
        if (!disk.deleteIfExists(file)) {
            throw new NoSuchFileException(file.toString());
        }
    }

    /** Deletes the copies of an abandoned compaction (before its commit point). */
    static void rollBack(Disk disk, Path dir, long id) throws IOException {
        boolean any = disk.deleteIfExists(datCopy(dir, id));
        any |= disk.deleteIfExists(idxCopy(dir, id));
        any |= disk.deleteIfExists(markerTemp(dir, id));
        if (any) {
            FileIo.syncDirectory(disk, dir);
        }
    }

    /** Rolls an interrupted commit forward (marker present) or back (no marker). */
    public static void recover(Path dir, long id) throws IOException {
        recover(Disk.REAL, dir, id);
    }

    /** {@link #recover(Path, long)} on {@code disk}. */
    public static void recover(Disk disk, Path dir, long id) throws IOException {
        Path marker = marker(dir, id);
        if (!disk.exists(marker)) {
            if (disk.exists(datCopy(dir, id)) || disk.exists(idxCopy(dir, id)) || disk.exists(markerTemp(dir, id))) {
                LOG.warn("volume {}: rolling back an interrupted compaction", id);
                rollBack(disk, dir, id);
            }
            return;
        }
        ByteBuffer m = ByteBuffer.wrap(disk.readAllBytes(marker)).order(ByteOrder.BIG_ENDIAN);
        CRC32C crc = new CRC32C();
        if (m.remaining() == MARKER_SIZE) {
            crc.update(m.array(), 0, 32);
        }
        if (m.remaining() != MARKER_SIZE || m.getInt(0) != MARKER_MAGIC || (int) crc.getValue() != m.getInt(32)) {
            throw new StoreOperationException(Reason.CORRUPT_FILE, marker + " is not a valid compaction marker; "
                    + "the volume needs an operator (compare " + datCopy(dir, id) + " with " + Volume.datPath(dir, id) + ")");
        }
        int version = Short.toUnsignedInt(m.getShort(4));
        if (version != MARKER_VERSION) {
            throw new StoreOperationException(Reason.UNSUPPORTED_FORMAT, marker + ": marker version " + version + " is not supported");
        }
        if (m.getLong(8) != id) {
            throw new StoreOperationException(Reason.CORRUPT_FILE, marker + " names volume " + m.getLong(8) + ", not " + id);
        }
        LOG.warn("volume {}: rolling an interrupted compaction forward", id);
        Path dat = datCopy(dir, id);
        if (disk.exists(dat)) {
            long expected = m.getLong(16);
            if (disk.size(dat) != expected) {
                throw new StoreOperationException(Reason.CORRUPT_FILE, dat + " has " + disk.size(dat) + " bytes but the marker says "
                        + expected + "; the volume needs an operator");
            }
            disk.move(dat, Volume.datPath(dir, id));
        }
        Path idx = idxCopy(dir, id);
        if (disk.exists(idx)) {
            disk.move(idx, Volume.idxPath(dir, id));
        }
        FileIo.syncDirectory(disk, dir);
        deleteExisting(disk, marker);
        FileIo.syncDirectory(disk, dir);
    }
}
