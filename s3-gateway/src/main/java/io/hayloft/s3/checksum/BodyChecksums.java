package io.hayloft.s3.checksum;

import io.hayloft.s3.S3Error;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaders;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.Locale;
import java.util.Map;

/**
 * The digests of an upload's body (PutObject, UploadPart), as S3 takes them: the MD5 (the ETag; checked
 * against {@code Content-MD5} when sent) and at most one checksum, promised in a header
 * ({@code x-amz-checksum-crc32: ...}) or in the body's trailer ({@code x-amz-trailer: x-amz-checksum-crc32}),
 * or none promised (then {@code defaultAlgorithm}, when given, is computed to be stored). Built from the
 * request's headers, which it checks at once (InvalidDigest, InvalidRequest); fed the decoded bytes;
 * {@link #finish} checks what was promised (BadDigest). Not thread-safe: one per request.
 */
public final class BodyChecksums {
    private final MessageDigest md5 = Checksums.md5();
    private final byte[] contentMd5;
    private final ChecksumAlgorithm algorithm;
    private final RunningChecksum checksum;
    private final byte[] expected;
    private final boolean trailer;
    private long bytes;

    private BodyChecksums(byte[] contentMd5, ChecksumAlgorithm algorithm, byte[] expected, boolean trailer) {
        this.contentMd5 = contentMd5;
        this.algorithm = algorithm;
        this.checksum = algorithm == null ? null : algorithm.start();
        this.expected = expected;
        this.trailer = trailer;
    }

    /**
     * What a request's headers promise. {@code defaultAlgorithm}: the checksum to compute when the
     * request names none (S3 uses CRC64NVME), or null for none.
     */
    public static BodyChecksums forRequest(HttpHeaders headers, ChecksumAlgorithm defaultAlgorithm) {
        String md5Header = headers.get("content-md5");
        byte[] contentMd5 = md5Header == null ? null : Checksums.contentMd5(md5Header);
        ChecksumAlgorithm fromHeader = null;
        byte[] expected = null;
        for (Map.Entry<String, String> e : headers) {
            ChecksumAlgorithm a = ChecksumAlgorithm.ofHeader(e.getKey());
            if (a != null) {
                if (fromHeader != null) {
                    throw S3Error.INVALID_REQUEST.exception(
                            "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.");
                }
                fromHeader = a;
                expected = Checksums.decode(a, e.getValue());
            }
        }
        ChecksumAlgorithm fromTrailer = null;
        String declared = headers.get("x-amz-trailer");
        if (declared != null && !declared.isBlank()) {
            for (String name : declared.split(",")) {
                ChecksumAlgorithm a = ChecksumAlgorithm.ofHeader(name.trim());
                if (a == null || fromTrailer != null) {
                    throw S3Error.INVALID_REQUEST.exception("The value specified in the x-amz-trailer header is not supported");
                }
                fromTrailer = a;
            }
        }
        if (fromHeader != null && fromTrailer != null) {
            throw S3Error.INVALID_REQUEST.exception(
                    "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.");
        }
        ChecksumAlgorithm promised = fromHeader != null ? fromHeader : fromTrailer;
        String sdk = headers.get("x-amz-sdk-checksum-algorithm");
        if (sdk != null) {
            ChecksumAlgorithm named = ChecksumAlgorithm.parse(sdk);
            if (named == null || (promised != null && named != promised)) {
                throw S3Error.INVALID_REQUEST.exception("Value for x-amz-sdk-checksum-algorithm header is invalid.");
            }
            if (promised == null) {
                throw S3Error.INVALID_REQUEST.exception("x-amz-sdk-checksum-algorithm specified, but no corresponding "
                        + "x-amz-checksum-* or x-amz-trailer headers were found.");
            }
        }
        ChecksumAlgorithm algorithm = promised != null ? promised : defaultAlgorithm;
        return new BodyChecksums(contentMd5, algorithm, expected, fromTrailer != null);
    }

    /** The checksum computed (promised, or the default), or null. */
    public ChecksumAlgorithm algorithm() {
        return algorithm;
    }

    /** Whether the checksum's value comes in the body's trailer. */
    public boolean trailer() {
        return trailer;
    }

    /** Counts a piece of the decoded body (the buffer's readable bytes; its indexes are not moved). */
    public void update(ByteBuf b) {
        int n = b.readableBytes();
        if (n == 0) {
            return;
        }
        for (ByteBuffer nio : b.nioBuffers(b.readerIndex(), n)) {
            update(nio);
        }
    }

    /** Counts a piece of the decoded body (consumes the buffer's remaining bytes). */
    public void update(ByteBuffer b) {
        bytes += b.remaining();
        if (checksum != null) {
            checksum.update(b.duplicate());
        }
        md5.update(b);
    }

    public void update(byte[] b, int off, int len) {
        update(ByteBuffer.wrap(b, off, len));
    }

    /** Bytes counted. */
    public long bytes() {
        return bytes;
    }

    /**
     * The body ended: checks Content-MD5 and the promised checksum (its value from the header, or from
     * {@code trailers}, lower-case names as {@code PayloadDecoder.finish} returns them). Throws S3Exception
     * BadDigest on a mismatch, InvalidRequest when the promised trailer is missing.
     */
    public Result finish(Map<String, String> trailers) {
        byte[] md5Digest = md5.digest();
        if (contentMd5 != null && !MessageDigest.isEqual(contentMd5, md5Digest)) {
            throw S3Error.BAD_DIGEST.exception("The Content-MD5 you specified did not match what we received.");
        }
        byte[] digest = checksum == null ? null : checksum.digest();
        byte[] want = expected;
        if (trailer) {
            String value = trailers == null ? null : trailers.get(algorithm.header());
            if (value == null) {
                throw S3Error.INVALID_REQUEST.exception("The body's trailer does not carry the " + algorithm.header()
                        + " the x-amz-trailer header announced.");
            }
            want = Checksums.decode(algorithm, value);
        }
        if (want != null && !MessageDigest.isEqual(want, digest)) {
            throw S3Error.BAD_DIGEST.exception("The " + algorithm.name() + " you specified did not match the calculated checksum.");
        }
        return new Result(md5Digest, algorithm, digest, want != null, bytes);
    }

    /**
     * The digests of a body that checked out.
     *
     * @param md5            its MD5 (the ETag of a single-part object, and of a part)
     * @param algorithm      the checksum computed, or null
     * @param checksum       its digest (big-endian for CRCs), or null
     * @param clientProvided whether the client sent that checksum (so it was verified) rather than the default
     * @param bytes          the body's length
     */
    public record Result(byte[] md5, ChecksumAlgorithm algorithm, byte[] checksum, boolean clientProvided, long bytes) {
        /** The ETag's hex (no quotes). */
        public String etag() {
            return Checksums.etag(md5);
        }

        /** The checksum as its header carries it (base64), or null. */
        public String checksumBase64() {
            return checksum == null ? null : Checksums.base64(checksum);
        }

        @Override
        public String toString() {
            return "Result[" + etag() + ", " + (algorithm == null ? "-" : algorithm.name().toLowerCase(Locale.ROOT) + " "
                    + checksumBase64()) + ", " + bytes + " bytes]";
        }
    }
}
