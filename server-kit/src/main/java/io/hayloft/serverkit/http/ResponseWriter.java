package io.hayloft.serverkit.http;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the responses of the pipeline's handlers: a {@link FullHttpResponse} as it is, a
 * {@link StreamedResponse} as its head and then its body one chunk at a time (each chunk read on the
 * blocking executor once the socket took the previous one), and an error answer followed by closing
 * the connection. A response that will not be written is {@linkplain #discard discarded}.
 *
 * <p>Buffer ownership: every response given to a method of this class is consumed by it: written
 * (Netty releases it once on the wire or on failure) or released here.
 *
 * <p>Thread-safety: stateless; callable from any thread (Netty hands a write from outside the event
 * loop to it). Each streamed body is read by one executor task at a time.
 */
final class ResponseWriter {
    /** Under {@link HttpServer}'s name, as every log line of the pipeline. */
    private static final Logger LOG = LoggerFactory.getLogger(HttpServer.class);

    private ResponseWriter() {
    }

    /** Writes an error answer marked {@code Connection: close} and closes once it is written. */
    static void sendAndClose(ChannelHandlerContext ctx, FullHttpResponse response) {
        sendAndClose(ctx, response, null);
    }

    /** As {@link #sendAndClose(ChannelHandlerContext, FullHttpResponse)}; {@code disk} reads a streamed body. */
    static void sendAndClose(ChannelHandlerContext ctx, FullHttpResponse response, Executor disk) {
        write(ctx, HttpResponses.closing(response), disk).addListener(ChannelFutureListener.CLOSE);
    }

    /** Writes and flushes a response that is not streamed (error answers written on the event loop). */
    static ChannelFuture write(ChannelHandlerContext ctx, FullHttpResponse response) {
        return write(ctx, response, null);
    }

    /**
     * Writes and flushes a response: a {@link StreamedResponse} as its head, then its body one chunk
     * at a time, each chunk read on {@code disk} (the blocking executor: a file read never runs on the
     * event loop) once the previous one has been written to the socket, so a connection holds one
     * chunk in memory; the body is closed when done or failed. Any other response as it is.
     *
     * @return completes when the whole response was written, or failed
     */
    static ChannelFuture write(ChannelHandlerContext ctx, FullHttpResponse response, Executor disk) {
        if (response instanceof StreamedResponse streamed) {
            Objects.requireNonNull(disk, "a streamed response needs the blocking executor");
            ChannelPromise done = ctx.newPromise();
            ctx.write(new DefaultHttpResponse(streamed.protocolVersion(), streamed.status(), streamed.headers()));
            ReferenceCountUtil.release(streamed); // its own content is empty; the body is pumped below
            pump(ctx, streamed, disk, done);
            return done;
        }
        return ctx.writeAndFlush(response);
    }

    /** Reads the next chunk of {@code streamed} on {@code disk}, writes it, and goes on when the socket took it. */
    private static void pump(ChannelHandlerContext ctx, StreamedResponse streamed, Executor disk, ChannelPromise done) {
        try {
            disk.execute(() -> {
                ByteBuf chunk;
                try {
                    chunk = streamed.body().isEndOfInput() ? null : streamed.body().readChunk(ctx.alloc());
                } catch (Exception e) {
                    finish(ctx, streamed, done, e);
                    return;
                }
                if (chunk == null) {
                    ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT)
                            .addListener(f -> finish(ctx, streamed, done, f.cause()));
                    return;
                }
                ctx.writeAndFlush(new DefaultHttpContent(chunk)).addListener(f -> {
                    if (f.isSuccess()) {
                        pump(ctx, streamed, disk, done);
                    } else {
                        finish(ctx, streamed, done, f.cause());
                    }
                });
            });
        } catch (RejectedExecutionException e) {
            finish(ctx, streamed, done, e); // the server is closing
        }
    }

    private static void finish(ChannelHandlerContext ctx, StreamedResponse streamed, ChannelPromise done,
                               Throwable failure) {
        streamed.discard();
        if (failure == null) {
            done.trySuccess();
        } else {
            LOG.debug("streamed response failed; closing the connection", failure);
            ctx.close(); // the client sees a short body, never a wrong one
            done.tryFailure(failure);
        }
    }

    /** Releases a response that will not be written. */
    static void discard(FullHttpResponse response) {
        if (response instanceof StreamedResponse streamed) {
            streamed.discard();
        }
        ReferenceCountUtil.release(response);
    }
}
