package io.hayloft.store.volume;

import io.hayloft.serverkit.io.Disk;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/** Positional file I/O that loops until done, and directory fsync. Thread-safe (stateless). */
public final class FileIo {
    private FileIo() {
    }

    public static void readFully(FileChannel ch, ByteBuffer b, long pos) throws IOException {
        while (b.hasRemaining()) {
            int n = ch.read(b, pos);
            if (n < 0) {
                return;
            }
            pos += n;
        }
    }

    public static void readExactly(FileChannel ch, ByteBuffer b, long pos) throws IOException {
        readFully(ch, b, pos);
        if (b.hasRemaining()) {
            throw new EOFException("unexpected end of file at " + (pos + b.position()));
        }
    }

    public static void writeFully(FileChannel ch, ByteBuffer b, long pos) throws IOException {
        while (b.hasRemaining()) {
            pos += ch.write(b, pos);
        }
    }

    /** Forces a directory's entries (renames, creates, deletes) to disk. */
    public static void syncDirectory(Disk disk, Path dir) throws IOException {
        disk.syncDirectory(dir);
    }
}
