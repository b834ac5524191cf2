package io.hayloft.s3;

import io.hayloft.format.s3.Chunk;
import io.hayloft.s3.Answers.Call;
import io.hayloft.s3.auth.PayloadDecoder;
import io.hayloft.s3.data.ChunkStore;
import io.hayloft.serverkit.http.StreamedRequestHandler;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.List;
import java.util.Map;

/**
 * The streamed body of a PutObject or an UploadPart: each piece goes through the
 * {@link PayloadDecoder} (aws-chunked framing, chunk signatures, trailers), the decoded bytes
 * through the {@link Digests} (MD5, checksums) into a {@link ChunkStore.Writer}; at the end the
 * digests are checked (BadDigest: nothing is committed) and the {@link Commit} records the body in
 * the namespace. Whatever fails, or a client that goes away, aborts the writer (its needles are
 * freed). Not thread-safe: the server calls it serially.
 */
final class UploadBody implements StreamedRequestHandler.RequestBody {
    /** Records a body whose digests checked out; answers the request. */
    @FunctionalInterface
    interface Commit {
        FullHttpResponse commit(List<Chunk> chunks, byte[] inline, String pending, long size, Digests digests,
                                Map<String, String> trailers) throws Exception;
    }

    private final Call call;
    private final String op;
    private final long maxBytes;
    private final Digests digests;
    private final Commit commit;
    private final PayloadDecoder decoder;
    private final ChunkStore.Writer writer;
    private final byte[] buf = new byte[64 * 1024];
    private long size;
    private boolean done;

    /**
     * @param maxBytes    the most bytes the body may decode to (EntityTooLarge past it)
     * @param inlineBytes a body at most this long is kept inline (0: never)
     */
    UploadBody(Call call, String op, long maxBytes, int inlineBytes, Digests digests, Commit commit) {
        this.call = call;
        this.op = op;
        this.maxBytes = maxBytes;
        this.digests = digests;
        this.commit = commit;
        long declared = declaredLength(call.req());
        if (declared > maxBytes) {
            throw S3Error.ENTITY_TOO_LARGE.exception("Your proposed upload of " + declared
                    + " bytes exceeds the maximum allowed size of " + maxBytes + " bytes");
        }
        this.writer = call.g().chunks().writer(inlineBytes);
        this.decoder = PayloadDecoder.of(call.who(), decodedLength(call.req()), this::sink);
    }

    /** {@code x-amz-decoded-content-length}, or -1. */
    static long decodedLength(S3Request r) {
        String v = r.header("x-amz-decoded-content-length");
        if (v == null) {
            return -1;
        }
        try {
            long n = Long.parseLong(v.trim());
            if (n < 0) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw S3Error.INVALID_ARGUMENT.exception("x-amz-decoded-content-length must be a number of bytes");
        }
    }

    /** The object's length as the head declares it (decoded length, else Content-Length), or -1. */
    static long declaredLength(S3Request r) {
        long n = decodedLength(r);
        if (n >= 0) {
            return n;
        }
        String cl = r.header("Content-Length");
        if (cl == null) {
            return -1;
        }
        try {
            return Long.parseLong(cl.trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private void sink(ByteBuf b) {
        while (b.isReadable()) {
            int n = Math.min(buf.length, b.readableBytes());
            b.readBytes(buf, 0, n);
            size += n;
            if (size > maxBytes) {
                throw S3Error.ENTITY_TOO_LARGE.exception("Your upload exceeds the maximum allowed size of " + maxBytes + " bytes");
            }
            digests.update(buf, 0, n);
            writer.write(buf, 0, n);
        }
    }

    @Override
    public void content(ByteBuf chunk) {
        decoder.feed(chunk);
    }

    @Override
    public FullHttpResponse end(HttpHeaders trailers) throws Exception {
        try {
            Map<String, String> tr = decoder.finish(trailers);
            List<Chunk> chunks = writer.finish();
            digests.verify(tr);
            FullHttpResponse r = commit.commit(chunks, writer.inline(), writer.pending(), size, digests, tr);
            done = true;
            call.g().metrics().received(op, size);
            return r;
        } finally {
            if (!done) {
                done = true;
                writer.abort();
            }
        }
    }

    @Override
    public void abort() {
        if (!done) {
            done = true;
            writer.abort();
        }
    }
}
