package io.hayloft.s3.checksum;

/**
 * The checksums S3 takes ({@code x-amz-checksum-<name>} headers and trailers,
 * {@code x-amz-checksum-algorithm}) and how they combine over multipart uploads.
 */
public enum ChecksumAlgorithm {
    CRC32, CRC32C, CRC64NVME, SHA1, SHA256;

    /** The header that carries it: {@code x-amz-checksum-crc32} ... */
    public String header() {
        return "x-amz-checksum-" + name().toLowerCase(java.util.Locale.ROOT);
    }

    /** A running checksum of this algorithm. */
    public RunningChecksum start() {
        throw new UnsupportedOperationException("todo: helper");
    }

    /** The CRCs (full-object checksums of multipart uploads are made by combining the parts'). */
    public boolean crc() {
        return this == CRC32 || this == CRC32C || this == CRC64NVME;
    }
}
