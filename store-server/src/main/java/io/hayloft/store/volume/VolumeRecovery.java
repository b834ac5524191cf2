package io.hayloft.store.volume;

import io.hayloft.format.io.PositionalIo;
import io.hayloft.format.needle.Needle;
import io.hayloft.format.needle.Superblock;
import io.hayloft.serverkit.io.Disk;
import io.hayloft.store.StoreOperationException;
import io.hayloft.store.StoreOperationException.Reason;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens a {@link Volume} and recovers it after a crash or a power cut, in this order: finishes or
 * undoes an interrupted compaction ({@link CompactionCommit#recover}); reads the superblock (a seal
 * torn by a power cut opens as sealed and is rewritten); loads the {@code .idx} (discarded, and the
 * whole volume rescanned, if it names bytes the volume does not hold or if the needle with the
 * highest offset it names fails its check); scans the tail past the last needle the {@code .idx}
 * names, indexing valid needles and truncating at the first invalid one (a torn append or a
 * zero-filled tail: the file's length is never trusted); then forces the volume file before the
 * {@code .idx} records of the needles it found are written, since after a {@code kill -9} they may
 * be only in the page cache.
 *
 * <p>Thread-safe (stateless); a volume is opened by one thread before it is shared.
 */
final class VolumeRecovery {
    private static final Logger LOG = LoggerFactory.getLogger(VolumeRecovery.class);

    private VolumeRecovery() {
    }

    static Volume open(Disk disk, Path dir, long id, Volume.Options options) throws IOException {
        CompactionCommit.recover(disk, dir, id);
        Path dat = Volume.datPath(dir, id);
        if (!disk.exists(dat)) {
            throw new StoreOperationException(Reason.VOLUME_NOT_FOUND, "volume " + id + " not found in " + dir);
        }
        FileChannel ch = disk.open(dat, StandardOpenOption.READ, StandardOpenOption.WRITE);
        try {
            ByteBuffer sbBuf = ByteBuffer.allocate(Superblock.SIZE);
            PositionalIo.readUpTo(ch, sbBuf, 0);
            sbBuf.flip();
            Superblock sb;
            try {
                sb = Superblock.decodeAllowingTornSeal(sbBuf, dat.toString());
            } catch (Superblock.InvalidSuperblockException e) {
                throw new StoreOperationException(e.unsupportedVersion() ? Reason.UNSUPPORTED_FORMAT : Reason.CORRUPT_FILE, e.getMessage());
            }
            if (sb.volumeId() != id) {
                throw new StoreOperationException(Reason.CORRUPT_FILE, dat + " holds volume " + sb.volumeId() + ", not " + id);
            }
            if (!sb.encode().equals(sbBuf)) {
                LOG.warn("volume {}: the superblock was torn by a power cut while sealing; rewriting it sealed", id);
                PositionalIo.writeFully(ch, sb.encode(), 0);
                ch.force(true);
            }
            long fileSize = ch.size();
            Path idxPath = Volume.idxPath(dir, id);
            long hint = disk.exists(idxPath) ? disk.size(idxPath) / IdxFile.RECORD_SIZE : 0;
            NeedleIndex.Builder builder = new NeedleIndex.Builder((int) Math.min(hint, Integer.MAX_VALUE / 2));
            long[] maxEnd = {Superblock.SIZE, 0};
            long[] unbacked = {-1};
            IdxFile idx = IdxFile.load(disk, idxPath, id, (key, alt, offset, size, deleted) -> {
                long len = Needle.totalLength(Integer.toUnsignedLong(size));
                if (offset < Superblock.SIZE || offset + len > fileSize) {
                    // A record whose needle a power cut took (fsync off, or an .idx written by an older
                    // build): kept, it would later misdescribe whatever needle lands at that offset.
                    unbacked[0] = offset;
                    return;
                }
                builder.add(key, alt, offset, len, deleted);
                if (offset + len > maxEnd[0]) {
                    maxEnd[0] = offset + len;
                    maxEnd[1] = offset;
                }
            });
            NeedleIndex index = builder.build(Volume.sameKey(ch));
            Volume v;
            long scanFrom = maxEnd[0];
            if (unbacked[0] >= 0 || maxEnd[1] != 0 && !validAt(ch, maxEnd[1])) {
                LOG.warn("volume {}: its .idx names a needle (offset {}) the volume does not hold; rebuilding from a full scan",
                        id, unbacked[0] >= 0 ? unbacked[0] : maxEnd[1]);
                idx.abandon();
                idx = IdxFile.create(disk, idxPath, id);
                v = new Volume(disk, dir, id, options, new Volume.Segment(ch, new NeedleIndex(0), idx, Superblock.SIZE), sb);
                scanFrom = Superblock.SIZE;
            } else {
                v = new Volume(disk, dir, id, options, new Volume.Segment(ch, index, idx, scanFrom), sb);
            }
            scanTail(v, scanFrom, fileSize);
            return v;
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /** Indexes the valid needles from {@code from}, truncates at the first invalid one. */
    private static void scanTail(Volume v, long from, long fileSize) throws IOException {
        Volume.Segment s = v.seg;
        long id = v.id;
        long pos = from;
        int orphans = 0;
        ByteBuffer h = ByteBuffer.allocate(Needle.HEADER_SIZE);
        String stop = "end of file";
        while (pos < fileSize) {
            h.clear();
            PositionalIo.readUpTo(s.channel, h, pos);
            h.flip();
            if (h.remaining() < Needle.HEADER_SIZE) {
                stop = "short header";
                break;
            }
            if (h.getInt(0) != Needle.HEADER_MAGIC) {
                stop = "bad header magic";
                break;
            }
            long n = Integer.toUnsignedLong(h.getInt(Needle.OFF_SIZE));
            if (n > Needle.MAX_DATA_SIZE || pos + Needle.totalLength(n) > fileSize) {
                stop = "needle runs past the end of the file";
                break;
            }
            ByteBuffer b = ByteBuffer.allocate((int) Needle.totalLength(n));
            PositionalIo.readUpTo(s.channel, b, pos);
            b.flip();
            Needle.Check c = Needle.check(b);
            if (c != Needle.Check.OK) {
                stop = "needle check " + c;
                break;
            }
            boolean deleted = (Needle.flags(b) & Needle.FLAG_DELETED) != 0;
            s.index.put(Needle.key(b), Needle.alt(b), pos, b.remaining(), deleted, Volume.keyCheck(s.channel));
            s.idx.append(Needle.key(b), Needle.alt(b), pos, Needle.dataSize(b), deleted);
            pos += b.remaining();
            orphans++;
        }
        if (pos < fileSize) {
            LOG.warn("volume {}: truncating {} bytes at offset {} ({})", id, fileSize - pos, pos, stop);
            s.channel.truncate(pos);
        }
        if (orphans > 0) {
            LOG.info("volume {}: indexed {} needles past the checkpoint", id, orphans);
        }
        // The tail just indexed may be only in the page cache (a kill -9 keeps it, a power cut
        // would not): force it before the .idx records naming it can become durable.
        s.channel.force(true);
        s.idx.flush(true, pos);
        s.end = pos;
        s.durable = pos;
    }

    /** Reads and checks the needle at {@code offset} of a volume file. */
    static boolean validAt(FileChannel ch, long offset) throws IOException {
        ByteBuffer h = ByteBuffer.allocate(Needle.HEADER_SIZE);
        PositionalIo.readUpTo(ch, h, offset);
        h.flip();
        if (h.remaining() < Needle.HEADER_SIZE || h.getInt(0) != Needle.HEADER_MAGIC) {
            return false;
        }
        long n = Integer.toUnsignedLong(h.getInt(Needle.OFF_SIZE));
        if (n > Needle.MAX_DATA_SIZE) {
            return false;
        }
        ByteBuffer b = ByteBuffer.allocate((int) Needle.totalLength(n));
        PositionalIo.readUpTo(ch, b, offset);
        b.flip();
        return Needle.check(b) == Needle.Check.OK;
    }
}
