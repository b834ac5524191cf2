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
        return new StreamedResponse(status, new FileRangeInput(channel, offset, length, onClose), length, contentType);
    }

    /** Positional reads of a file range, one chunk per {@link #readChunk}. */
    /**
     * A response of the next {@code length} bytes of {@code in}, read a chunk at a time on the executor
     * (never whole in memory) and closed with the response. A stream that ends early fails the write:
     * the client sees a short body, never a wrong one.
     */
    public static StreamedResponse stream(HttpResponseStatus status, InputStream in, long length, String contentType) {
        if (length < 0) {
            throw new IllegalArgumentException("length " + length + " is negative");
        }
        return new StreamedResponse(status, new StreamInput(Objects.requireNonNull(in, "in"), length), length, contentType);
    }

    static final class StreamInput implements ChunkedInput<ByteBuf> {
        private final InputStream in;
        private final long length;
        private long done;
        private boolean closed;

        StreamInput(InputStream in, long length) {
            this.in = in;
            this.length = length;
        }

        @Override
        public boolean isEndOfInput() {
            return done >= length;
        }

        @Override
        public void close() throws IOException {
            if (!closed) {
                closed = true;
                in.close();
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
            ByteBuf buf = allocator.heapBuffer(n, n);
            boolean handedOn = false;
            try {
                int got = 0;
                while (got < n) {
                    int r = in.read(buf.array(), buf.arrayOffset() + got, n - got);
                    if (r < 0) {
                        throw new EOFException("the stream ended at " + (done + got) + " of " + length + " bytes");
                    }
                    got += r;
                }
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

    static final class FileRangeInput implements ChunkedInput<ByteBuf> {
        private final FileChannel channel;
        private final long start;
        private final long length;
        private final Closeable onClose;
        private long done;
        private boolean closed;

        FileRangeInput(FileChannel channel, long start, long length, Closeable onClose) {
            this.channel = Objects.requireNonNull(channel, "channel");
            this.start = start;
            this.length = length;
            this.onClose = onClose;
        }

        @Override
        public boolean isEndOfInput() {
            return done >= length;
        }

        @Override
        public void close() throws IOException {
            if (closed) {
                return;
            }
            closed = true;
            if (onClose != null) {
                onClose.close();
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
            ByteBuf buf = allocator.directBuffer(n, n);
            boolean handedOn = false;
            try {
                ByteBuffer nio = buf.nioBuffer(0, n);
                long pos = start + done;
                while (nio.hasRemaining()) {
                    int r = channel.read(nio, pos);
                    if (r < 0) {
                        throw new EOFException("file ends at " + pos + ", before the end of the range "
                                + start + "+" + length);
                    }
                    pos += r;
                }
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
