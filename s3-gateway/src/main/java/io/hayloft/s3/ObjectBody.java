package io.hayloft.s3;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.stream.ChunkedInput;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;

/**
 * An object's bytes as a streamed response body: {@code length} bytes read from the chunk store's
 * stream a piece at a time on the server's executor (never the whole object in memory). A stream
 * that ends early fails the write (the client sees a short body, never a wrong one). Counts the
 * bytes sent in the gateway's metrics. Not thread-safe: the server reads it serially.
 */
final class ObjectBody implements ChunkedInput<ByteBuf> {
    static final int PIECE = 256 * 1024;
    private final InputStream in;
    private final long length;
    private final S3Metrics metrics;
    private final String op;
    private long done;
    private boolean closed;

    ObjectBody(InputStream in, long length, S3Metrics metrics, String op) {
        this.in = in;
        this.length = length;
        this.metrics = metrics;
        this.op = op;
    }

    @Override
    public boolean isEndOfInput() {
        return done >= length;
    }

    @Override
    public void close() throws IOException {
        if (!closed) {
            closed = true;
            metrics.sent(op, done);
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
        int n = (int) Math.min(PIECE, length - done);
        ByteBuf buf = allocator.heapBuffer(n, n);
        boolean handedOn = false;
        try {
            byte[] a = buf.array();
            int off = buf.arrayOffset();
            int got = 0;
            while (got < n) {
                int r = in.read(a, off + got, n - got);
                if (r < 0) {
                    throw new EOFException("the object's data ended at " + (done + got) + " of " + length + " bytes");
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
