package io.hayloft.serverkit.http;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Chooses which requests have their body streamed: wraps the head and body pieces of each request
 * the {@link StreamedRequestHandler} {@linkplain StreamedRequestHandler#streamsBody chooses} in
 * {@link StreamPart}s, which the aggregator lets by; every other message goes on as it came. A head
 * that did not decode, or whose URI has a bad percent-escape, is never offered to the handler (the
 * aggregator and the {@link Dispatcher} answer it). Routing of a body ends with its last piece or
 * with a piece that did not decode (which the stream answers 400).
 *
 * <p>Place in the pipeline: only when the server's handler is a {@link StreamedRequestHandler},
 * between the {@link PartialTracker} and the {@link BoundedAggregator}. Buffers: a body piece is
 * handed on inside its {@link StreamPart}, which owns it; nothing is retained or released here.
 *
 * <p>Thread-safety: one instance per channel, touched only on that channel's event loop.
 */
final class StreamRouter extends ChannelInboundHandlerAdapter {
    /** Under {@link HttpServer}'s name, as every log line of the pipeline. */
    private static final Logger LOG = LoggerFactory.getLogger(HttpServer.class);
    private final StreamedRequestHandler handler;
    /** True from the head of a streamed request to its last body piece. */
    private boolean routing;

    StreamRouter(StreamedRequestHandler handler) {
        this.handler = handler;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest head && !(msg instanceof FullHttpRequest)) {
            routing = head.decoderResult().isSuccess() && RequestErrors.malformedUri(head.uri()) == null && wants(head);
            if (routing) {
                ctx.fireChannelRead(StreamPart.head(head));
                return;
            }
        } else if (routing && msg instanceof HttpContent c) {
            if (c instanceof LastHttpContent || c.decoderResult().isFailure()) {
                routing = false;
            }
            ctx.fireChannelRead(StreamPart.content(c));
            return;
        }
        ctx.fireChannelRead(msg);
    }

    private boolean wants(HttpRequest head) {
        try {
            return handler.streamsBody(head);
        } catch (RuntimeException e) {
            LOG.debug("streamsBody failed for {} {}; aggregating", head.method(), head.uri(), e);
            return false;
        }
    }
}
