package io.hayloft.s3.checksum;

/** A checksum being computed over bytes as they pass. Not thread-safe. */
public interface RunningChecksum {
    void update(byte[] b, int off, int len);

    void update(java.nio.ByteBuffer b);

    /** The digest's raw bytes (big-endian for the CRCs, as S3 encodes them); ends the computation. */
    byte[] digest();
}
