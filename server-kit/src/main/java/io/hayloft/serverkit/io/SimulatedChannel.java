package io.hayloft.serverkit.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.NonReadableChannelException;
import java.nio.channels.NonWritableChannelException;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Path;

/**
 * A {@link FileChannel} of a {@link SimulatedDisk}: reads and writes one inode, records every write
 * and truncate as unsynced until {@link #force}, and dies at the next power cut (every call then
 * throws {@code IOException("simulated power cut")}; {@code close()} succeeds quietly).
 *
 * <p>Thread-safe: every operation holds the disk's monitor (the force hook runs outside it).
 */
final class SimulatedChannel extends FileChannel {
    private final SimulatedDisk disk;
    private final Path path;
    private final SimulatedDisk.Inode inode;
    private final long gen;
    private final boolean readable;
    private final boolean writable;
    private final boolean append;
    private final boolean deleteOnClose;
    private long position;

    SimulatedChannel(SimulatedDisk disk, Path path, SimulatedDisk.Inode inode, long gen, boolean readable, boolean writable,
            boolean append, boolean deleteOnClose) {
        this.disk = disk;
        this.deleteOnClose = deleteOnClose;
        this.path = path;
        this.inode = inode;
        this.gen = gen;
        this.readable = readable;
        this.writable = writable;
        this.append = append;
    }

    private void check() throws IOException {
        if (!isOpen()) {
            throw new ClosedChannelException();
        }
        disk.checkGeneration(gen);
    }

    private void checkRead() throws IOException {
        check();
        if (!readable) {
            throw new NonReadableChannelException();
        }
    }

    private void checkWrite() throws IOException {
        check();
        if (!writable) {
            throw new NonWritableChannelException();
        }
    }

    @Override
    public int read(ByteBuffer dst, long pos) throws IOException {
        if (pos < 0) {
            throw new IllegalArgumentException("negative position " + pos);
        }
        synchronized (disk) {
            checkRead();
            if (pos >= inode.length) {
                return -1;
            }
            int n = (int) Math.min(dst.remaining(), inode.length - pos);
            dst.put(inode.data, (int) pos, n);
            return n;
        }
    }

    @Override
    public int write(ByteBuffer src, long pos) throws IOException {
        if (pos < 0) {
            throw new IllegalArgumentException("negative position " + pos);
        }
        synchronized (disk) {
            checkWrite();
            byte[] b = new byte[src.remaining()];
            src.duplicate().get(b);
            inode.write(pos, b);
            inode.unsynced.add(new SimulatedDisk.Op(pos, b));
            src.position(src.limit());
            return b.length;
        }
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        synchronized (disk) {
            int n = read(dst, position);
            if (n > 0) {
                position += n;
            }
            return n;
        }
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
        synchronized (disk) {
            long total = 0;
            for (int i = offset; i < offset + length; i++) {
                int n = read(dsts[i]);
                if (n < 0) {
                    return total == 0 ? -1 : total;
                }
                total += n;
            }
            return total;
        }
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        synchronized (disk) {
            checkWrite();
            if (append) {
                position = inode.length;
            }
            int n = write(src, position);
            position += n;
            return n;
        }
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        synchronized (disk) {
            long total = 0;
            for (int i = offset; i < offset + length; i++) {
                total += write(srcs[i]);
            }
            return total;
        }
    }

    @Override
    public long position() throws IOException {
        synchronized (disk) {
            check();
            return append ? inode.length : position;
        }
    }

    @Override
    public FileChannel position(long newPosition) throws IOException {
        if (newPosition < 0) {
            throw new IllegalArgumentException("negative position " + newPosition);
        }
        synchronized (disk) {
            check();
            position = newPosition;
            return this;
        }
    }

    @Override
    public long size() throws IOException {
        synchronized (disk) {
            check();
            return inode.length;
        }
    }

    @Override
    public FileChannel truncate(long size) throws IOException {
        if (size < 0) {
            throw new IllegalArgumentException("negative size " + size);
        }
        synchronized (disk) {
            checkWrite();
            if (size < inode.length) {
                inode.truncate(size);
                inode.unsynced.add(new SimulatedDisk.Op(size, null));
            }
            if (position > size) {
                position = size;
            }
            return this;
        }
    }

    @Override
    public void force(boolean metaData) throws IOException {
        synchronized (disk) {
            check();
        }
        disk.forceHook().accept(path);
        synchronized (disk) {
            check();
            inode.makeDurable();
        }
    }

    @Override
    public long transferTo(long pos, long count, WritableByteChannel target) throws IOException {
        ByteBuffer b = ByteBuffer.allocate((int) Math.min(count, 1 << 20));
        int n = read(b, pos);
        if (n <= 0) {
            return 0;
        }
        b.flip();
        int written = 0;
        while (b.hasRemaining()) {
            written += target.write(b);
        }
        return written;
    }

    @Override
    public long transferFrom(ReadableByteChannel src, long pos, long count) throws IOException {
        ByteBuffer b = ByteBuffer.allocate((int) Math.min(count, 1 << 20));
        while (b.hasRemaining() && src.read(b) > 0) {
            // fill what the source has now
        }
        b.flip();
        return b.hasRemaining() ? write(b, pos) : 0;
    }

    @Override
    public MappedByteBuffer map(MapMode mode, long pos, long size) {
        throw new UnsupportedOperationException("the simulated disk does not map files");
    }

    @Override
    public FileLock lock(long pos, long size, boolean shared) throws IOException {
        return tryLock(pos, size, shared);
    }

    @Override
    public FileLock tryLock(long pos, long size, boolean shared) throws IOException {
        synchronized (disk) {
            check();
        }
        return new FileLock(this, pos, size, shared) {
            private volatile boolean valid = true;

            @Override
            public boolean isValid() {
                return valid && channel().isOpen();
            }

            @Override
            public void release() {
                valid = false;
            }
        };
    }

    @Override
    protected void implCloseChannel() {
        // nothing to release; a channel killed by a power cut closes quietly (and deletes nothing)
        if (deleteOnClose) {
            disk.closed(path, inode, gen);
        }
    }

    @Override
    public String toString() {
        return "SimulatedChannel[" + path + "]";
    }
}
