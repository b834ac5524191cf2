package io.hayloft.s3.auth;

import io.hayloft.s3.S3Error;
import io.hayloft.s3.S3Exception;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.HttpHeaders;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Consumer;
import javax.crypto.Mac;

/**
 * Decodes an aws-chunked body as it arrives, in pieces split anywhere:
 * <pre>
 * chunk       = hex-size [";chunk-signature=" sig] CRLF data CRLF     (size &gt; 0)
 * last-chunk  = "0" [";chunk-signature=" sig] CRLF
 * trailer     = *(name ":" value CRLF) ["x-amz-trailer-signature:" sig CRLF]   (trailer modes only)
 * body        = *chunk last-chunk trailer CRLF
 * </pre>
 * Signed modes check each chunk's signature ("AWS4-HMAC-SHA256-PAYLOAD", chained from the request's
 * seed signature) once its data has passed; the signed-trailer mode checks the trailer's
 * ("AWS4-HMAC-SHA256-TRAILER" over the canonical trailing headers: lower-case names, sorted,
 * {@code name:value\n}). The decoded total is checked against {@code x-amz-decoded-content-length}.
 * Data is streamed to the sink (before its chunk's signature is checked: nothing may be committed
 * before {@link #finish}); only one header line or the trailer block (at most {@value #MAX_LINE}
 * bytes) is ever buffered. Every framing error is an S3Exception (IncompleteBody, InvalidRequest,
 * SignatureDoesNotMatch); after one, the decoder refuses further input. An exception of the sink passes
 * through unchanged. Not thread-safe.
 */
final class AwsChunkedDecoder implements PayloadDecoder {
    /** Longest chunk header line, and longest trailer block. */
    static final int MAX_LINE = 4096;
    private static final String TRAILER_SIGNATURE = "x-amz-trailer-signature";
    private static final String CHUNK_SIGNATURE = "chunk-signature=";

    private enum State { SIZE_LINE, DATA, DATA_CR, DATA_LF, TRAILER, DONE, FAILED }

    private final PayloadMode mode;
    private final boolean signedChunks;
    private final boolean trailers;
    private final long decodedLength;
    private final Consumer<ByteBuf> sink;
    private final String amzDate;
    private final String scope;
    private final Mac mac;
    private final MessageDigest chunkSha;

    private State state = State.SIZE_LINE;
    private final byte[] line = new byte[MAX_LINE];
    private int lineLength;
    private int trailerBytes;
    private long remaining;
    private String chunkSignature;
    private String previousSignature;
    private long decoded;
    private final Map<String, String> trailing = new TreeMap<>();
    private String trailerSignature;
    private boolean inSink;

    AwsChunkedDecoder(Verified verified, long decodedLength, Consumer<ByteBuf> sink) {
        this.mode = verified.mode();
        this.signedChunks = mode == PayloadMode.STREAMING_SIGNED || mode == PayloadMode.STREAMING_SIGNED_TRAILER;
        this.trailers = mode == PayloadMode.STREAMING_UNSIGNED_TRAILER || mode == PayloadMode.STREAMING_SIGNED_TRAILER;
        this.decodedLength = decodedLength;
        this.sink = sink;
        this.amzDate = verified.amzDate();
        this.scope = verified.scope();
        this.mac = signedChunks ? SigV4.mac(verified.signingKey()) : null;
        this.previousSignature = verified.seedSignature();
        this.chunkSha = signedChunks ? SigV4.sha256() : null;
        if (!mode.chunked()) {
            throw new IllegalArgumentException(mode + " is not aws-chunked");
        }
    }

    @Override
    public void feed(ByteBuf piece) {
        if (state == State.FAILED) {
            throw S3Error.INVALID_REQUEST.exception("The request body was already refused");
        }
        try {
            int i = piece.readerIndex();
            int end = piece.writerIndex();
            while (i < end) {
                switch (state) {
                    case SIZE_LINE, TRAILER -> {
                        int nl = piece.indexOf(i, end, (byte) '\n');
                        int upTo = nl < 0 ? end : nl;
                        append(piece, i, upTo - i);
                        i = upTo;
                        if (nl >= 0) {
                            i++;
                            String l = takeLine();
                            if (state == State.SIZE_LINE) {
                                sizeLine(l);
                            } else {
                                trailerLine(l);
                            }
                        }
                    }
                    case DATA -> {
                        int n = (int) Math.min(remaining, end - i);
                        if (chunkSha != null) {
                            for (ByteBuffer b : piece.nioBuffers(i, n)) {
                                chunkSha.update(b);
                            }
                        }
                        decoded += n;
                        remaining -= n;
                        inSink = true;
                        sink.accept(piece.slice(i, n));
                        inSink = false;
                        i += n;
                        if (remaining == 0) {
                            if (signedChunks) {
                                checkChunk(SigV4.hex(chunkSha.digest()));
                            }
                            state = State.DATA_CR;
                        }
                    }
                    case DATA_CR -> {
                        expect(piece.getByte(i++), '\r');
                        state = State.DATA_LF;
                    }
                    case DATA_LF -> {
                        expect(piece.getByte(i++), '\n');
                        state = State.SIZE_LINE;
                    }
                    case DONE -> throw S3Error.INVALID_REQUEST.exception("Bytes after the end of the aws-chunked body");
                    default -> throw new IllegalStateException(state.name());
                }
            }
        } catch (S3Exception e) {
            state = State.FAILED;
            throw e;
        } catch (RuntimeException e) {
            state = State.FAILED;
            if (inSink) {
                throw e; // the sink's own failure (e.g. the cluster's), not the body's
            }
            throw S3Error.INVALID_REQUEST.exception("Malformed aws-chunked body");
        }
    }

    private void append(ByteBuf piece, int from, int n) {
        int cap = state == State.TRAILER ? MAX_LINE - trailerBytes : MAX_LINE;
        if (lineLength + n > Math.min(cap, MAX_LINE)) {
            throw S3Error.INVALID_REQUEST.exception(state == State.TRAILER ? "The aws-chunked trailer is too long"
                    : "An aws-chunked chunk header is too long");
        }
        piece.getBytes(from, line, lineLength, n);
        lineLength += n;
    }

    /** The buffered line without its CR (which must be there). */
    private String takeLine() {
        if (lineLength == 0 || line[lineLength - 1] != '\r') {
            throw S3Error.INCOMPLETE_BODY.exception("An aws-chunked line does not end with CRLF");
        }
        String l = new String(line, 0, lineLength - 1, StandardCharsets.ISO_8859_1);
        if (state == State.TRAILER) {
            trailerBytes += lineLength + 1;
        }
        lineLength = 0;
        return l;
    }

    private static void expect(byte got, char want) {
        if (got != want) {
            throw S3Error.INCOMPLETE_BODY.exception("An aws-chunked chunk's data is not followed by CRLF");
        }
    }

    private void sizeLine(String l) {
        int semi = l.indexOf(';');
        String hex = semi < 0 ? l : l.substring(0, semi);
        if (hex.isEmpty() || hex.length() > 15) {
            throw S3Error.INVALID_REQUEST.exception("Malformed aws-chunked chunk size");
        }
        long size = 0;
        for (int k = 0; k < hex.length(); k++) {
            int d = Character.digit(hex.charAt(k), 16);
            if (d < 0) {
                throw S3Error.INVALID_REQUEST.exception("Malformed aws-chunked chunk size");
            }
            size = size << 4 | d;
        }
        chunkSignature = null;
        if (semi >= 0) {
            String ext = l.substring(semi + 1);
            if (ext.startsWith(CHUNK_SIGNATURE)) {
                chunkSignature = ext.substring(CHUNK_SIGNATURE.length());
            } else if (signedChunks) {
                throw S3Error.INVALID_REQUEST.exception("Malformed aws-chunked chunk extension");
            }
        }
        if (signedChunks && (chunkSignature == null || chunkSignature.length() != 64)) {
            throw S3Error.INVALID_REQUEST.exception("An aws-chunked chunk has no chunk-signature");
        }
        if (decodedLength >= 0 && decoded + size > decodedLength) {
            throw S3Error.INCOMPLETE_BODY.exception("The aws-chunked body holds more than x-amz-decoded-content-length "
                    + decodedLength + " bytes");
        }
        if (size == 0) {
            checkChunk(SigV4.EMPTY_SHA256);
            state = State.TRAILER;
        } else {
            remaining = size;
            state = State.DATA;
        }
    }

    private void checkChunk(String dataSha256) {
        if (!signedChunks) {
            return;
        }
        String stringToSign = "AWS4-HMAC-SHA256-PAYLOAD\n" + amzDate + "\n" + scope + "\n" + previousSignature + "\n"
                + SigV4.EMPTY_SHA256 + "\n" + dataSha256;
        String expected = SigV4.hex(mac.doFinal(stringToSign.getBytes(StandardCharsets.UTF_8)));
        if (!SigV4.sameSignature(expected, chunkSignature)) {
            throw S3Error.SIGNATURE_DOES_NOT_MATCH.exception("The chunk signature we calculated does not match the one you provided.");
        }
        previousSignature = expected;
    }

    private void trailerLine(String l) {
        if (l.isEmpty()) {
            endTrailer();
            return;
        }
        if (!trailers) {
            throw S3Error.INVALID_REQUEST.exception("Trailing headers in an aws-chunked body whose mode has none");
        }
        if (trailerSignature != null) {
            throw S3Error.INVALID_REQUEST.exception("Trailing headers after x-amz-trailer-signature");
        }
        int colon = l.indexOf(':');
        if (colon <= 0) {
            throw S3Error.INVALID_REQUEST.exception("Malformed aws-chunked trailing header");
        }
        String name = l.substring(0, colon).trim().toLowerCase(Locale.ROOT);
        String value = l.substring(colon + 1);
        if (name.equals(TRAILER_SIGNATURE)) {
            trailerSignature = value.trim();
            return;
        }
        StringBuilder v = new StringBuilder();
        SigV4.appendCanonicalValue(v, value);
        trailing.merge(name, v.toString(), (a, b) -> a + "," + b);
    }

    private void endTrailer() {
        if (mode == PayloadMode.STREAMING_SIGNED_TRAILER) {
            if (trailerSignature == null) {
                throw S3Error.INVALID_REQUEST.exception("The aws-chunked trailer has no x-amz-trailer-signature");
            }
            StringBuilder canonical = new StringBuilder();
            trailing.forEach((n, v) -> canonical.append(n).append(':').append(v).append('\n'));
            String stringToSign = "AWS4-HMAC-SHA256-TRAILER\n" + amzDate + "\n" + scope + "\n" + previousSignature + "\n"
                    + SigV4.sha256Hex(canonical.toString());
            String expected = SigV4.hex(mac.doFinal(stringToSign.getBytes(StandardCharsets.UTF_8)));
            if (!SigV4.sameSignature(expected, trailerSignature)) {
                throw S3Error.SIGNATURE_DOES_NOT_MATCH.exception("The trailer signature we calculated does not match the one you provided.");
            }
        } else if (trailerSignature != null) {
            throw S3Error.INVALID_REQUEST.exception("x-amz-trailer-signature in an unsigned trailer");
        }
        state = State.DONE;
    }

    @Override
    public Map<String, String> finish(HttpHeaders httpTrailers) {
        try {
            if (state == State.FAILED) {
                throw S3Error.INVALID_REQUEST.exception("The request body was already refused");
            }
            if (state == State.TRAILER && lineLength == 0) {
                // tolerate a body that stops right after the last trailing line, without the final CRLF
                endTrailer();
            }
            if (state != State.DONE) {
                throw S3Error.INCOMPLETE_BODY.exception("The aws-chunked body ended before its final chunk");
            }
            if (decodedLength >= 0 && decoded != decodedLength) {
                throw S3Error.INCOMPLETE_BODY.exception("The aws-chunked body holds " + decoded
                        + " bytes, not x-amz-decoded-content-length " + decodedLength);
            }
            return Collections.unmodifiableMap(trailing);
        } catch (S3Exception e) {
            state = State.FAILED;
            throw e;
        }
    }

    @Override
    public long decodedBytes() {
        return decoded;
    }
}
