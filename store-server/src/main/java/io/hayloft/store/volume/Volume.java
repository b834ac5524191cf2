package io.hayloft.store.volume;

import io.hayloft.format.errors.CommonErrors;
import io.hayloft.format.io.PositionalIo;
import io.hayloft.format.needle.Needle;
import io.hayloft.format.needle.Superblock;
import io.hayloft.format.wire.VolumeIndex;
import io.hayloft.serverkit.io.Disk;
import io.hayloft.store.StoreOperationException.Reason;
import io.hayloft.store.StoreOperationException;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.IntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One physical volume: the append-only file {@code <id>.dat} ({@link Superblock}, then
 * {@link Needle}s), its in-memory {@link NeedleIndex} and its {@link IdxFile} checkpoint.
 *
 * <p>Writes append under {@code appendLock} and are made durable by a group commit: the first
 * writer to reach {@link #sync} forces the file for every byte appended so far, and the writers
 * queued behind it find their bytes already durable (policy {@link Fsync#ALWAYS}; with
 * {@link Fsync#NEVER} the OS decides, which survives a process crash but not a power loss). A
 * batch is one append and one sync. Deletes set the needle's flag under {@code appendLock} and
 * then wait for the same group commit (every change counts in {@link Segment#modSeq}; a sync
 * covers every change made before it started), so no fsync ever runs under {@code appendLock}.
 * A write or delete is acknowledged only once its bytes are forced (under {@link Fsync#ALWAYS}).
 *
 * <p>Reads take no lock: they look the needle up in the lock-free {@link NeedleIndex} of the
 * current {@link Segment} (a volatile field), take one positional read of the whole needle and
 * check magics, key, cookie, flags and CRC (one CRC32C pass over the data, whose value the caller
 * gets, see {@link #readChecked}). An index entry is published only after its needle's bytes
 * are written. Compaction ({@link Compactor}) swaps the file, index and checkpoint under
 * {@code swapLock}'s write lock (which syncs hold for reading) and then closes the old file (at
 * once, or when the last streamed {@link RawRange} of it is closed); a read that meets the closed
 * file (a {@link ClosedChannelException}) while the segment changed starts again on the new one.
 *
 * <p>Thread-safe. Lock order: appendLock, then swapLock, then the monitors of the compaction
 * mutex, sync monitor and index (an index monitor is never held while taking another lock).
 */
public final class Volume implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(Volume.class);

    /** When writes are forced to disk before they are acknowledged. */
    public enum Fsync { ALWAYS, NEVER }

    /**
     * @param sizeLimit bytes; a write that would pass it seals the volume read-only, unless it is larger
     *                  than an empty volume holds (refused with NEEDLE_TOO_LARGE, the volume left writable)
     */
    public record Options(long sizeLimit, Fsync fsync) {
        public Options {
            Objects.requireNonNull(fsync, "fsync");
            if (sizeLimit < Superblock.SIZE + 64 || sizeLimit > NeedleIndex.MAX_OFFSET) {
                throw new IllegalArgumentException("volume size limit " + sizeLimit + " is outside "
                        + (Superblock.SIZE + 64) + ".." + NeedleIndex.MAX_OFFSET);
            }
        }
    }

    /** One needle of a write: data is read from its position to its limit, not consumed. */
    public record NeedleWrite(long key, int alt, long cookie, ByteBuffer data) {
    }

    /** The durable state compaction swaps as a whole. */
    static final class Segment {
        final FileChannel channel;
        final NeedleIndex index;
        final IdxFile idx;
        volatile long end;
        volatile long durable;
        /** Changes written to {@link #channel} (appends and delete flags); advanced under appendLock after the write. */
        volatile long modSeq;
        /** The changes covered by the last completed fsync. */
        volatile long durableSeq;
        /** Open {@link RawRange}s of this segment; {@link Integer#MIN_VALUE} added once it is retired. */
        private final AtomicInteger streams = new AtomicInteger();

        Segment(FileChannel channel, NeedleIndex index, IdxFile idx, long end) {
            this.channel = channel;
            this.index = index;
            this.idx = idx;
            this.end = end;
            this.durable = end;
        }

        /** Takes a hold that keeps the channel open; false once the segment is retired. */
        boolean retain() {
            while (true) {
                int c = streams.get();
                if (c < 0) {
                    return false;
                }
                if (streams.compareAndSet(c, c + 1)) {
                    return true;
                }
            }
        }

        void release() throws IOException {
            if (streams.decrementAndGet() == Integer.MIN_VALUE) {
                channel.close(); // the last hold of a retired segment
            }
        }

        /** Replaced by a compaction: closes the channel now, or when the last hold is released. */
        void retire() throws IOException {
            if (streams.getAndAdd(Integer.MIN_VALUE) == 0) {
                channel.close();
            }
        }
    }

    final Disk disk;
    final Path dir;
    final long id;
    final Options options;
    final ReentrantLock appendLock = new ReentrantLock();
    final ReentrantReadWriteLock swapLock = new ReentrantReadWriteLock();
    final Object compactionMutex = new Object();
    private final Object syncMonitor = new Object();
    volatile Segment seg;
    volatile Superblock superblock;
    volatile Compactor.Target compaction;
    private volatile boolean closed;
    /** Set when an fsync failed: what reached the disk is unknown, so the volume takes no more writes. */
    private volatile String syncFailure;

    Volume(Disk disk, Path dir, long id, Options options, Segment seg, Superblock sb) {
        this.disk = disk;
        this.dir = dir;
        this.id = id;
        this.options = options;
        this.seg = seg;
        this.superblock = sb;
    }

    public static Path datPath(Path dir, long id) {
        return dir.resolve(id + ".dat");
    }

    public static boolean exists(Path dir, long id) {
        return exists(Disk.REAL, dir, id);
    }

    public static boolean exists(Disk disk, Path dir, long id) {
        return disk.exists(datPath(dir, id));
    }

    public static Path idxPath(Path dir, long id) {
        return dir.resolve(id + ".idx");
    }

    /** Creates a new empty volume on the real disk; refuses if one exists. */
    public static Volume create(Path dir, long id, Options options) throws IOException {
        return create(Disk.REAL, dir, id, options);
    }

    /** Creates a new empty volume; refuses if one exists. */
    public static Volume create(Disk disk, Path dir, long id, Options options) throws IOException {
        if (id < 0) {
            throw new IllegalArgumentException("volume id must be >= 0, got " + id);
        }
        Path dat = datPath(dir, id);
        if (disk.exists(dat)) {
            throw new StoreOperationException(Reason.VOLUME_EXISTS, "volume " + id + " already exists in " + dir);
        }
        Path tmp = dir.resolve(id + ".dat.new");
        Superblock sb = new Superblock(Superblock.VERSION, 0, id, System.currentTimeMillis());
        try (FileChannel ch = disk.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.WRITE)) {
            PositionalIo.writeFully(ch, sb.encode(), 0);
            ch.force(true);
        }
        IdxFile.create(disk, idxPath(dir, id), id).close();
        disk.move(tmp, dat);
        FileIo.syncDirectory(disk, dir);
        return open(disk, dir, id, options);
    }

    /**
     * Opens a volume and recovers it: finishes or undoes an interrupted compaction, loads the
     * {@code .idx}, checks the last needle it names, scans the tail for needles it does not name
     * (appending their records), and truncates a torn or zero-filled tail.
     */
    public static Volume open(Path dir, long id, Options options) throws IOException {
        return open(Disk.REAL, dir, id, options);
    }

    /** {@link #open(Path, long, Options)} on {@code disk}: see {@link VolumeRecovery}. */
    public static Volume open(Disk disk, Path dir, long id, Options options) throws IOException {
        return VolumeRecovery.open(disk, dir, id, options);
    }

    static NeedleIndex.SameKey sameKey(FileChannel ch) {
        return (a, b) -> {
            ByteBuffer ha = ByteBuffer.allocate(Needle.HEADER_SIZE);
            try {
                PositionalIo.readUpTo(ch, ha, a);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            ha.flip();
            return ha.remaining() == Needle.HEADER_SIZE && ha.getInt(0) == Needle.HEADER_MAGIC
                    && keyCheck(ch).matches(b, Needle.key(ha), Needle.alt(ha));
        };
    }

    static NeedleIndex.KeyCheck keyCheck(FileChannel ch) {
        return (offset, key, alt) -> {
            ByteBuffer h = ByteBuffer.allocate(Needle.HEADER_SIZE);
            try {
                PositionalIo.readUpTo(ch, h, offset);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            h.flip();
            return h.remaining() == Needle.HEADER_SIZE && h.getInt(0) == Needle.HEADER_MAGIC
                    && h.getLong(Needle.OFF_KEY) == key && h.getInt(Needle.OFF_ALT) == alt;
        };
    }

    /** The data directory holding this volume's files. */
    public Path dir() {
        return dir;
    }

    public long id() {
        return id;
    }

    public boolean readOnly() {
        return superblock.readOnly();
    }

    /** Appends one needle; durable on return under {@link Fsync#ALWAYS}. */
    public void write(long key, int alt, long cookie, ByteBuffer data) throws IOException {
        write(List.of(new NeedleWrite(key, alt, cookie, data)));
    }

    /** Refuses needle data larger than {@link Needle#MAX_DATA_SIZE} with the store's NEEDLE_TOO_LARGE. */
    static void checkDataSize(long n) {
        if (n < 0 || n > Needle.MAX_DATA_SIZE) {
            throw new StoreOperationException(Reason.NEEDLE_TOO_LARGE, "needle data size " + n + " is outside 0.." + Needle.MAX_DATA_SIZE);
        }
    }

    /** Appends a batch of needles with one write and one sync (Haystack's multi-write). */
    public void write(List<NeedleWrite> batch) throws IOException {
        if (batch.isEmpty()) {
            return;
        }
        long total = 0;
        for (NeedleWrite w : batch) {
            checkDataSize(w.data().remaining());
            total += Needle.totalLength(w.data().remaining());
        }
        if (total > Integer.MAX_VALUE - 16) {
            throw new StoreOperationException(Reason.NEEDLE_TOO_LARGE, "batch of " + total + " bytes is too large for one write");
        }
        if (Superblock.SIZE + total > options.sizeLimit()) { // could never fit: refused, and the volume stays writable
            throw new StoreOperationException(Reason.NEEDLE_TOO_LARGE, "a write of " + total + " bytes can never fit volume " + id
                    + " (its size limit is " + options.sizeLimit() + " bytes); the volume stays writable");
        }
        ByteBuffer buf = ByteBuffer.allocate((int) total);
        for (NeedleWrite w : batch) {
            Needle.encode(buf, w.cookie(), w.key(), w.alt(), 0, w.data());
        }
        buf.flip();
        Segment s;
        long pos;
        long seq;
        appendLock.lock();
        try {
            checkOpen();
            s = seg;
            if (superblock.readOnly()) {
                throw new StoreOperationException(Reason.VOLUME_READ_ONLY, "volume " + id + " is read-only");
            }
            if (syncFailure != null) {
                throw new StoreOperationException(Reason.VOLUME_READ_ONLY, "volume " + id + " takes no writes after an fsync failure ("
                        + syncFailure + "); restart the store to recover it");
            }
            if (s.end + total > options.sizeLimit()) {
                sealLocked();
                throw new StoreOperationException(Reason.VOLUME_READ_ONLY, "volume " + id + " is full (" + s.end + " of "
                        + options.sizeLimit() + " bytes, write needs " + total + "); it is now read-only");
            }
            pos = s.end;
            PositionalIo.writeFully(s.channel, buf, pos);
            s.end = pos + total;
            seq = ++s.modSeq; // after end: a sync that sees this change sees its bytes in end
            NeedleIndex.KeyCheck check = keyCheck(s.channel);
            synchronized (s.index) {
                long off = pos;
                for (NeedleWrite w : batch) {
                    long len = Needle.totalLength(w.data().remaining());
                    s.index.put(w.key(), w.alt(), off, len, false, check);
                    off += len;
                }
            }
            // Queue the .idx records under the append lock, so the checkpoint names needles in file
            // order: recovery scans the tail from the end of the last needle the .idx names, and a
            // record queued out of order could hide an earlier, acknowledged needle from that scan.
            // Queued is not written: flushIndex writes only the records whose needles are durable
            // (Segment.durable), so a record never reaches the disk before its needle.
            long off = pos;
            for (NeedleWrite w : batch) {
                s.idx.append(w.key(), w.alt(), off, w.data().remaining(), false);
                off += Needle.totalLength(w.data().remaining());
            }
        } finally {
            appendLock.unlock();
        }
        sync(s, seq);
    }

    /**
     * Forces the file for every change up to change {@code seq}, sharing one force among
     * concurrent writers and deleters (group commit). Never called under appendLock.
     */
    private void sync(Segment s, long seq) throws IOException {
        if (options.fsync() == Fsync.NEVER) {
            return;
        }
        swapLock.readLock().lock();
        try {
            if (seg != s) {
                return; // a compaction committed: it forced everything written before the swap
            }
            synchronized (syncMonitor) {
                if (s.durableSeq >= seq) {
                    return;
                }
                long targetSeq = s.modSeq; // read before end: every change it counts is within end
                long target = s.end;
                try {
                    s.channel.force(false);
                } catch (IOException e) {
                    syncFailure = e.toString(); // never retry an fsync and then acknowledge (fsyncgate)
                    LOG.error("volume {}: fsync failed; refusing further writes", id, e);
                    throw e;
                }
                s.durable = target;
                s.durableSeq = targetSeq;
            }
        } finally {
            swapLock.readLock().unlock();
        }
    }

    /**
     * Reads a needle's data with one positional read; verifies key, alternate key, cookie, flags
     * and CRC. A wrong cookie, a deleted or a missing needle all fail with
     * {@link Reason#NEEDLE_NOT_FOUND} and the same message.
     */
    public ByteBuffer read(long key, int alt, long cookie) throws IOException {
        return read(key, alt, cookie, ByteBuffer::allocate);
    }

    /**
     * {@link #read(long, int, long)} into a buffer the caller supplies: {@code allocator} gets the
     * needle's length and returns an empty buffer of exactly that size (e.g. a view of a pooled
     * direct buffer, so that the bytes go from the page cache to the socket with no heap copy).
     * The needle is read into it from position 0; the data is at {@link Needle#HEADER_SIZE}. The
     * allocator may be called again (a read that met a compaction's swap, or an index fingerprint
     * shared with another key, starts over): only the buffer of the last call holds the needle.
     *
     * @return a view of the data within the supplied buffer
     */
    public ByteBuffer read(long key, int alt, long cookie, IntFunction<ByteBuffer> allocator)
            throws IOException {
        return readChecked(key, alt, cookie, allocator).data();
    }

    /** A needle's data as read and checked, with the CRC32C of the data computed by the check. */
    public record NeedleRead(ByteBuffer data, int dataCrc32c) {
    }

    /**
     * {@link #read(long, int, long, java.util.function.IntFunction)}, also returning the CRC32C of
     * the data: the read computes it once, in the same pass that checks the needle's stored CRC
     * (combined with the CRC of the header fields, see {@link Crc32c#combine}). Takes no lock.
     */
    public NeedleRead readChecked(long key, int alt, long cookie, IntFunction<ByteBuffer> allocator)
            throws IOException {
        while (true) {
            checkOpen();
            Segment s = seg;
            try {
                return readFrom(s, key, alt, cookie, allocator);
            } catch (ClosedChannelException e) {
                if (seg == s) {
                    checkOpen();
                    throw e;
                }
                // a compaction swapped the file and closed this one under the read: read the new one
            } catch (UncheckedIOException e) {
                if (!(e.getCause() instanceof ClosedChannelException) || seg == s) {
                    throw e;
                }
                // the same, met by a KeyCheck of the index
            }
        }
    }

    private NeedleRead readFrom(Segment s, long key, int alt, long cookie,
                                IntFunction<ByteBuffer> allocator) throws IOException {
        long e = s.index.first(key, alt);
        if (e != 0 && NeedleIndex.isDeleted(e)) {
            // a tombstone: of (key, alt), or of another key sharing its fingerprint? ask the disk
            e = s.index.get(key, alt, keyCheck(s.channel));
        }
        if (e == 0 || NeedleIndex.isDeleted(e)) {
            throw notFound(key, alt);
        }
        long off = NeedleIndex.offset(e);
        ByteBuffer b = readAt(s, off, NeedleIndex.length(e), allocator);
        if (b.remaining() >= Needle.HEADER_SIZE && b.getInt(0) == Needle.HEADER_MAGIC
                && (Needle.key(b) != key || Needle.alt(b) != alt)) {
            // another key shares the fingerprint of (key, alt): ask the index to confirm each candidate
            e = s.index.get(key, alt, keyCheck(s.channel));
            if (e == 0 || NeedleIndex.isDeleted(e)) {
                throw notFound(key, alt);
            }
            off = NeedleIndex.offset(e);
            b = readAt(s, off, NeedleIndex.length(e), allocator);
            if (b.remaining() >= Needle.HEADER_SIZE && b.getInt(0) == Needle.HEADER_MAGIC
                    && (Needle.key(b) != key || Needle.alt(b) != alt)) {
                throw notFound(key, alt);
            }
        }
        int[] dataCrc = new int[1];
        Needle.Check c = Needle.check(b, dataCrc);
        if (c != Needle.Check.OK) {
            throw new StoreOperationException(Reason.NEEDLE_CORRUPT, "needle " + key + "/" + alt + " at offset " + off
                    + " of volume " + id + " fails its check: " + c);
        }
        if ((Needle.flags(b) & Needle.FLAG_DELETED) != 0) {
            synchronized (s.index) {
                s.index.markDeletedAt(key, alt, off); // a delete the checkpoint did not know
            }
            throw notFound(key, alt);
        }
        if (Needle.cookie(b) != cookie) {
            throw notFound(key, alt);
        }
        return new NeedleRead(Needle.data(b), dataCrc[0]);
    }

    private static ByteBuffer readAt(Segment s, long off, long length, IntFunction<ByteBuffer> allocator)
            throws IOException {
        ByteBuffer b = allocator.apply((int) length);
        PositionalIo.readUpTo(s.channel, b, off);
        b.flip();
        return b;
    }

    private StoreOperationException notFound(long key, int alt) {
        return new StoreOperationException(Reason.NEEDLE_NOT_FOUND, CommonErrors.needleNotFound(id, key, alt));
    }

    /**
     * Deletes a needle: sets its flag on disk (forced under {@link Fsync#ALWAYS}) and in memory,
     * and in the compacted copy if a compaction is running.
     */
    public void delete(long key, int alt, long cookie) throws IOException {
        Segment s;
        long seq;
        long off;
        ByteBuffer h;
        Compactor.Target t;
        boolean found;
        appendLock.lock();
        try {
            checkOpen();
            s = seg;
            long e = s.index.first(key, alt);
            h = e == 0 ? null : header(s, NeedleIndex.offset(e));
            if (h != null && !isHeaderOf(h, key, alt)) {
                e = s.index.get(key, alt, keyCheck(s.channel)); // another key shares the fingerprint
                h = e == 0 ? null : header(s, NeedleIndex.offset(e));
            }
            if (e == 0 || !isHeaderOf(h, key, alt)) {
                throw notFound(key, alt);
            }
            off = NeedleIndex.offset(e);
            int flags = Needle.flags(h);
            found = !NeedleIndex.isDeleted(e) && Needle.cookie(h) == cookie && (flags & Needle.FLAG_DELETED) == 0;
            t = compaction;
            if (found) {
                PositionalIo.writeFully(s.channel, ByteBuffer.wrap(new byte[] {(byte) (flags | Needle.FLAG_DELETED)}),
                        off + Needle.OFF_FLAGS);
                synchronized (s.index) {
                    s.index.markDeletedAt(key, alt, off);
                }
                if (t != null) {
                    synchronized (compactionMutex) {
                        t.deleteIfCopied(key, alt);
                    }
                }
                seq = ++s.modSeq;
            } else {
                if ((flags & Needle.FLAG_DELETED) != 0 && Needle.cookie(h) == cookie) {
                    synchronized (s.index) {
                        s.index.markDeletedAt(key, alt, off); // a delete the checkpoint did not know
                    }
                }
                // deleted already (or a wrong cookie): answer only once what is on disk now is durable,
                // so a repeated delete racing the first one's fsync never reports "gone" too early
                seq = s.modSeq;
            }
        } finally {
            appendLock.unlock();
        }
        if (options.fsync() == Fsync.ALWAYS) {
            sync(s, seq);
            if (found && t != null) {
                try {
                    t.channel.force(false);
                } catch (ClosedChannelException closed) {
                    if (compaction == t) {
                        throw closed;
                    }
                    // rolled back (the delete is durable in the live file) or committed and replaced since
                }
            }
        }
        if (!found) {
            throw notFound(key, alt);
        }
        s.idx.append(key, alt, off, Needle.dataSize(h), true);
    }

    private static ByteBuffer header(Segment s, long off) throws IOException {
        ByteBuffer h = ByteBuffer.allocate(Needle.HEADER_SIZE);
        PositionalIo.readUpTo(s.channel, h, off);
        h.flip();
        return h;
    }

    private static boolean isHeaderOf(ByteBuffer h, long key, int alt) {
        return h != null && h.remaining() == Needle.HEADER_SIZE && h.getInt(0) == Needle.HEADER_MAGIC
                && Needle.key(h) == key && Needle.alt(h) == alt;
    }

    /** Marks the volume read-only, on disk (superblock flag, forced) and in memory. */
    public void seal() throws IOException {
        appendLock.lock();
        try {
            checkOpen();
            sealLocked();
        } finally {
            appendLock.unlock();
        }
    }

    private void sealLocked() throws IOException {
        if (superblock.readOnly()) {
            return;
        }
        Superblock sb = superblock.withFlags(superblock.flags() | Superblock.FLAG_READ_ONLY);
        PositionalIo.writeFully(seg.channel, sb.encode(), 0);
        seg.channel.force(false);
        superblock = sb;
        LOG.info("volume {} sealed read-only", id);
    }

    /** Reads {@code length} raw bytes of the volume file at {@code offset} (for the raid-node). */
    public ByteBuffer readRaw(long offset, int length) throws IOException {
        swapLock.readLock().lock();
        try {
            checkOpen();
            Segment s = seg;
            if (offset < 0 || length < 0 || offset + length > s.end) {
                throw new StoreOperationException(Reason.BAD_RANGE, "range " + offset + "+" + length + " is outside volume "
                        + id + " (0.." + s.end + ")");
            }
            ByteBuffer b = ByteBuffer.allocate(length);
            PositionalIo.readUpTo(s.channel, b, offset);
            b.flip();
            return b;
        } finally {
            swapLock.readLock().unlock();
        }
    }

    /**
     * A range of the volume file held open for streaming (the raw read of the raid-node): the
     * channel stays open, on the file as it was when the range was opened, until {@link #close},
     * even if a compaction replaces the file meanwhile. Close it exactly once.
     */
    public static final class RawRange implements Closeable {
        private final Segment segment;
        private final long offset;
        private final long length;
        private final AtomicBoolean closed = new AtomicBoolean();

        RawRange(Segment segment, long offset, long length) {
            this.segment = segment;
            this.offset = offset;
            this.length = length;
        }

        public FileChannel channel() {
            return segment.channel;
        }

        public long offset() {
            return offset;
        }

        public long length() {
            return length;
        }

        @Override
        public void close() throws IOException {
            if (closed.compareAndSet(false, true)) {
                segment.release();
            }
        }
    }

    /**
     * Opens {@code length} raw bytes of the volume file at {@code offset} for streaming, without
     * reading them: what {@link #readRaw} returns, for ranges too large to hold in memory.
     */
    public RawRange openRaw(long offset, long length) {
        while (true) {
            checkOpen();
            Segment s = seg;
            if (offset < 0 || length < 0 || offset + length > s.end || offset + length < 0) {
                throw new StoreOperationException(Reason.BAD_RANGE, "range " + offset + "+" + length + " is outside volume "
                        + id + " (0.." + s.end + ")");
            }
            if (s.retain()) {
                return new RawRange(s, offset, length);
            }
            // retired by a compaction between the two reads: take the new segment
        }
    }

    /**
     * How many changes the live file has had (appends and deletes; {@code Segment#modSeq}). Read under
     * the append lock, so a change whose bytes are on disk is counted: two equal answers mean no byte
     * of the file changed between them, unless a compaction swapped the file (its size tells).
     */
    public long modifications() {
        appendLock.lock();
        try {
            return seg.modSeq;
        } finally {
            appendLock.unlock();
        }
    }

    /** A snapshot of the volume's counters. */
    public record Status(long id, boolean readOnly, long sizeBytes, long sizeLimit, int needles, int deleted,
                         long indexBytes, boolean compacting, long createdMillis) {
    }

    public Status status() {
        swapLock.readLock().lock();
        try {
            Segment s = seg;
            synchronized (s.index) {
                return new Status(id, superblock.readOnly(), s.end, options.sizeLimit(), s.index.size() - s.index.deletedCount(),
                        s.index.deletedCount(), s.index.memoryBytes(), compaction != null, superblock.createdMillis());
            }
        } finally {
            swapLock.readLock().unlock();
        }
    }

    /**
     * This replica's own index as cold-index entries: for every (key, alt) the in-memory index
     * holds, its offset and length from the index, deleted when the index or the header on disk says
     * so, and key, alternate key, data size and CRC32C from the needle's header and footer on disk
     * (two small reads per needle). What the
     * raid-node compares an encode or a reclaim against ({@code GET /admin/volumes/ID/index}).
     *
     * @throws StoreOperationException {@link Reason#CORRUPT_FILE} when the index names a place that holds no
     *                        needle of that length
     */
    public List<VolumeIndex.Entry> indexListing() throws IOException {
        swapLock.readLock().lock();
        try {
            checkOpen();
            Segment s = seg;
            long[] packed;
            synchronized (s.index) {
                packed = new long[s.index.size()];
                int[] n = {0};
                s.index.forEach(p -> packed[n[0]++] = p);
            }
            List<VolumeIndex.Entry> out = new ArrayList<>(packed.length);
            ByteBuffer h = ByteBuffer.allocate(Needle.HEADER_SIZE);
            ByteBuffer f = ByteBuffer.allocate(Needle.FOOTER_SIZE);
            for (long p : packed) {
                long off = NeedleIndex.offset(p);
                long len = NeedleIndex.length(p);
                h.clear();
                PositionalIo.readUpTo(s.channel, h, off);
                h.flip();
                long size = h.remaining() == Needle.HEADER_SIZE ? Integer.toUnsignedLong(h.getInt(Needle.OFF_SIZE)) : -1;
                if (size < 0 || h.getInt(0) != Needle.HEADER_MAGIC || Needle.totalLength(size) != len) {
                    throw new StoreOperationException(Reason.CORRUPT_FILE, "volume " + id + ": the index names a needle of " + len
                            + " bytes at offset " + off + " that the file does not hold");
                }
                f.clear();
                PositionalIo.readUpTo(s.channel, f, off + Needle.HEADER_SIZE + size);
                f.flip();
                if (f.remaining() != Needle.FOOTER_SIZE || f.getInt(0) != Needle.FOOTER_MAGIC) {
                    throw new StoreOperationException(Reason.CORRUPT_FILE, "volume " + id + ": the needle at offset " + off
                            + " has no footer");
                }
                // Deleted when the index or the header says so: a delete's flag is forced in the file before
                // its .idx record, so after a power cut the index checkpoint can lack a delete the file has.
                boolean deleted = NeedleIndex.isDeleted(p) || (Needle.flags(h) & Needle.FLAG_DELETED) != 0;
                out.add(new VolumeIndex.Entry(Needle.key(h), Needle.alt(h),
                        deleted ? VolumeIndex.FLAG_DELETED : 0, off, (int) len, (int) size, f.getInt(4)));
            }
            return out;
        } finally {
            swapLock.readLock().unlock();
        }
    }

    /**
     * Writes the queued {@code .idx} records whose needles are durable (called periodically by the
     * store): under {@link Fsync#ALWAYS} those ending at or below the last completed fsync of the
     * volume file, then forces the {@code .idx}; under {@link Fsync#NEVER} every queued record
     * (its needle is written, which is all that policy promises), without forcing.
     */
    public void flushIndex() throws IOException {
        Segment s = seg;
        boolean always = options.fsync() == Fsync.ALWAYS;
        s.idx.flush(always, always ? s.durable : Long.MAX_VALUE);
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("volume " + id + " is closed");
        }
    }

    @Override
    public void close() throws IOException {
        appendLock.lock();
        swapLock.writeLock().lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            Segment s = seg;
            try {
                long upTo = Long.MAX_VALUE;
                if (options.fsync() == Fsync.ALWAYS && syncFailure == null) {
                    s.channel.force(false);
                    s.durable = s.end;
                    s.durableSeq = s.modSeq;
                    upTo = s.end;
                } else if (options.fsync() == Fsync.ALWAYS) {
                    upTo = s.durable; // after a failed fsync nothing past the last good one is known durable
                }
                s.idx.close(upTo);
            } finally {
                s.idx.abandon();
                s.channel.close();
            }
        } finally {
            swapLock.writeLock().unlock();
            appendLock.unlock();
        }
    }

    /** Closes the files without writing queued {@code .idx} records: what a crash leaves. */
    public void abandon() throws IOException {
        closed = true;
        seg.idx.abandon();
        seg.channel.close();
        Compactor.Target t = compaction;
        if (t != null) {
            t.abandon();
        }
    }

    /** A live needle of a key: its alternate key and data size. */
    public record LiveAlt(int alt, int size) {
    }

    /**
     * The live needles of {@code key} whose cookie is {@code cookie}, by unsigned alternate key;
     * empty when there are none (a wrong cookie looks exactly like a missing key). Found through
     * the index's probe run of the key ({@link NeedleIndex#offsetsOfKey}), each candidate confirmed by its
     * header on disk (magic, key, deleted flag, cookie) and by the index naming that offset as the
     * current needle of its (key, alt). One small read per needle of the key.
     */
    public List<LiveAlt> liveAlts(long key, long cookie) throws IOException {
        swapLock.readLock().lock();
        try {
            checkOpen();
            Segment s = seg;
            long[] found = new long[4];
            int[] n = {0};
            long[][] holder = {found};
            synchronized (s.index) {
                s.index.offsetsOfKey(key, off -> {
                    if (n[0] == holder[0].length) {
                        holder[0] = Arrays.copyOf(holder[0], n[0] * 2);
                    }
                    holder[0][n[0]++] = off;
                });
            }
            found = holder[0];
            List<LiveAlt> out = new ArrayList<>();
            ByteBuffer h = ByteBuffer.allocate(Needle.HEADER_SIZE);
            for (int i = 0; i < n[0]; i++) {
                long off = found[i];
                h.clear();
                PositionalIo.readUpTo(s.channel, h, off);
                h.flip();
                if (h.remaining() < Needle.HEADER_SIZE || h.getInt(0) != Needle.HEADER_MAGIC || Needle.key(h) != key
                        || (Needle.flags(h) & Needle.FLAG_DELETED) != 0 || Needle.cookie(h) != cookie) {
                    continue;
                }
                int alt = Needle.alt(h);
                boolean live;
                synchronized (s.index) {
                    live = s.index.isLiveAt(key, alt, off);
                }
                if (live) {
                    out.add(new LiveAlt(alt, Needle.dataSize(h)));
                }
            }
            out.sort((a, b) -> Integer.compareUnsigned(a.alt(), b.alt()));
            return out;
        } finally {
            swapLock.readLock().unlock();
        }
    }

    /**
     * Deletes every live needle of {@code key} whose cookie is {@code cookie} (as {@link #delete}
     * does for one, forced under {@link Fsync#ALWAYS}); needles of the key with another cookie are
     * untouched.
     *
     * @return the alternate keys deleted, by unsigned value; empty when there were none
     */
    public List<Integer> deleteKey(long key, long cookie) throws IOException {
        // No lock around the loop: each delete takes appendLock itself and waits for its fsync
        // outside it (a lock held here would put that fsync under the writers' lock).
        List<Integer> deleted = new ArrayList<>();
        for (LiveAlt a : liveAlts(key, cookie)) {
            try {
                delete(key, a.alt(), cookie);
                deleted.add(a.alt());
            } catch (StoreOperationException e) {
                if (e.reason() != Reason.NEEDLE_NOT_FOUND) {
                    throw e;
                }
            }
        }
        return deleted;
    }

    /**
     * Forces the volume file whatever the fsync policy, so that the deletes done so far are
     * durable (the delete-log sync calls it before it records how far it applied the log).
     */
    public void forceDeletes() throws IOException {
        Segment s;
        Compactor.Target t;
        appendLock.lock();
        try {
            checkOpen();
            s = seg;
            t = compaction;
        } finally {
            appendLock.unlock(); // the force runs outside the writers' lock
        }
        swapLock.readLock().lock();
        try {
            if (seg != s) {
                return; // a compaction committed: it forced everything written before the swap
            }
            synchronized (syncMonitor) {
                s.channel.force(false);
            }
            if (t != null) {
                try {
                    t.channel.force(false);
                } catch (ClosedChannelException aborted) {
                    // the compaction was abandoned: its copy is discarded, the volume file holds the deletes
                }
            }
        } finally {
            swapLock.readLock().unlock();
        }
    }

}
