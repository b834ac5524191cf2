package io.hayloft.s3.checksum;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Locale;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;
import java.util.zip.Checksum;

/**
 * The checksums S3 takes ({@code x-amz-checksum-<name>} headers and trailers,
 * {@code x-amz-checksum-algorithm}) and how they combine over multipart uploads. Thread-safe (each
 * {@link #start()} is a new, unshared computation).
 */
public enum ChecksumAlgorithm {
    CRC32(4), CRC32C(4), CRC64NVME(8), SHA1(20), SHA256(32);

    private final int digestBytes;

    ChecksumAlgorithm(int digestBytes) {
        this.digestBytes = digestBytes;
    }

    /** The header that carries it: {@code x-amz-checksum-crc32} ... */
    public String header() {
        return "x-amz-checksum-" + name().toLowerCase(Locale.ROOT);
    }

    /** Bytes of a digest: 4, 4, 8, 20, 32. */
    public int digestBytes() {
        return digestBytes;
    }

    /** The algorithm named as S3 names it (any case: "crc32c", "CRC64NVME", ...), or null when none is. */
    public static ChecksumAlgorithm parse(String name) {
        if (name == null) {
            return null;
        }
        for (ChecksumAlgorithm a : values()) {
            if (a.name().equalsIgnoreCase(name.trim())) {
                return a;
            }
        }
        return null;
    }

    /** The algorithm whose header ({@code x-amz-checksum-crc32} ..., any case) this is, or null. */
    public static ChecksumAlgorithm ofHeader(String headerName) {
        String h = headerName.toLowerCase(Locale.ROOT);
        return h.startsWith("x-amz-checksum-") ? parse(h.substring("x-amz-checksum-".length())) : null;
    }

    /** A running checksum of this algorithm. */
    public RunningChecksum start() {
        return switch (this) {
            case CRC32 -> new Crc(new CRC32(), 4);
            case CRC32C -> new Crc(new CRC32C(), 4);
            case CRC64NVME -> new Crc(new Crc64Nvme(), 8);
            case SHA1 -> new Digest(digest("SHA-1"));
            case SHA256 -> new Digest(digest("SHA-256"));
        };
    }

    /** The CRCs (full-object checksums of multipart uploads are made by combining the parts'). */
    public boolean crc() {
        return this == CRC32 || this == CRC32C || this == CRC64NVME;
    }

    static MessageDigest digest(String name) {
        try {
            return MessageDigest.getInstance(name);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(name + " is missing from the JDK", e);
        }
    }

    private static final class Crc implements RunningChecksum {
        private final Checksum crc;
        private final int bytes;

        Crc(Checksum crc, int bytes) {
            this.crc = crc;
            this.bytes = bytes;
        }

        @Override
        public void update(byte[] b, int off, int len) {
            crc.update(b, off, len);
        }

        @Override
        public void update(ByteBuffer b) {
            crc.update(b);
        }

        @Override
        public byte[] digest() {
            return Checksums.crcBytes(crc.getValue(), bytes);
        }
    }

    private static final class Digest implements RunningChecksum {
        private final MessageDigest md;

        Digest(MessageDigest md) {
            this.md = md;
        }

        @Override
        public void update(byte[] b, int off, int len) {
            md.update(b, off, len);
        }

        @Override
        public void update(ByteBuffer b) {
            md.update(b);
        }

        @Override
        public byte[] digest() {
            return md.digest();
        }
    }
}
