package io.hayloft.raid;

import io.hayloft.serverkit.io.Disk;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The {@link Disk} the raid-node's scratch files go through: the encode and repair spools and the
 * reclaim images. They are never fsynced (a restarted raid-node starts the job over and deletes
 * stale images), but they go through the seam like every other file write, so a test can run the
 * raid-node on a simulated disk. {@link Disk#REAL} unless a test sets another; a static, not a
 * field, because {@link StripeEncodeTask} is serialized to Spark executors.
 *
 * <p>Thread-safe.
 */
public final class SpoolDisk {
    private static volatile Disk disk = Disk.REAL;

    private SpoolDisk() {
    }

    public static Disk get() {
        return disk;
    }

    /** Sets the disk of every scratch file opened after it (tests); returns the previous one. */
    public static Disk set(Disk d) {
        Disk old = disk;
        disk = Objects.requireNonNull(d, "disk");
        return old;
    }

    /** Creates a new directory {@code <parent>/<prefix><random>} on the spool disk. */
    static Path tempDirectory(Path parent, String prefix) throws IOException {
        Disk d = disk;
        while (true) {
            Path dir = parent.resolve(prefix + Long.toUnsignedString(ThreadLocalRandom.current().nextLong()));
            if (!d.exists(dir)) {
                d.createDirectories(dir);
                return dir;
            }
        }
    }

    /** Creates a new empty file {@code <parent>/<prefix><random><suffix>} on the spool disk. */
    static Path tempFile(Path parent, String prefix, String suffix) throws IOException {
        Disk d = disk;
        while (true) {
            Path f = parent.resolve(prefix + Long.toUnsignedString(ThreadLocalRandom.current().nextLong()) + suffix);
            try (FileChannel ch = d.open(f, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                return f;
            } catch (FileAlreadyExistsException e) {
                // another name
            }
        }
    }
}
