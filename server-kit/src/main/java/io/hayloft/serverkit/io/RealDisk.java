package io.hayloft.serverkit.io;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** {@link Disk#REAL}: the operating system's file system. Thread-safe (stateless). */
final class RealDisk implements Disk {

    @Override
    public FileChannel open(Path file, StandardOpenOption... options) throws IOException {
        return FileChannel.open(file, options);
    }

    /** O_DIRECT with the file system's block size (at least 4 KiB) as the alignment; null where it is refused. */
    @Override
    public Direct openDirect(Path file) throws IOException {
        int alignment;
        try {
            long block = Files.getFileStore(file.toAbsolutePath().getParent()).getBlockSize();
            if (block <= 0 || block > 1 << 20 || Long.bitCount(block) != 1) {
                return null;
            }
            alignment = (int) Math.max(4096, block);
        } catch (UnsupportedOperationException e) {
            return null;
        }
        try {
            return new Direct(FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.WRITE, ExtendedOpenOption.DIRECT), alignment);
        } catch (UnsupportedOperationException | IOException e) {
            return null; // tmpfs and some others: EINVAL. The caller opens it without O_DIRECT
        }
    }

    @Override
    public void move(Path from, Path to) throws IOException {
        Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    @Override
    public boolean deleteIfExists(Path file) throws IOException {
        return Files.deleteIfExists(file);
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        }
    }

    @Override
    public void createDirectories(Path dir) throws IOException {
        Path abs = dir.toAbsolutePath();
        List<Path> made = new ArrayList<>();
        for (Path p = abs; p != null && !Files.isDirectory(p); p = p.getParent()) {
            made.add(p);
        }
        Files.createDirectories(abs);
        for (Path p : made) {
            if (p.getParent() != null) {
                syncDirectory(p.getParent());
            }
        }
    }

    @Override
    public boolean exists(Path file) {
        return Files.exists(file);
    }

    @Override
    public long size(Path file) throws IOException {
        return Files.size(file);
    }

    @Override
    public List<String> list(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                if (Files.isRegularFile(p)) {
                    out.add(p.getFileName().toString());
                }
            }
        }
        Collections.sort(out);
        return out;
    }
}
