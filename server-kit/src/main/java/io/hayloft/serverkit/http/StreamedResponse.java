package io.hayloft.serverkit.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.stream.ChunkedInput;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.Objects;

/**
 * A response whose body is not held in memory: {@link HttpServer} writes its status and headers
 * (with {@code Content-Length} set to the body's length), then reads the body one chunk at a time
 * on its blocking executor (never on the event loop) and writes each chunk once the socket took the
 * previous one, so a large body costs one chunk of memory per connection whatever its size. Works the same over TLS. The
 * {@link FullHttpResponse} content of this object is always empty; a handler returns it from
 * {@link RequestHandler#handle} like any response.
 *
 * <p>Ownership: the server closes the body when it has been written, when the write fails or when
 * the connection is gone before the response is written; whoever drops a response without handing
 * it to the server must call {@link #discard}.
 *
 * <p>Not thread-safe: built on one thread, then handed to the server.
 */
public final class StreamedResponse extends DefaultFullHttpResponse {
    /** Bytes read per chunk of a {@link #fileRange}. */
    public static final int CHUNK_SIZE = 256 * 1024;

    private final ChunkedInput<ByteBuf> body;

    /**
     * @param body   the body; its {@link ChunkedInput#length()} must be its exact length in bytes
     * @param length the value of {@code Content-Length}
     */
    public StreamedResponse(HttpResponseStatus status, ChunkedInput<ByteBuf> body, long length, String contentType) {
        super(HttpVersion.HTTP_1_1, status, Unpooled.EMPTY_BUFFER);
        this.body = Objects.requireNonNull(body, "body");
        if (length < 0) {
            throw new IllegalArgumentException("length must be >= 0, got " + length);
        }
        headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        headers().set(HttpHeaderNames.CONTENT_LENGTH, length);
    }

    /** The body, for the server. */
    public ChunkedInput<ByteBuf> body() {
        return body;
    }

    /** Closes the body of a response that will not be written. */
    public void discard() {
        try {
            body.close();
        } catch (Exception e) {
            throw new IllegalStateException("closing a streamed body failed", e);
        }
    }

    /**
     * A response streaming {@code length} bytes of {@code channel} from {@code offset}, read with
     * positional reads into pooled direct buffers of at most {@link #CHUNK_SIZE} bytes (no heap
     * copy). {@code onClose} runs once when the body is closed (e.g. closes the channel, or releases
     * the caller's hold on it); the channel must stay open until then. A file shorter than the
     * range fails the write (the connection is closed: the client sees a short body).
     */
    public static StreamedResponse fileRange(HttpResponseStatus status, FileChannel channel, long offset, long length,
                                             String contentType, Closeable onClose) {
        if (offset < 0 || length < 0) {
            throw new IllegalArgumentException("range " + offset + "+" + length + " is negative");
        }
        Objects.requireNonNull(channel, "channel");
        BoundedInput.Fill positional = (buf, n, done) -> {
            ByteBuffer nio = buf.nioBuffer(0, n);
            long pos = offset + done;
            while (nio.hasRemaining()) {
                int r = channel.read(nio, pos);
                if (r < 0) {
                    throw new EOFException("file ends at " + pos + ", before the end of the range " + offset + "+" + length);
                }
                pos += r;
            }
        };
        return new StreamedResponse(status, new BoundedInput(length, true, positional, onClose), length, contentType);
    }

    /**
     * A response of the next {@code length} bytes of {@code in}, read a chunk at a time on the executor
     * (never whole in memory) and closed with the response. A stream that ends early fails the write:
     * the client sees a short body, never a wrong one.
     */
    public static StreamedResponse stream(HttpResponseStatus status, InputStream in, long length, String contentType) {
        if (length < 0) {
            throw new IllegalArgumentException("length " + length + " is negative");
        }
        Objects.requireNonNull(in, "in");
        BoundedInput.Fill sequential = (buf, n, done) -> {
            int got = 0;
            while (got < n) {
                int r = in.read(buf.array(), buf.arrayOffset() + got, n - got);
                if (r < 0) {
                    throw new EOFException("the stream ended at " + (done + got) + " of " + length + " bytes");
                }
                got += r;
            }
        };
        return new StreamedResponse(status, new BoundedInput(length, false, sequential, in), length, contentType);
    }

    /**
     * {@code length} bytes, one chunk of at most {@link #CHUNK_SIZE} per {@link #readChunk}, each filled
     * by {@code fill} (direct buffers for positional file reads, heap ones for a stream's array reads);
     * {@code onClose} runs once when the body is closed. A chunk not handed on is released.
     */
    static final class BoundedInput implements ChunkedInput<ByteBuf> {
        /** Fills exactly {@code n} bytes of {@code buf} from its start with the body's bytes from {@code done} on. */
        @FunctionalInterface
        interface Fill {
            void fill(ByteBuf buf, int n, long done) throws IOException;
        }

        private final long length;
        private final boolean direct;
        private final Fill fill;
        private final Closeable onClose;
        private long done;
        private boolean closed;

        BoundedInput(long length, boolean direct, Fill fill, Closeable onClose) {
            this.length = length;
            this.direct = direct;
            this.fill = fill;
            this.onClose = onClose;
        }

        @Override
        public boolean isEndOfInput() {
            return done >= length;
        }

        @Override
        public void close() throws IOException {
            if (!closed) {
                closed = true;
                if (onClose != null) {
                    onClose.close();
                }
            }
        }

        @Deprecated
        @Override
        public ByteBuf readChunk(ChannelHandlerContext ctx) throws IOException {
            return readChunk(ctx.alloc());
        }

        @Override
        public ByteBuf readChunk(ByteBufAllocator allocator) throws IOException {
            if (done >= length) {
                return null;
            }
            int n = (int) Math.min(CHUNK_SIZE, length - done);
            ByteBuf buf = direct ? allocator.directBuffer(n, n) : allocator.heapBuffer(n, n);
            boolean handedOn = false;
            try {
                fill.fill(buf, n, done);
                buf.writerIndex(n);
                done += n;
                handedOn = true;
                return buf;
            } finally {
                if (!handedOn) {
                    buf.release();
                }
            }
        }

        @Override
        public long length() {
            return length;
        }

        @Override
        public long progress() {
            return done;
        }
    }
}
