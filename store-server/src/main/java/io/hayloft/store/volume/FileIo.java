package io.hayloft.store.volume;

import io.hayloft.serverkit.io.Disk;
import java.io.IOException;
import java.nio.file.Path;

/**
 * Directory fsync for the volume files (positional reads and writes that loop until done are
 * {@link io.hayloft.format.io.PositionalIo}). Thread-safe (stateless).
 */
public final class FileIo {
    private FileIo() {
    }

    /** Forces a directory's entries (renames, creates, deletes) to disk. */
    public static void syncDirectory(Disk disk, Path dir) throws IOException {
        disk.syncDirectory(dir);
    }
}
