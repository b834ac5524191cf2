package io.hayloft.serverkit.http;

import io.hayloft.format.errors.CommonErrors;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;

/**
 * Netty's {@link HttpObjectAggregator} bounded by the server's body limit, whose refusals carry a
 * JSON error body like every other error: an oversized body (a {@code Content-Length} over the
 * limit, or a chunked body growing over it) is answered 413 {@code BODY_TOO_LARGE} with
 * {@code Connection: close}, and an {@code Expect: 100-continue} that cannot be met 413 or 417
 * (see {@link #newContinueResponse}). After a 413 the connection is not closed at once: a client
 * still sending the body would get a reset and might never read the 413. The rest of the body is
 * read and dropped, and the connection closed when it ends or after {@link #DRAIN_LIMIT} more
 * bytes (or by the idle timeout, for a client that stops sending).
 *
 * <p>Place in the pipeline: behind the {@link PartialTracker} and the {@link StreamRouter} (whose
 * {@link StreamPart}s it lets by, as every message that is not an {@code HttpObject}), ahead of the
 * {@link Dispatcher}, to which it passes each {@code FullHttpRequest}. Buffers: as Netty's
 * aggregator; while draining, every message is released here.
 *
 * <p>Thread-safety: one instance per channel, touched only on that channel's event loop.
 */
final class BoundedAggregator extends HttpObjectAggregator {
    /** Most bytes of an oversized body read and dropped after the 413. */
    static final long DRAIN_LIMIT = 64L << 20;
    private final int max;
    private boolean draining;
    private long drained;

    /** @param max the most bytes of one request body */
    BoundedAggregator(int max) {
        super(max);
        this.max = max;
    }

    @Override
    protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
        ctx.writeAndFlush(HttpResponses.closing(RequestErrors.renderer(ctx.channel()).error(
                oversized instanceof HttpRequest r ? r : null, CommonErrors.BODY_TOO_LARGE,
                "request body exceeds the limit of " + max + " bytes")));
        draining = true;
    }

    /**
     * The answer to {@code Expect: 100-continue}: Netty's own refusal of an oversized or unknown
     * expectation has an empty body; ours names the problem in JSON like every other error.
     */
    @Override
    protected Object newContinueResponse(HttpMessage start, int maxContentLength, ChannelPipeline pipeline) {
        String expect = start.headers().get(HttpHeaderNames.EXPECT); // Netty removes it when it answers
        Object r = super.newContinueResponse(start, maxContentLength, pipeline);
        if (r instanceof HttpResponse h && h.status().code() >= 400) {
            ErrorRenderer renderer = RequestErrors.renderer(pipeline.channel());
            HttpRequest request = start instanceof HttpRequest req ? req : null;
            FullHttpResponse json = h.status().code() == 413
                    ? renderer.error(request, CommonErrors.BODY_TOO_LARGE, "request body of "
                            + HttpUtil.getContentLength(start, -1L) + " bytes exceeds the limit of " + max + " bytes")
                    : renderer.error(request, CommonErrors.BAD_REQUEST, "unsupported expectation: " + expect);
            json.setStatus(h.status());
            return HttpUtil.isKeepAlive(start) ? json : HttpResponses.closing(json);
        }
        return r;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        if (!draining) {
            super.channelRead(ctx, msg);
            return;
        }
        try {
            if (msg instanceof HttpContent c) {
                drained += c.content().readableBytes();
            }
            if (msg instanceof LastHttpContent || drained > DRAIN_LIMIT) {
                ctx.close();
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }
}
