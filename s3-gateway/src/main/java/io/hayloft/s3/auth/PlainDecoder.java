package io.hayloft.s3.auth;

import io.hayloft.s3.S3Error;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaders;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The decoder of a body that is not aws-chunked: passes every byte on, and (mode SIGNED) checks the
 * body's SHA-256 against {@code x-amz-content-sha256} when it ends (XAmzContentSHA256Mismatch). The
 * sink sees the bytes before the hash is checked: the caller must not commit before {@link #finish}.
 * Not thread-safe.
 */
final class PlainDecoder implements PayloadDecoder {
    private final String expectedSha256;
    private final MessageDigest sha;
    private final Consumer<ByteBuf> sink;
    private long decoded;

    /** {@code expectedSha256}: lower-case hex the body must hash to, or null (unsigned). */
    PlainDecoder(String expectedSha256, Consumer<ByteBuf> sink) {
        this.expectedSha256 = expectedSha256;
        this.sha = expectedSha256 == null ? null : SigV4.sha256();
        this.sink = sink;
    }

    @Override
    public void feed(ByteBuf piece) {
        int n = piece.readableBytes();
        if (n == 0) {
            return;
        }
        if (sha != null) {
            for (ByteBuffer b : piece.nioBuffers(piece.readerIndex(), n)) {
                sha.update(b);
            }
        }
        decoded += n;
        sink.accept(piece.slice(piece.readerIndex(), n));
    }

    @Override
    public Map<String, String> finish(HttpHeaders httpTrailers) {
        if (sha != null && !SigV4.sameSignature(expectedSha256, SigV4.hex(sha.digest()))) {
            throw S3Error.X_AMZ_CONTENT_SHA256_MISMATCH.exception(
                    "The provided 'x-amz-content-sha256' header does not match what was computed.");
        }
        Map<String, String> out = new LinkedHashMap<>();
        if (httpTrailers != null) {
            for (Map.Entry<String, String> e : httpTrailers) {
                out.put(e.getKey().toLowerCase(Locale.ROOT), e.getValue().trim());
            }
        }
        return out;
    }

    @Override
    public long decodedBytes() {
        return decoded;
    }
}
