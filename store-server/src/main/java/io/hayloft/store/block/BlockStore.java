package io.hayloft.store.block;

import io.hayloft.format.io.PositionalIo;
import io.hayloft.serverkit.io.Disk;
import io.hayloft.store.StoreOperationException.Reason;
import io.hayloft.store.StoreOperationException;
import io.hayloft.store.volume.FileIo;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * Named block files for the raid-node (erasure-coded blocks of sealed volumes): create, append,
 * put (atomic replace, from memory or streamed from another store), range read, delete, and a listing with each block's length and CRC32C.
 * A block is stored as the raw bytes of {@code <dir>/<name>.blk}, no header: its integrity is
 * checked by the raid-node against the CRCs it recorded, using {@link #list}.
 *
 * <p>Durability: put writes {@code <name>.blk.tmp}, forces it, renames it over the block and
 * forces the directory; a {@link Writer} (a streamed put) the same with its own temporary file;
 * create forces the directory; append forces the file when {@code fsync}.
 * The CRC of a block written by put, putStream or a Writer is recorded when it is written (no
 * re-read to list it); that of a block created and appended to, or found at start-up, is computed
 * when first listed; either is cached until the block changes (not persisted).
 *
 * <p>An {@link #inOrderWriter} (streamed puts, a stripe encode's data units) writes around the page
 * cache ({@link Disk#openDirect}, O_DIRECT) where the file system allows: a 1 MiB aligned staging
 * buffer per writer (pooled), the last piece padded to the alignment and truncated back before the
 * force; the same file and the same durability as a {@link #writer}.
 *
 * <p>Thread-safe: operations on one block are serialized by a per-name lock; a {@link Writer} is
 * used by one thread at a time.
 */
public final class BlockStore {
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
    private static final String SUFFIX = ".blk";
    /** A {@link Writer}'s file until it commits; one left at start-up is deleted. */
    private static final String WRITER_SUFFIX = SUFFIX + ".enc.tmp";

    /** One block in a listing. */
    public record BlockInfo(String name, long length, long crc32c) {
    }

    private final Disk disk;
    private final Path dir;
    private final boolean fsync;
    private final ConcurrentHashMap<String, Object> locks = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, BlockInfo> crcCache = new ConcurrentHashMap<>();
    /** {@link #inOrderWriter}s around the page cache where the file system allows. */
    private final boolean directWrites;
    /** The in-order writers' staging buffers, kept for the next writers (at most 64). */
    private final BlockingQueue<ByteBuffer> stages = new ArrayBlockingQueue<>(64);
    /** Bytes of blocks committed by {@link Writer}s: [0] around the page cache, [1] through it. */
    private final LongAdder[] committed = {new LongAdder(),
        new LongAdder()};
    /** Bytes an in-order writer gathers before each write around the page cache. */
    static final int STAGE_BYTES = 1 << 20;

    public BlockStore(Path dir, boolean fsync) throws IOException {
        this(Disk.REAL, dir, fsync);
    }

    /** Block files in {@code dir} on {@code disk}; in-order writers around the page cache where possible. */
    public BlockStore(Disk disk, Path dir, boolean fsync) throws IOException {
        this(disk, dir, fsync, true);
    }

    /**
     * Block files in {@code dir} on {@code disk}.
     *
     * @param directWrites {@link #inOrderWriter}s write around the page cache (O_DIRECT) where the
     *                     file system allows; false: through it, as {@link #writer}
     */
    public BlockStore(Disk disk, Path dir, boolean fsync, boolean directWrites) throws IOException {
        this.disk = disk;
        this.dir = dir;
        this.fsync = fsync;
        this.directWrites = directWrites;
        disk.createDirectories(dir);
        for (String f : disk.list(dir)) {
            if (f.endsWith(WRITER_SUFFIX)) {
                disk.deleteIfExists(dir.resolve(f)); // a stripe encode the store did not finish (it crashed)
            }
        }
    }

    /** Checks a block name: 1..128 of {@code [A-Za-z0-9._-]}, not starting with a dot or dash. */
    public static String checkName(String name) {
        if (name == null || !NAME.matcher(name).matches() || name.endsWith(".tmp")) {
            throw new StoreOperationException(Reason.BAD_ARGUMENT, "bad block name '" + name
                    + "': use 1..128 characters of [A-Za-z0-9._-], starting with a letter or digit");
        }
        return name;
    }

    private Path path(String name) {
        return dir.resolve(fileName(name));
    }

    /** The file that holds block {@code name} in a store's block directory. */
    public static String fileName(String name) {
        return checkName(name) + SUFFIX;
    }

    private Object lock(String name) {
        return locks.computeIfAbsent(name, k -> new Object());
    }

    /** Creates an empty block; refuses if it exists. */
    public void create(String name) throws IOException {
        Path p = path(name);
        synchronized (lock(name)) {
            try {
                disk.open(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE).close();
            } catch (FileAlreadyExistsException e) {
                throw new StoreOperationException(Reason.BLOCK_EXISTS, "block " + name + " already exists");
            }
            crcCache.remove(name);
            FileIo.syncDirectory(disk, dir);
        }
    }

    /** Appends to an existing block; returns its new length. */
    public long append(String name, ByteBuffer data) throws IOException {
        Path p = path(name);
        synchronized (lock(name)) {
            try (FileChannel ch = disk.open(p, StandardOpenOption.WRITE)) {
                long pos = ch.size() + data.remaining();
                PositionalIo.writeFully(ch, data, ch.size());
                if (fsync) {
                    ch.force(false);
                }
                crcCache.remove(name);
                return pos;
            } catch (NoSuchFileException e) {
                throw notFound(name);
            }
        }
    }

    /** Creates or atomically replaces a block with {@code data}. */
    public void put(String name, ByteBuffer data) throws IOException {
        Path p = path(name);
        Path tmp = dir.resolve(name + SUFFIX + ".tmp");
        synchronized (lock(name)) {
            CRC32C crc = new CRC32C();
            crc.update(data.duplicate());
            long length = data.remaining();
            try (FileChannel ch = disk.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.WRITE)) {
                PositionalIo.writeFully(ch, data, 0);
                ch.force(true);
            }
            disk.move(tmp, p);
            FileIo.syncDirectory(disk, dir);
            crcCache.put(name, new BlockInfo(name, length, crc.getValue()));
        }
    }

    /** Bytes read from the stream and written per step of {@link #putStream}. */
    static final int STREAM_CHUNK = 256 * 1024;

    /** Where {@link #putStream} reads a block from: a stream it closes whatever happens. */
    @FunctionalInterface
    public interface StreamSource {
        InputStream open() throws IOException;
    }

    /**
     * Creates or atomically replaces block {@code name} with exactly {@code length} bytes read from
     * {@code source}, {@link #STREAM_CHUNK} at a time (never the whole block in memory), as {@link #put}
     * does: {@code <name>.blk.tmp} written and forced, renamed over the block, the directory forced.
     * A stream that ends early or fails leaves the block as it was (the temporary file is deleted).
     *
     * @return the block's length and CRC32C, computed from the bytes written
     */
    public BlockInfo putStream(String name, long length, StreamSource source) throws IOException {
        if (length < 0) {
            throw new StoreOperationException(Reason.BAD_ARGUMENT, "length must be >= 0, got " + length);
        }
        Path p = path(name);
        Path tmp = dir.resolve(name + SUFFIX + ".tmp");
        synchronized (lock(name)) {
            CRC32C crc = new CRC32C();
            boolean done = false;
            try (InputStream in = source.open();
                 FileChannel ch = disk.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                         StandardOpenOption.WRITE)) {
                byte[] chunk = new byte[(int) Math.min(STREAM_CHUNK, Math.max(1, length))];
                long pos = 0;
                while (pos < length) {
                    int want = (int) Math.min(chunk.length, length - pos);
                    int got = in.readNBytes(chunk, 0, want);
                    if (got < want) {
                        throw new EOFException("the source of block " + name + " ended at " + (pos + got)
                                + " of " + length + " bytes");
                    }
                    crc.update(chunk, 0, got);
                    PositionalIo.writeFully(ch, ByteBuffer.wrap(chunk, 0, got), pos);
                    pos += got;
                }
                ch.force(true);
                done = true;
            } finally {
                if (!done) {
                    disk.deleteIfExists(tmp);
                }
            }
            disk.move(tmp, p);
            FileIo.syncDirectory(disk, dir);
            BlockInfo info = new BlockInfo(name, length, crc.getValue());
            crcCache.put(name, info);
            return info;
        }
    }

    /**
     * A block written in place, for blocks too large to hold in memory (a store encoding a stripe, a
     * streamed {@code PUT /blocks/<name>}): positional writes or appends into its own temporary file
     * {@code <name>~<n>.blk.enc.tmp} ({@code n} unique in this process; {@code ~} is in no block name,
     * so no two writers share a file, and two writers of one name do not see each other's bytes);
     * {@link #commit} forces it, renames it over any block of that name (atomic replace: the last
     * commit wins) and forces the directory, as {@link BlockStore#put} does; {@link #close} without a
     * commit deletes the file. Such files left by a crash are deleted when the store starts.
     *
     * <p>Not thread-safe: one thread at a time (a request's calls are serial).
     */
    public final class Writer implements Closeable {
        private final String name;
        private final Path tmp;
        private FileChannel channel;
        /** In order, around the page cache: bytes gather in {@link #stage} until it is full or the commit. */
        private Disk.Direct direct;
        private ByteBuffer stage;
        /** Bytes of the file written from the stage (a multiple of the stage's size). */
        private long flushed;
        private long end;
        private boolean committed;
        private boolean closed;

        private Writer(String name, boolean inOrder) throws IOException {
            this.name = name;
            this.tmp = dir.resolve(name + "~" + WRITERS.incrementAndGet() + WRITER_SUFFIX);
            if (inOrder && directWrites) {
                direct = disk.openDirect(tmp);
                if (direct != null) {
                    stage = stage(direct.alignment());
                    channel = direct.channel();
                    return;
                }
            }
            this.channel = disk.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.READ, StandardOpenOption.WRITE);
        }

        /** The block's name. */
        public String name() {
            return name;
        }

        /** True when the bytes go to the disk around the page cache ({@link BlockStore#inOrderWriter}). */
        public boolean direct() {
            return direct != null;
        }

        /** Writes {@code src} after the last byte written so far (by an append or a positional write). */
        public void append(ByteBuffer src) throws IOException {
            write(src, end);
        }

        /** Bytes up to the end of the furthest write so far. */
        public long length() {
            return end;
        }

        /**
         * The file being written: positional reads and writes. Not for an in-order writer, whose
         * last bytes wait in memory until the commit.
         *
         * @throws IllegalStateException for a writer from {@link BlockStore#inOrderWriter}
         */
        public FileChannel channel() {
            if (stage != null) {
                throw new IllegalStateException("block " + name + " is written in order around the page cache: no channel");
            }
            return channel;
        }

        /**
         * Writes {@code src} at {@code offset}.
         *
         * @throws IllegalArgumentException on a writer from {@link BlockStore#inOrderWriter} when
         *         {@code offset} is not the end of what was written
         */
        public void write(ByteBuffer src, long offset) throws IOException {
            if (stage != null) {
                if (offset != end) {
                    throw new IllegalArgumentException("block " + name + " is written in order: a write at " + offset
                            + ", expected " + end);
                }
                int n = src.remaining();
                while (src.hasRemaining()) {
                    if (stage == null) { // the file system refused the first write: the rest through the page cache
                        PositionalIo.writeFully(channel, src, end + (n - src.remaining()));
                        break;
                    }
                    int take = Math.min(stage.remaining(), src.remaining());
                    stage.put(stage.position(), src, src.position(), take);
                    stage.position(stage.position() + take);
                    src.position(src.position() + take);
                    if (!stage.hasRemaining()) {
                        flushStage();
                    }
                }
                end += n;
                return;
            }
            long pos = offset + src.remaining();
            PositionalIo.writeFully(channel, src, offset);
            end = Math.max(end, pos);
        }

        /**
         * Writes the stage's bytes at {@link #flushed}, padded with zeros to the alignment (the commit
         * truncates the padding). A file system that opened the file with O_DIRECT but refuses the
         * first write gets it, and the rest, through the page cache.
         */
        private void flushStage() throws IOException {
            int len = stage.position();
            int padded = (len + direct.alignment() - 1) & -direct.alignment();
            for (int i = len; i < padded; i++) {
                stage.put(i, (byte) 0);
            }
            ByteBuffer out = stage.duplicate().limit(padded).position(0);
            try {
                PositionalIo.writeFully(channel, out, flushed);
            } catch (IOException e) {
                if (flushed > 0) {
                    throw e;
                }
                channel.close(); // refused at the first write: the page cache after all
                channel = disk.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                        StandardOpenOption.READ, StandardOpenOption.WRITE);
                direct = null;
                PositionalIo.writeFully(channel, stage.duplicate().limit(len).position(0), 0);
                releaseStage();
                return;
            }
            flushed += len;
            stage.clear();
        }

        private void releaseStage() {
            if (stage != null) {
                stages.offer(stage.clear());
                stage = null;
            }
        }

        /** Makes the written bytes block {@code name} (durable), recording its CRC32C {@code crc32c} for listings. */
        public void commit(long crc32c) throws IOException {
            if (stage != null) {
                if (stage.position() > 0) {
                    flushStage();
                }
                if (stage != null && channel.size() != end) {
                    channel.truncate(end); // the last write's padding
                }
                releaseStage();
            }
            boolean wentDirect = direct != null; // null again if the file system refused the first write
            long length = channel.size();
            channel.force(true);
            channel.close();
            synchronized (lock(name)) {
                disk.move(tmp, path(name));
                FileIo.syncDirectory(disk, dir);
                crcCache.put(name, new BlockInfo(name, length, crc32c));
                committed = true;
                BlockStore.this.committed[wentDirect ? 0 : 1].add(length);
            }
        }

        /** Deletes the file unless committed; idempotent. */
        @Override
        public void close() throws IOException {
            if (!committed && !closed) {
                closed = true;
                releaseStage();
                try {
                    channel.close();
                } finally {
                    disk.deleteIfExists(tmp);
                }
            }
        }
    }

    /** An aligned direct buffer of {@link #STAGE_BYTES} for an in-order writer, from the pool or new. */
    private ByteBuffer stage(int alignment) {
        ByteBuffer b;
        while ((b = stages.poll()) != null) {
            if (b.alignmentOffset(0, alignment) == 0) {
                return b;
            }
        }
        return ByteBuffer.allocateDirect(STAGE_BYTES + alignment).alignedSlice(alignment).limit(STAGE_BYTES).slice();
    }

    /** Numbers the {@link Writer}s' temporary files. */
    private static final AtomicLong WRITERS = new AtomicLong();

    /**
     * Bytes of the blocks {@link Writer}s committed since this store opened: written around the page
     * cache when {@code direct}, else through it.
     */
    public long committedBytes(boolean direct) {
        return committed[direct ? 0 : 1].sum();
    }

    /** Starts writing block {@code name} in place ({@link Writer}), at any offsets, through the page cache. */
    public Writer writer(String name) throws IOException {
        return new Writer(checkName(name), false);
    }

    /**
     * Starts writing block {@code name} front to back (each write at the end of the last, as a
     * streamed put does): around the page cache ({@link Disk#openDirect}) when the store allows it
     * and the file system can, else as {@link #writer}. A block is written once and read rarely:
     * copying it into the page cache costs the CPU more than the disk, and pushes hot volume pages out.
     */
    public Writer inOrderWriter(String name) throws IOException {
        return new Writer(checkName(name), true);
    }

    /**
     * An open range of a block, for streaming: the caller owns {@link #channel} and closes it (via
     * {@link #close}). The channel reads the block as it was when opened, even if a put replaces
     * it meanwhile (the rename leaves the open file as it was); an append only adds bytes past the range.
     */
    public record OpenRange(FileChannel channel, long offset, long length) implements Closeable {
        @Override
        public void close() throws IOException {
            channel.close();
        }
    }

    /**
     * Opens {@code length} bytes at {@code offset} (-1: to the end) of a block without reading
     * them: what {@link #read} returns, for blocks too large to hold in memory.
     */
    public OpenRange open(String name, long offset, long length) throws IOException {
        Path p = path(name);
        FileChannel ch;
        try {
            ch = disk.open(p, StandardOpenOption.READ);
        } catch (NoSuchFileException e) {
            throw notFound(name);
        }
        try {
            long size = ch.size();
            if (length < 0) {
                length = size - Math.max(0, offset);
            }
            if (offset < 0 || offset + length > size) {
                throw new StoreOperationException(Reason.BAD_RANGE, "range " + offset + "+" + length + " is outside block "
                        + name + " (0.." + size + ")");
            }
            return new OpenRange(ch, offset, length);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /** Reads {@code length} bytes at {@code offset}; the range must lie inside the block. */
    public ByteBuffer read(String name, long offset, long length) throws IOException {
        Path p = path(name);
        try (FileChannel ch = disk.open(p, StandardOpenOption.READ)) {
            long size = ch.size();
            if (length < 0) {
                length = size - Math.max(0, offset);
            }
            if (offset < 0 || offset + length > size || length > Integer.MAX_VALUE - 16) {
                throw new StoreOperationException(Reason.BAD_RANGE, "range " + offset + "+" + length + " is outside block "
                        + name + " (0.." + size + ")");
            }
            ByteBuffer b = ByteBuffer.allocate((int) length);
            PositionalIo.readUpTo(ch, b, offset);
            b.flip();
            return b;
        } catch (NoSuchFileException e) {
            throw notFound(name);
        }
    }

    public void delete(String name) throws IOException {
        Path p = path(name);
        synchronized (lock(name)) {
            if (!disk.deleteIfExists(p)) {
                throw notFound(name);
            }
            crcCache.remove(name);
            FileIo.syncDirectory(disk, dir);
        }
    }

    /** Every block with its length and CRC32C, sorted by name. */
    public List<BlockInfo> list() throws IOException {
        List<String> names = new ArrayList<>();
        for (String f : disk.list(dir)) {
            if (f.endsWith(SUFFIX)) {
                names.add(f.substring(0, f.length() - SUFFIX.length()));
            }
        }
        names.sort(null);
        List<BlockInfo> out = new ArrayList<>(names.size());
        for (String name : names) {
            synchronized (lock(name)) {
                BlockInfo info = crcCache.get(name);
                if (info == null) {
                    info = checksum(name);
                    if (info == null) {
                        continue;
                    }
                    crcCache.put(name, info);
                }
                out.add(info);
            }
        }
        return out;
    }

    private BlockInfo checksum(String name) throws IOException {
        try (FileChannel ch = disk.open(path(name), StandardOpenOption.READ)) {
            CRC32C crc = new CRC32C();
            ByteBuffer b = ByteBuffer.allocateDirect(1 << 20);
            long length = 0;
            while (ch.read(b) >= 0) {
                b.flip();
                length += b.remaining();
                crc.update(b);
                b.clear();
            }
            return new BlockInfo(name, length, crc.getValue());
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    private static StoreOperationException notFound(String name) {
        return new StoreOperationException(Reason.BLOCK_NOT_FOUND, "block " + name + " not found");
    }
}
