package io.hayloft.serverkit.io;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Objects;

/**
 * A {@link Disk} that passes every call to another; a subclass overrides what it changes (a test's
 * gate before some writes, a benchmark switching {@link #openDirect} off). Thread-safe if the
 * other disk and the overrides are.
 */
public class ForwardingDisk implements Disk {
    private final Disk to;

    public ForwardingDisk(Disk to) {
        this.to = Objects.requireNonNull(to, "to");
    }

    @Override
    public FileChannel open(Path file, StandardOpenOption... options) throws IOException {
        return to.open(file, options);
    }

    @Override
    public Direct openDirect(Path file) throws IOException {
        return to.openDirect(file);
    }

    @Override
    public void move(Path from, Path target) throws IOException {
        to.move(from, target);
    }

    @Override
    public boolean deleteIfExists(Path file) throws IOException {
        return to.deleteIfExists(file);
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
        to.syncDirectory(dir);
    }

    @Override
    public void createDirectories(Path dir) throws IOException {
        to.createDirectories(dir);
    }

    @Override
    public boolean exists(Path file) {
        return to.exists(file);
    }

    @Override
    public long size(Path file) throws IOException {
        return to.size(file);
    }

    @Override
    public List<String> list(Path dir) throws IOException {
        return to.list(dir);
    }

    @Override
    public long usableSpace(Path dir) throws IOException {
        return to.usableSpace(dir);
    }

    @Override
    public long totalSpace(Path dir) throws IOException {
        return to.totalSpace(dir);
    }
}
