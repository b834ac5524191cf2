package io.hayloft.serverkit.http;

import io.hayloft.format.errors.CommonErrors;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.timeout.IdleStateEvent;

/**
 * Ends connections that wait on their client: knows whether a request is half received (its head
 * decoded, its last content not yet) and, on the {@link IdleStateEvent} of the
 * {@code IdleStateHandler} ahead of it, answers 408 {@code REQUEST_TIMEOUT} and closes when one is,
 * or just closes an idle connection between requests. While the {@link Dispatcher} is processing a
 * request of the channel ({@link Dispatcher#BUSY}) the idle time is the server's, not the client's,
 * and the event is ignored. When the client shuts its output down in the middle of a request
 * ({@link ChannelInputShutdownEvent}, the channel allowing half-closure) it answers 400
 * {@code BAD_REQUEST} and closes.
 *
 * <p>Place in the pipeline: right behind the {@code HttpServerCodec}, so it sees every decoded
 * message; it passes every message on unchanged (it retains and releases nothing) and every other
 * user event too.
 *
 * <p>Thread-safety: one instance per channel, touched only on that channel's event loop.
 */
final class PartialTracker extends ChannelInboundHandlerAdapter {
    private boolean partial;
    /** The head of the request being received (for the error renderer), or null. */
    private HttpRequest head;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest r) {
            partial = true;
            head = r;
        }
        if (msg instanceof LastHttpContent) {
            partial = false;
            head = null;
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent) {
            if (Boolean.TRUE.equals(ctx.channel().attr(Dispatcher.BUSY).get())) {
                return;
            }
            if (partial) {
                ResponseWriter.sendAndClose(ctx, RequestErrors.renderer(ctx.channel()).error(head, CommonErrors.REQUEST_TIMEOUT,
                        "request not completed within the idle timeout"));
            } else {
                ctx.close();
            }
            return;
        }
        if (evt instanceof ChannelInputShutdownEvent && partial) {
            ResponseWriter.sendAndClose(ctx, RequestErrors.renderer(ctx.channel()).error(head, CommonErrors.BAD_REQUEST,
                    "connection closed before the request body was complete"));
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }
}
