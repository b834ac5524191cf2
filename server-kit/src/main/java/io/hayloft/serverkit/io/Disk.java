package io.hayloft.serverkit.io;

import io.hayloft.format.io.PositionalIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;

/**
 * The one narrow seam every durable file write of a server goes through: the store's volumes,
 * {@code .idx} checkpoints, compaction commit files, block files and id file, and the raid-node's
 * spool. {@link #REAL} is the operating system's file system; tests and the life-cycle checker
 * use a simulated disk that forgets, at a simulated power cut, every byte and every directory
 * entry that no completed fsync covered.
 *
 * <p>The durability contract callers must follow (and that the simulated disk enforces):
 * <ul>
 *   <li>bytes written to a file are durable only after {@link FileChannel#force} on that file
 *       returned;</li>
 *   <li>a created, renamed or deleted name is durable only after {@link #syncDirectory} of its
 *       parent directory returned (for a rename, of both parents);</li>
 *   <li>a write in flight at a power cut may be torn: any prefix of it may survive.</li>
 * </ul>
 * Reads, sizes and listings see the current (not only the durable) state.
 *
 * <p>Implementations are thread-safe.
 */
public interface Disk {

    /** The operating system's file system. */
    Disk REAL = new RealDisk();

    /** Opens (or with {@link StandardOpenOption#CREATE} creates) a file. */
    FileChannel open(Path file, StandardOpenOption... options) throws IOException;

    /**
     * A file open for writes that bypass the page cache ({@code O_DIRECT}): every write's file
     * position, length and buffer address must be a multiple of {@code alignment} (a power of two).
     * Durability is as for {@link #open}: bytes are durable only after {@link FileChannel#force}.
     */
    record Direct(FileChannel channel, int alignment) {
    }

    /**
     * Creates (or truncates) {@code file} for writing around the page cache, for large write-once
     * files written front to back (erasure-coded blocks): no copy into the page cache, no writeback
     * behind the writer, and cold bytes do not evict hot ones. Null when this disk or the file system
     * cannot (tmpfs, a simulated disk): the caller then writes through {@link #open} as usual.
     */
    default Direct openDirect(Path file) throws IOException {
        return null;
    }

    /** Renames atomically, replacing {@code to} if it exists. */
    void move(Path from, Path to) throws IOException;

    /** Deletes a file; false if there was none. */
    boolean deleteIfExists(Path file) throws IOException;

    /** Makes the creates, renames and deletes of entries in {@code dir} durable. */
    void syncDirectory(Path dir) throws IOException;

    /** Creates a directory and its missing parents (made durable: a new directory is synced into its parent). */
    void createDirectories(Path dir) throws IOException;

    boolean exists(Path file);

    /** A file's current size in bytes. */
    long size(Path file) throws IOException;

    /** The names (not paths) of the regular files directly in {@code dir}, sorted; empty when it does not exist. */
    List<String> list(Path dir) throws IOException;

    /**
     * The handle one process (one server instance) uses. On the real disk, this disk. On a
     * simulated disk, a view that dies at the next power cut like the channels it opened, so a
     * process "killed" by the cut cannot change what the restarted machine sees.
     */
    default Disk session() {
        return this;
    }

    /** Reads a whole file (small files only: markers, ids). */
    default byte[] readAllBytes(Path file) throws IOException {
        try (FileChannel ch = open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size > Integer.MAX_VALUE - 16) {
                throw new IOException(file + " is too large to read whole (" + size + " bytes)");
            }
            ByteBuffer b = ByteBuffer.allocate((int) size);
            PositionalIo.readUpTo(ch, b, 0);
            return Arrays.copyOf(b.array(), b.position());
        }
    }

    /** Bytes usable in the file system holding {@code dir} (a simulated disk: Long.MAX_VALUE). */
    default long usableSpace(Path dir) throws IOException {
        return Files.getFileStore(dir).getUsableSpace();
    }

    /** Total bytes of the file system holding {@code dir} (a simulated disk: Long.MAX_VALUE). */
    default long totalSpace(Path dir) throws IOException {
        return Files.getFileStore(dir).getTotalSpace();
    }
}
