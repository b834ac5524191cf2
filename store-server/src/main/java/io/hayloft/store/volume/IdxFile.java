package io.hayloft.store.volume;

import io.hayloft.format.io.PositionalIo;
import io.hayloft.format.needle.Needle;
import io.hayloft.serverkit.io.Disk;
import io.hayloft.store.StoreOperationException;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.zip.CRC32C;

/**
 * The {@code <id>.idx} checkpoint of a volume's index: a header, then one fixed-size record per
 * needle written or deleted, appended asynchronously. Big-endian.
 *
 * <pre>
 * header (16 bytes)
 *   offset size field
 *        0    4 magic           0x484C4958 ("HLIX")
 *        4    2 format version  1
 *        6    2 reserved        0
 *        8    8 volume id
 * record (32 bytes), repeated
 *        0    8 key
 *        8    4 alternate key
 *       12    4 offset / 8      unsigned; the needle's volume offset in 8-byte units
 *       16    4 data size       unsigned
 *       20    4 flags           bit 0: deleted
 *       24    4 reserved        0
 *       28    4 CRC32C          of bytes 0..27 of the record
 * </pre>
 *
 * <p>Ordering: a record is never written before its needle is durable. Records are queued
 * ({@link #append}) in volume-file order, each with the end offset of the needle it names, possibly
 * before that needle is forced; {@link #flush(boolean, long)} writes only the longest prefix of the
 * queue whose needles end at or below the volume's durable end (the end of the last completed
 * fsync of the volume file; with fsync off, the end of what was written, which is all that policy
 * promises), keeping file order, and forces the {@code .idx} after. So every durable record names
 * a needle that was durable first, and recovery can trust the needle with the highest offset the
 * file names (it still checks it, and rescans the whole volume if it fails, which covers a torn
 * sector of the volume file and files written by older builds).
 *
 * <p>What it does not protect: it is a hint, never the truth. The file is flushed lazily, so its
 * tail may lag the volume (recovered by scanning the volume from the end of the last needle the
 * file knows), may miss deletes (learned when the needle is read, or by compaction, which reads the
 * flags on disk), and may end in a torn or zero-filled record (loading stops at the first record
 * whose CRC fails and the file is truncated there; its length is never trusted). If it is lost
 * entirely it is rebuilt by scanning the whole volume.
 *
 * <p>Thread-safe: the queue is guarded by the object's monitor, which {@link #append} (called by
 * writers under the volume's append lock) holds only to copy a record in; flushes are serialized
 * by a separate lock and write and force the file <em>outside</em> that monitor, so an fsync of the
 * {@code .idx} never blocks a writer. {@link #flush} is called by the store's background flusher
 * and on close. Lock order: flush lock, then the monitor.
 */
public final class IdxFile implements Closeable {
    public static final int MAGIC = 0x484C4958;
    public static final int VERSION = 1;
    public static final int HEADER_SIZE = 16;
    static final int R_KEY = 0;
    static final int R_ALT = 8;
    static final int R_OFFSET = 12;
    static final int R_SIZE = 16;
    static final int R_FLAGS = 20;
    static final int R_RESERVED = 24;
    static final int R_CRC = 28;
    public static final int RECORD_SIZE = R_CRC + 4;

    /** Receives the valid records of a file being loaded. */
    public interface RecordVisitor {
        void record(long key, int alt, long offset, int dataSize, boolean deleted);
    }

    private final FileChannel channel;
    private ByteBuffer pending = ByteBuffer.allocate(64 * RECORD_SIZE);
    /** For each queued record, the end offset in the volume file of the needle it names. */
    private long[] pendingEnds = new long[64];
    private long fileEnd;
    private boolean closed;
    /** Serializes flushes (and closes) so that chunks reach the file in queue order. */
    private final Object flushLock = new Object();

    private IdxFile(FileChannel channel, long fileEnd) {
        this.channel = channel;
        this.fileEnd = fileEnd;
    }

    /** Creates (replacing) an empty checkpoint with its header on the real disk, fsynced. */
    public static IdxFile create(Path path, long volumeId) throws IOException {
        return create(Disk.REAL, path, volumeId);
    }

    /** Creates (replacing) an empty checkpoint with its header, fsynced, its name synced into its directory. */
    public static IdxFile create(Disk disk, Path path, long volumeId) throws IOException {
        FileChannel ch = disk.open(path, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.READ, StandardOpenOption.WRITE);
        ByteBuffer h = ByteBuffer.allocate(HEADER_SIZE).order(ByteOrder.BIG_ENDIAN);
        h.putInt(MAGIC).putShort((short) VERSION).putShort((short) 0).putLong(volumeId).flip();
        try {
            PositionalIo.writeFully(ch, h, 0);
            ch.force(true);
            FileIo.syncDirectory(disk, path.toAbsolutePath().getParent());
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
        return new IdxFile(ch, HEADER_SIZE);
    }

    /**
     * Opens a checkpoint, feeds every valid record to {@code visitor}, truncates a torn or
     * zero-filled tail, and returns the file ready for appends. A missing file or one with a bad
     * header is recreated empty (the caller then scans the whole volume).
     */
    public static IdxFile load(Path path, long volumeId, RecordVisitor visitor) throws IOException {
        return load(Disk.REAL, path, volumeId, visitor);
    }

    /** {@link #load(Path, long, RecordVisitor)} on {@code disk}. */
    public static IdxFile load(Disk disk, Path path, long volumeId, RecordVisitor visitor) throws IOException {
        if (!disk.exists(path)) {
            return create(disk, path, volumeId);
        }
        FileChannel ch = disk.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
        try {
            ByteBuffer h = ByteBuffer.allocate(HEADER_SIZE).order(ByteOrder.BIG_ENDIAN);
            PositionalIo.readUpTo(ch, h, 0);
            h.flip();
            if (h.remaining() < HEADER_SIZE || h.getInt(0) != MAGIC || h.getLong(8) != volumeId) {
                ch.close();
                return create(disk, path, volumeId);
            }
            int version = Short.toUnsignedInt(h.getShort(4));
            if (version != VERSION) {
                throw new StoreOperationException(StoreOperationException.Reason.UNSUPPORTED_FORMAT,
                        path + ": index format version " + version + " is not supported (this build reads " + VERSION + ")");
            }
            long pos = HEADER_SIZE;
            long size = ch.size();
            ByteBuffer buf = ByteBuffer.allocate(RECORD_SIZE * 8192).order(ByteOrder.BIG_ENDIAN);
            CRC32C crc = new CRC32C();
            outer:
            while (pos < size) {
                buf.clear();
                PositionalIo.readUpTo(ch, buf, pos);
                buf.flip();
                if (buf.remaining() < RECORD_SIZE) {
                    break;
                }
                while (buf.remaining() >= RECORD_SIZE) {
                    int r = buf.position();
                    crc.reset();
                    crc.update(buf.array(), r, R_CRC);
                    if ((int) crc.getValue() != buf.getInt(r + R_CRC) || isZero(buf, r)) {
                        break outer;
                    }
                    visitor.record(buf.getLong(r + R_KEY), buf.getInt(r + R_ALT),
                            Integer.toUnsignedLong(buf.getInt(r + R_OFFSET)) << 3, buf.getInt(r + R_SIZE),
                            (buf.getInt(r + R_FLAGS) & 1) != 0);
                    buf.position(r + RECORD_SIZE);
                    pos += RECORD_SIZE;
                }
            }
            if (pos != size) {
                ch.truncate(pos);
                ch.force(true);
            }
            return new IdxFile(ch, pos);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    private static boolean isZero(ByteBuffer b, int r) {
        for (int i = 0; i < RECORD_SIZE; i += 8) {
            if (b.getLong(r + i) != 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Queues one record, in volume-file order; written by the first {@link #flush(boolean, long)}
     * whose durable end covers the needle ({@code offset} plus the needle's total length).
     */
    public synchronized void append(long key, int alt, long offset, int dataSize, boolean deleted) {
        if (pending.remaining() < RECORD_SIZE) {
            ByteBuffer bigger = ByteBuffer.allocate(pending.capacity() * 2);
            pending.flip();
            bigger.put(pending);
            pending = bigger;
            pendingEnds = Arrays.copyOf(pendingEnds, pending.capacity() / RECORD_SIZE);
        }
        int r = pending.position();
        pendingEnds[r / RECORD_SIZE] = offset + Needle.totalLength(Integer.toUnsignedLong(dataSize));
        pending.putLong(key).putInt(alt).putInt((int) (offset >>> 3)).putInt(dataSize).putInt(deleted ? 1 : 0).putInt(0);
        CRC32C crc = new CRC32C();
        crc.update(pending.array(), r, R_CRC);
        pending.putInt((int) crc.getValue());
    }

    /**
     * Writes every queued record and, if {@code fsync}, forces them: only for callers that know
     * every queued record's needle is durable (the volume file was just forced).
     */
    public void flush(boolean fsync) throws IOException {
        flush(fsync, Long.MAX_VALUE);
    }

    /**
     * Writes the longest prefix of the queued records whose needles end at or below
     * {@code durableEnd} and, if {@code fsync}, forces them; the rest stay queued, in order.
     */
    public void flush(boolean fsync, long durableEnd) throws IOException {
        synchronized (flushLock) {
            ByteBuffer chunk;
            long at;
            synchronized (this) {
                if (closed) {
                    pending.clear(); // replaced by compaction, which wrote a complete checkpoint
                    return;
                }
                int queued = pending.position() / RECORD_SIZE;
                int ready = 0;
                while (ready < queued && pendingEnds[ready] <= durableEnd) {
                    ready++;
                }
                if (ready == 0) {
                    return;
                }
                int n = ready * RECORD_SIZE;
                chunk = ByteBuffer.wrap(Arrays.copyOf(pending.array(), n));
                at = fileEnd;
                fileEnd += n;
                int rest = pending.position() - n;
                System.arraycopy(pending.array(), n, pending.array(), 0, rest);
                System.arraycopy(pendingEnds, ready, pendingEnds, 0, queued - ready);
                pending.position(rest);
            }
            // outside the monitor: appends go on while the records are written and forced
            PositionalIo.writeFully(channel, chunk, at);
            if (fsync) {
                channel.force(false);
            }
        }
    }

    public synchronized long length() {
        return fileEnd + pending.position();
    }

    /** Closes without writing queued records (what a crash does). */
    void abandon() throws IOException {
        synchronized (flushLock) {
            synchronized (this) {
                closed = true;
                channel.close();
            }
        }
    }

    /** Writes every queued record, forces, closes: only when every queued needle is durable. */
    @Override
    public void close() throws IOException {
        close(Long.MAX_VALUE);
    }

    /** Writes the queued records whose needles end at or below {@code durableEnd}, forces, closes. */
    public void close(long durableEnd) throws IOException {
        synchronized (flushLock) {
            try {
                flush(true, durableEnd);
            } finally {
                synchronized (this) {
                    closed = true;
                    channel.close();
                }
            }
        }
    }
}
