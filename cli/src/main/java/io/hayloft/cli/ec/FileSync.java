package io.hayloft.cli.ec;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Locale;

/** Durable file operations: fsync of files and directories, atomic replace. Stateless and thread-safe. */
public final class FileSync {

    private FileSync() {
    }

    /**
     * Replaces {@code target} with {@code content} atomically and durably: writes a temp file next to it,
     * fsyncs it, renames it over {@code target}, then fsyncs the directory. A crash leaves either the
     * old file or the new one, never a mix.
     */
    public static void writeAtomically(Path target, byte[] content) throws IOException {
        Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer buf = ByteBuffer.wrap(content);
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            ch.force(true);
        }
        commit(tmp, target);
    }

    /** Renames a written and fsynced {@code tmp} over {@code target} and fsyncs the directory. */
    public static void commit(Path tmp, Path target) throws IOException {
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        syncDirectory(target.toAbsolutePath().getParent());
    }

    /** Fsyncs a directory so that the creation, rename or removal of its entries is durable. */
    public static void syncDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException e) {
            // Some platforms (Windows) cannot open a directory; Linux, the target, can.
            if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("win")) {
                throw e;
            }
        }
    }

    /** Deletes a file if it exists, ignoring failure: used to clean up after an error. */
    public static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException ignored) {
            // best effort: the caller is already reporting a failure
        }
    }
}
