package io.hayloft.store.volume;

import io.hayloft.format.io.PositionalIo;
import io.hayloft.format.needle.Needle;
import io.hayloft.format.needle.Superblock;
import io.hayloft.store.StoreOperationException;
import io.hayloft.store.StoreOperationException.Reason;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Online compaction of a {@link Volume}: copies the live needles to {@code N.dat.cpt} (with a new
 * index and {@code N.idx.cpt}) while the volume keeps serving reads, writes and deletes; deletes
 * that arrive meanwhile are applied to both copies. Then, with writes blocked, it copies what was
 * appended since it started, commits with the {@link CompactionCommit} protocol and swaps file,
 * index and checkpoint in memory under the volume's swap lock.
 *
 * <p>A needle that fails its CRC is skipped and counted (it could not be served anyway); a needle
 * header that cannot be parsed, or any I/O error, stops the compaction and rolls it back: the
 * volume stays as it was.
 *
 * <p>Thread-safe: one compaction per volume at a time (a second one gets
 * {@link Reason#COMPACTION_RUNNING}).
 */
public final class Compactor {
    private static final Logger LOG = LoggerFactory.getLogger(Compactor.class);

    /** What a compaction did. */
    public record Result(long volumeId, long bytesBefore, long bytesAfter, int needlesCopied, int corruptSkipped,
                         long millis) {
    }

    private Compactor() {
    }

    /** The compacted copy being built; guarded by the volume's compaction mutex. */
    static final class Target {
        final FileChannel channel;
        final NeedleIndex index;
        final IdxFile idx;
        long end = Superblock.SIZE;
        int copied;
        int corrupt;

        Target(FileChannel channel, NeedleIndex index, IdxFile idx) {
            this.channel = channel;
            this.index = index;
            this.idx = idx;
        }

        void copy(ByteBuffer needle, long key, int alt, int dataSize) throws IOException {
            long off = end;
            int len = needle.remaining();
            PositionalIo.writeFully(channel, needle.duplicate(), off);
            end += len;
            index.put(key, alt, off, len, false, Volume.keyCheck(channel));
            idx.append(key, alt, off, dataSize, false);
            copied++;
        }

        void deleteIfCopied(long key, int alt) throws IOException {
            long e = index.get(key, alt, Volume.keyCheck(channel));
            if (e == 0) {
                return; // not copied yet: the copier will see it deleted
            }
            long off = NeedleIndex.offset(e);
            ByteBuffer h = ByteBuffer.allocate(Needle.HEADER_SIZE);
            PositionalIo.readFully(channel, h, off);
            h.flip();
            if (Needle.key(h) != key || Needle.alt(h) != alt) {
                return;
            }
            int flags = Needle.flags(h) | Needle.FLAG_DELETED;
            PositionalIo.writeFully(channel, ByteBuffer.wrap(new byte[] {(byte) flags}), off + Needle.OFF_FLAGS);
            index.markDeletedAt(key, alt, off);
            idx.append(key, alt, off, Needle.dataSize(h), true);
        }

        void abandon() throws IOException {
            try {
                idx.abandon();
            } finally {
                channel.close();
            }
        }
    }

    public static Result compact(Volume v) throws IOException {
        return compact(v, CompactionCommit.Hook.NONE);
    }

    /** Compacts {@code v}; {@code hook} sees each commit step (tests stop the commit with it). */
    public static Result compact(Volume v, CompactionCommit.Hook hook) throws IOException {
        long t0 = System.nanoTime();
        Target t;
        long e0;
        Volume.Segment s;
        v.appendLock.lock();
        try {
            if (v.compaction != null) {
                throw new StoreOperationException(Reason.COMPACTION_RUNNING, "volume " + v.id + " is already being compacted");
            }
            CompactionCommit.rollBack(v.disk, v.dir, v.id);
            s = v.seg;
            int live;
            synchronized (s.index) {
                live = s.index.size() - s.index.deletedCount();
            }
            FileChannel ch = v.disk.open(CompactionCommit.datCopy(v.dir, v.id), StandardOpenOption.CREATE,
                    StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.READ, StandardOpenOption.WRITE);
            IdxFile idx;
            try {
                PositionalIo.writeFully(ch, v.superblock.encode(), 0);
                idx = IdxFile.create(v.disk, CompactionCommit.idxCopy(v.dir, v.id), v.id);
            } catch (IOException | RuntimeException e) {
                ch.close();
                throw e;
            }
            t = new Target(ch, new NeedleIndex(live), idx);
            v.compaction = t;
            e0 = s.end;
        } finally {
            v.appendLock.unlock();
        }
        long before = e0;
        boolean markerWritten = false;
        try {
            copyRange(v, s, t, Superblock.SIZE, e0);
            hook.after(CompactionCommit.Step.LIVE_COPIED);
            v.appendLock.lock();
            try {
                before = s.end;
                copyRange(v, s, t, e0, s.end);
                PositionalIo.writeFully(t.channel, v.superblock.encode(), 0);
                t.channel.force(true);
                t.idx.flush(true);
                markerWritten = true; // from here on a failure may have passed the commit point
                CompactionCommit.commit(v.disk, v.dir, v.id, t.end, t.idx.length(), hook);
                swap(v, s, t);
            } finally {
                v.appendLock.unlock();
            }
        } catch (CompactionCommit.SimulatedCrash crash) {
            throw crash;
        } catch (IOException | RuntimeException e) {
            if (markerWritten && v.disk.exists(CompactionCommit.marker(v.dir, v.id))) {
                LOG.error("volume {}: compaction failed after its commit point; rolling forward", v.id, e);
                CompactionCommit.recover(v.disk, v.dir, v.id);
                v.appendLock.lock();
                try {
                    swap(v, s, t);
                } finally {
                    v.appendLock.unlock();
                }
            } else {
                LOG.warn("volume {}: compaction failed; rolling back", v.id, e);
                v.compaction = null;
                t.abandon();
                CompactionCommit.rollBack(v.disk, v.dir, v.id);
            }
            throw e;
        }
        long ms = (System.nanoTime() - t0) / 1_000_000;
        LOG.info("volume {} compacted: {} -> {} bytes, {} needles copied, {} corrupt skipped, {} ms", v.id, before, t.end,
                t.copied, t.corrupt, ms);
        return new Result(v.id, before, t.end, t.copied, t.corrupt, ms);
    }

    private static void swap(Volume v, Volume.Segment old, Target t) throws IOException {
        v.swapLock.writeLock().lock();
        try {
            v.seg = new Volume.Segment(t.channel, t.index, t.idx, t.end);
            v.compaction = null;
        } finally {
            v.swapLock.writeLock().unlock();
        }
        try {
            old.idx.abandon();
        } finally {
            old.retire(); // closed now, or when the last streamed raw read of it ends
        }
    }

    private static void copyRange(Volume v, Volume.Segment s, Target t, long from, long to) throws IOException {
        ByteBuffer h = ByteBuffer.allocate(Needle.HEADER_SIZE);
        long pos = from;
        while (pos < to) {
            h.clear();
            PositionalIo.readFully(s.channel, h, pos);
            h.flip();
            long n = Integer.toUnsignedLong(h.getInt(Needle.OFF_SIZE));
            if (h.getInt(0) != Needle.HEADER_MAGIC || n > Needle.MAX_DATA_SIZE) {
                throw new StoreOperationException(Reason.CORRUPT_FILE, "volume " + v.id + ": no needle header at offset " + pos
                        + "; compaction stopped, the volume is unchanged");
            }
            ByteBuffer b = ByteBuffer.allocate((int) Needle.totalLength(n));
            PositionalIo.readFully(s.channel, b, pos);
            b.flip();
            if (Needle.check(b) != Needle.Check.OK) {
                LOG.warn("volume {}: skipping corrupt needle at offset {} ({})", v.id, pos, Needle.check(b));
                t.corrupt++;
                pos += b.remaining();
                continue;
            }
            long key = Needle.key(b);
            int alt = Needle.alt(b);
            synchronized (v.compactionMutex) {
                boolean live;
                synchronized (s.index) {
                    live = s.index.isLiveAt(key, alt, pos);
                }
                if (live && (Needle.flags(b) & Needle.FLAG_DELETED) == 0) {
                    t.copy(b, key, alt, Needle.dataSize(b));
                }
            }
            pos += b.remaining();
        }
    }
}
