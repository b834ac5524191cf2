package io.hayloft.s3.auth;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Turns a request body as it arrives (in pieces of any size) into the object's bytes, checking what
 * its {@link PayloadMode} promises: the whole body's SHA-256 (SIGNED), each aws-chunked chunk's
 * signature and the trailer's (signed streaming modes), the decoded length against
 * {@code x-amz-decoded-content-length}, and the trailing headers (e.g. {@code x-amz-checksum-crc32})
 * of the trailer modes. Not thread-safe: one per request, fed serially.
 */
public interface PayloadDecoder {

    /**
     * Feeds the next piece of the body; the object's bytes found in it are handed to the sink given at
     * creation (a slice valid during that call only; the sink must copy what it keeps). The piece is
     * not released: the caller owns it. Throws S3Exception (IncompleteBody,
     * SignatureDoesNotMatch, InvalidRequest ...) on a malformed or badly signed body.
     */
    void feed(ByteBuf piece);

    /**
     * The body ended ({@code httpTrailers}: trailer fields of an HTTP-chunked transfer, usually empty;
     * aws-chunked trailers are inside the body). Returns the trailing headers of the payload, lower-case
     * names (empty when none), after checking the final chunk, the trailer signature and the length.
     */
    Map<String, String> finish(HttpHeaders httpTrailers);

    /** Bytes of the object handed to the sink so far. */
    long decodedBytes();

    /** A decoder for {@code verified}'s mode; {@code decodedLength} is x-amz-decoded-content-length, or -1. */
    static PayloadDecoder of(Verified verified, long decodedLength, Consumer<ByteBuf> sink) {
        return switch (verified.mode()) {
            case UNSIGNED -> new PlainDecoder(null, sink);
            case SIGNED -> new PlainDecoder(verified.payloadSha256(), sink);
            case STREAMING_SIGNED, STREAMING_UNSIGNED_TRAILER, STREAMING_SIGNED_TRAILER ->
                    new AwsChunkedDecoder(verified, decodedLength, sink);
        };
    }
}
