package io.hayloft.s3.auth;

/** How a request's body is signed: the value of {@code x-amz-content-sha256}. */
public enum PayloadMode {
    /** A hex SHA-256 of the whole body; checked when the body ends. */
    SIGNED,
    /** {@code UNSIGNED-PAYLOAD} (and every presigned URL): the body is not part of the signature. */
    UNSIGNED,
    /** {@code STREAMING-AWS4-HMAC-SHA256-PAYLOAD}: aws-chunked, each chunk signed. */
    STREAMING_SIGNED,
    /** {@code STREAMING-UNSIGNED-PAYLOAD-TRAILER}: aws-chunked, unsigned chunks, trailing headers (a checksum). */
    STREAMING_UNSIGNED_TRAILER,
    /** {@code STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER}: aws-chunked, signed chunks and a signed trailer. */
    STREAMING_SIGNED_TRAILER;

    /** Whether the body is aws-chunked (needs a {@link PayloadDecoder}). */
    public boolean chunked() {
        return this != SIGNED && this != UNSIGNED;
    }
}
