package io.hayloft.client;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One photo to put: one key with one or more alternate keys (Haystack's alternates, e.g. the sizes
 * of one picture), each with its data given as bytes or as a file that is streamed from disk.
 * Built with {@link #of(byte[])} and {@link #alt(int, byte[])}.
 *
 * <p>Not thread-safe while being built; do not change the arrays until the put completed. A put
 * writes the alternates the photo had when it was called.
 */
public final class Upload {
    /** One alternate of the photo: bytes or a file. */
    record Part(int alt, byte[] data, Path file, long size) {
    }

    private final List<Part> parts = new ArrayList<>(1);

    private Upload() {
    }

    /** A photo whose alternate key 0 holds {@code data}. */
    public static Upload of(byte[] data) {
        return new Upload().alt(0, data);
    }

    /** A photo whose alternate key 0 is the content of {@code file}, streamed from disk. */
    public static Upload of(Path file) {
        return new Upload().alt(0, file);
    }

    /** An empty photo; add alternates with {@link #alt}. */
    public static Upload empty() {
        return new Upload();
    }

    /** Adds alternate key {@code alt} with {@code data}. */
    public Upload alt(int alt, byte[] data) {
        Objects.requireNonNull(data, "data");
        checkAlt(alt);
        parts.add(new Part(alt, data, null, data.length));
        return this;
    }

    /** Adds alternate key {@code alt} with the content of {@code file}. */
    public Upload alt(int alt, Path file) {
        Objects.requireNonNull(file, "file");
        checkAlt(alt);
        long size;
        try {
            size = Files.size(file);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read file " + file + ": " + e.getMessage(), e);
        }
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("not a regular file: " + file);
        }
        parts.add(new Part(alt, null, file, size));
        return this;
    }

    private void checkAlt(int alt) {
        for (Part p : parts) {
            if (p.alt() == alt) {
                throw new IllegalArgumentException("alternate key " + Integer.toUnsignedString(alt) + " given twice");
            }
        }
    }

    List<Part> parts() {
        return parts;
    }

    /** This photo's alternates as they are now: what a put writes even if the caller adds more later. */
    Upload snapshot() {
        Upload u = new Upload();
        u.parts.addAll(parts);
        return u;
    }

    long bytes() {
        long n = 0;
        for (Part p : parts) {
            n += p.size();
        }
        return n;
    }
}
