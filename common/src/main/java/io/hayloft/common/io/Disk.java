package io.hayloft.common.io;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
}
