package io.hayloft.serverkit.http;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.channel.FileRegion;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts the bytes read from and written to a socket into the server's two totals, for
 * {@code hayloft_http_received_bytes_total} and {@code hayloft_http_sent_bytes_total}.
 *
 * <p>Place in the pipeline: first of every channel, ahead of TLS, so the counts are of the bytes on
 * the wire (TLS records included). Inbound it counts each {@link ByteBuf}'s readable bytes;
 * outbound each {@link ByteBuf}'s or {@link ByteBufHolder}'s readable bytes and each
 * {@link FileRegion}'s bytes not yet transferred. Every message goes on unchanged: this handler
 * neither retains nor releases anything.
 *
 * <p>Thread-safety: one instance per channel, touched only on that channel's event loop; it holds no
 * state of its own, and the two {@link LongAdder}s it adds to are shared by every channel of a server.
 */
final class ByteCounter extends ChannelDuplexHandler {
    private final LongAdder in;
    private final LongAdder out;

    /**
     * @param in  the total that bytes read are added to
     * @param out the total that bytes written are added to
     */
    ByteCounter(LongAdder in, LongAdder out) {
        this.in = in;
        this.out = out;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf b) {
            in.add(b.readableBytes());
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (msg instanceof ByteBuf b) {
            out.add(b.readableBytes());
        } else if (msg instanceof ByteBufHolder h) {
            out.add(h.content().readableBytes());
        } else if (msg instanceof FileRegion f) {
            out.add(f.count() - f.transferred());
        }
        ctx.write(msg, promise);
    }
}
