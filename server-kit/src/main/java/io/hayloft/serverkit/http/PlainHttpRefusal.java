package io.hayloft.serverkit.http;

import io.hayloft.format.errors.CommonErrors;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.ssl.SslHandler;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Refuses plain HTTP on a TLS listener: looks at the first bytes of the connection and, when they
 * are not a TLS record (a plain-HTTP client on an HTTPS port), answers a plain-HTTP 400 with the
 * JSON error {@link CommonErrors#TLS_REQUIRED} and closes; otherwise removes itself, handing the
 * bytes read so far to the {@code SslHandler} behind it.
 *
 * <p>Place in the pipeline: on a TLS listener only, after the {@link ByteCounter} and just ahead of
 * Netty's {@code SslHandler}. Buffers: the bytes of a refused connection are skipped and released by
 * {@link ByteToMessageDecoder}; those of a TLS connection are passed on as one cumulated buffer.
 *
 * <p>Thread-safety: one instance per channel, touched only on that channel's event loop.
 */
final class PlainHttpRefusal extends ByteToMessageDecoder {
    /** A TLS record header: type, version (2 bytes), length (2 bytes). */
    private static final int RECORD_HEADER = 5;
    static final String MESSAGE = "this listener speaks HTTPS (TLS): use https://host:port";

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (in.readableBytes() < RECORD_HEADER) {
            return;
        }
        if (SslHandler.isEncrypted(in, false)) {
            ctx.pipeline().remove(this); // the cumulated bytes go on to the SslHandler
            return;
        }
        in.skipBytes(in.readableBytes());
        ErrorRenderer renderer = RequestErrors.renderer(ctx.channel());
        ByteBuf answer = renderer == ErrorRenderer.JSON
                ? plainResponse(HttpResponses.errorBytes(CommonErrors.TLS_REQUIRED, MESSAGE))
                : plainResponse(renderer.error(null, CommonErrors.TLS_REQUIRED, MESSAGE));
        ctx.writeAndFlush(answer).addListener(ChannelFutureListener.CLOSE);
    }

    /** {@code r} (status, headers, body) as the bytes of a whole HTTP/1.1 response that closes the connection; releases {@code r}. */
    static ByteBuf plainResponse(FullHttpResponse r) {
        try {
            StringBuilder head = new StringBuilder("HTTP/1.1 ").append(r.status()).append("\r\n");
            r.headers().set(HttpHeaderNames.CONTENT_LENGTH, r.content().readableBytes());
            r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            r.headers().forEach(h -> head.append(h.getKey()).append(": ").append(h.getValue()).append("\r\n"));
            head.append("\r\n");
            byte[] body = ByteBufUtil.getBytes(r.content());
            return Unpooled.wrappedBuffer(head.toString().getBytes(StandardCharsets.ISO_8859_1), body);
        } finally {
            r.release();
        }
    }

    /** A whole HTTP/1.1 400 response as bytes: there is no HTTP encoder ahead of this handler. */
    static ByteBuf plainResponse(byte[] json) {
        String head = "HTTP/1.1 400 Bad Request\r\n"
                + "Content-Type: application/json\r\n"
                + "Content-Length: " + json.length + "\r\n"
                + "Connection: close\r\n\r\n";
        return Unpooled.wrappedBuffer(head.getBytes(StandardCharsets.US_ASCII), json);
    }
}
