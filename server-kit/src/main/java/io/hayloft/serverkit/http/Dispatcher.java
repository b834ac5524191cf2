package io.hayloft.serverkit.http;

import io.hayloft.format.errors.CommonErrors;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.util.AttributeKey;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands each request to the server's {@link RequestHandler} on the blocking executor, one at a time
 * per connection, and writes its answer. For an aggregated request ({@link FullHttpRequest}) it
 * first answers on the event loop what needs no handler: a request the codec could not decode (414,
 * 431 or 400, see {@link RequestErrors#decodeError}), a URI with a bad percent-escape (400), and a
 * request over the server's {@code maxConcurrentRequests} in flight (503 {@code OVERLOADED}); each
 * of these is answered with {@code Connection: close}. It sets {@link HttpServer#PEER_HEADER}, offers
 * the request to the fast path ({@code eventLoopHandler}, when there is one) and otherwise calls the
 * handler's {@link RequestHandler#handleAsync} on the executor; what the handler throws, or its future
 * fails with, is answered as {@link ErrorRenderer#failure} renders it (an
 * {@link io.hayloft.format.errors.ApiException} as its error, unwrapped from a
 * {@code CompletionException} or {@code ExecutionException}).
 * A streamed request ({@link StreamPart}s) is busy from its head to its answer: its body pieces go
 * to its {@link BodyStream} as they arrive, reads paused while the stream says so and after the
 * last piece until the answer is written, as for an aggregated request.
 *
 * <p>Asynchronous answers: when the future {@code handleAsync} returned is already done (as it
 * always is for a handler that only implements {@code handle}), its answer is written from the
 * executor thread at once. Otherwise the executor thread returns to its pool, and the answer is
 * handled by whatever thread completes the future: the request is released and counted out of
 * {@code inFlight} then (the handler may read it until then), and the response is written (the write
 * hops to the event loop) or discarded if the channel closed meanwhile. The connection stays busy
 * until the answer is written, whichever thread completes it, so the order below holds; a request
 * waiting on its future holds no thread.
 *
 * <p>Order: requests that the codec decoded from the same read while one is in flight (pipelining)
 * wait in {@code queue}, with the body pieces of queued streamed requests, and are answered in the
 * order they came. Reads are paused ({@code autoRead} off) while a request is being processed, and
 * {@link #BUSY} is set on the channel so that the {@link PartialTracker} does not count that time
 * as the client's.
 *
 * <p>Place in the pipeline: last, behind the {@link BoundedAggregator}. Buffers: an aggregated
 * request is released once, when its handler's answer is in (it returned, or its future completed),
 * or at once when refused; the response is written
 * (Netty releases it) or {@linkplain ResponseWriter#discard discarded} if the channel is gone; queued
 * messages are released when the channel closes.
 *
 * <p>Thread-safety: one instance per channel. Its state is touched only on the channel's event loop;
 * the handler runs on the executor, which hands its answer back through the channel (the write
 * completes on the event loop), or the thread that completes an asynchronous answer does. The
 * {@code inFlight} count is shared by the server's channels.
 */
final class Dispatcher extends ChannelInboundHandlerAdapter implements BodyStream.Owner {
    /** Under {@link HttpServer}'s name, as every log line of the pipeline. */
    private static final Logger LOG = LoggerFactory.getLogger(HttpServer.class);
    /** Set while a request of the channel is being processed: idle time then is ours, not the client's. */
    static final AttributeKey<Boolean> BUSY = AttributeKey.valueOf("hayloft.busy");

    private final RequestHandler handler;
    private final ExecutorService executor;
    private final int maxConcurrent;
    /** FullHttpRequests and StreamParts, in the order they arrived. */
    private final ArrayDeque<Object> queue = new ArrayDeque<>();
    private boolean busy;
    /** The streamed request of this connection being received or answered, or null. */
    private BodyStream stream;
    private final RequestHandler eventLoopHandler; // may be null
    private final AtomicInteger inFlight;

    /**
     * @param handler          answers each request on {@code executor}
     * @param executor         the server's blocking executor
     * @param maxConcurrent    requests in flight across the server above which a request is answered 503
     * @param eventLoopHandler the fast path offered each aggregated request first, on the event loop, or null
     * @param inFlight         the server's count of requests in flight, shared by all its channels
     */
    Dispatcher(RequestHandler handler, ExecutorService executor, int maxConcurrent, RequestHandler eventLoopHandler,
               AtomicInteger inFlight) {
        this.handler = handler;
        this.executor = executor;
        this.maxConcurrent = maxConcurrent;
        this.eventLoopHandler = eventLoopHandler;
        this.inFlight = inFlight;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof FullHttpRequest) && !(msg instanceof StreamPart)) {
            ctx.fireChannelRead(msg);
            return;
        }
        if (!queue.isEmpty()) {
            queue.add(msg); // ownership passes to the queue
            return;
        }
        take(ctx, msg);
    }

    /** Handles {@code msg} now when it can (a piece of the body being received, or a request when idle), else queues it. */
    private void take(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof StreamPart part && part.content != null) {
            if (stream != null && !stream.lastReceived) {
                stream.content(part.content);
                updateReads(ctx);
            } else {
                part.release(); // not expected: every routed head gets a stream
            }
            return;
        }
        if (busy) {
            queue.add(msg);
            return;
        }
        if (msg instanceof FullHttpRequest request) {
            dispatch(ctx, request);
        } else {
            startStream(ctx, ((StreamPart) msg).head);
        }
    }

    /** Takes queued messages while it can: body pieces of the current stream always, requests when idle. */
    private void drainQueue(ChannelHandlerContext ctx) {
        Object next;
        while ((next = queue.peek()) != null) {
            boolean piece = next instanceof StreamPart p && p.content != null;
            if (!piece && busy) {
                return;
            }
            queue.poll();
            take(ctx, next);
        }
    }

    private void dispatch(ChannelHandlerContext ctx, FullHttpRequest request) {
        if (request.decoderResult().isFailure()) {
            Throwable cause = request.decoderResult().cause();
            request.release();
            ResponseWriter.sendAndClose(ctx, RequestErrors.decodeError(RequestErrors.renderer(ctx.channel()), request, cause));
            return;
        }
        String badUri = RequestErrors.malformedUri(request.uri());
        if (badUri != null) {
            request.release();
            ResponseWriter.sendAndClose(ctx, RequestErrors.renderer(ctx.channel()).error(request, CommonErrors.BAD_REQUEST, badUri));
            return;
        }
        if (inFlight.incrementAndGet() > maxConcurrent) {
            inFlight.decrementAndGet();
            request.release();
            ResponseWriter.sendAndClose(ctx, RequestErrors.renderer(ctx.channel()).error(request, CommonErrors.OVERLOADED,
                    "more than " + maxConcurrent + " requests in flight; retry later"));
            return;
        }
        boolean keepAlive = HttpUtil.isKeepAlive(request);
        setPeer(ctx, request);
        if (eventLoopHandler != null && answerOnEventLoop(ctx, request, keepAlive)) {
            return;
        }
        busy = true;
        ctx.channel().attr(BUSY).set(Boolean.TRUE);
        ctx.channel().config().setAutoRead(false);
        try {
            executor.execute(() -> process(ctx, request, keepAlive));
        } catch (RejectedExecutionException e) {
            inFlight.decrementAndGet();
            request.release();
            ResponseWriter.sendAndClose(ctx, RequestErrors.renderer(ctx.channel()).error(request, CommonErrors.OVERLOADED,
                    "server is shutting down"));
        }
    }

    /** A streamed request's head (decoded, its URI checked by the router): its body goes to a new {@link BodyStream}. */
    private void startStream(ChannelHandlerContext ctx, HttpRequest head) {
        busy = true;
        setPeer(ctx, head);
        stream = new BodyStream(ctx, head, (StreamedRequestHandler) handler, executor, this, inFlight);
        String expect = head.headers().get(HttpHeaderNames.EXPECT);
        if (expect != null && !HttpUtil.is100ContinueExpected(head)) {
            FullHttpResponse r = RequestErrors.renderer(ctx.channel()).error(head, CommonErrors.BAD_REQUEST,
                    "unsupported expectation: " + expect);
            r.setStatus(HttpResponseStatus.EXPECTATION_FAILED);
            stream.refuseAtStart(r);
        } else if (inFlight.incrementAndGet() > maxConcurrent) {
            inFlight.decrementAndGet();
            stream.refuseAtStart(RequestErrors.renderer(ctx.channel()).error(head, CommonErrors.OVERLOADED,
                    "more than " + maxConcurrent + " requests in flight; retry later"));
        } else {
            stream.start();
        }
        updateReads(ctx);
    }

    private void setPeer(ChannelHandlerContext ctx, HttpRequest request) {
        if (ctx.channel().remoteAddress() instanceof InetSocketAddress peer && peer.getAddress() != null) {
            request.headers().set(HttpServer.PEER_HEADER, peer.getAddress().getHostAddress());
        } else {
            request.headers().remove(HttpServer.PEER_HEADER);
        }
    }

    /**
     * Reads while the connection is idle or its streamed request's body is still arriving (and
     * not paused, or refused: then its rest is read and dropped); the idle timeout answers 408
     * only while it waits for the client.
     */
    private void updateReads(ChannelHandlerContext ctx) {
        boolean receiving = stream != null && !stream.lastReceived && (stream.refused || !stream.paused());
        boolean read = !busy || receiving;
        ctx.channel().attr(BUSY).set(busy && !receiving);
        if (read != ctx.channel().config().isAutoRead()) {
            ctx.channel().config().setAutoRead(read);
            if (read) {
                ctx.read();
            }
        }
    }

    @Override
    public void answered(ChannelHandlerContext ctx, BodyStream s, FullHttpResponse response) {
        if (!ctx.channel().isActive()) {
            ResponseWriter.discard(response);
            return;
        }
        if (s.keepAlive) {
            HttpUtil.setKeepAlive(response, true);
            ResponseWriter.write(ctx, response, executor).addListener(f -> done(ctx));
        } else {
            ResponseWriter.sendAndClose(ctx, response, executor);
        }
    }

    @Override
    public void refused(ChannelHandlerContext ctx, BodyStream s, FullHttpResponse response) {
        if (!ctx.channel().isActive()) {
            ResponseWriter.discard(response);
            return;
        }
        if (s.lastReceived && !s.malformed) { // the whole body was read: the connection may go on
            answered(ctx, s, response);
            return;
        }
        s.refused = true;
        ResponseWriter.write(ctx, HttpResponses.closing(response)).addListener(f -> s.answerWritten(f.isSuccess()));
        if (s == stream) {
            updateReads(ctx);
        }
    }

    @Override
    public void drained(ChannelHandlerContext ctx, BodyStream s) {
        if (s == stream && s.paused() && s.queuedBytes() < BodyStream.LOW_WATER) {
            s.resume();
            updateReads(ctx);
        }
    }

    /**
     * Offers the request to the fast path (this connection is not busy: it is the request's turn);
     * true when it answered, the request then released here and the next queued one dispatched.
     */
    private boolean answerOnEventLoop(ChannelHandlerContext ctx, FullHttpRequest request, boolean keepAlive) {
        FullHttpResponse response;
        try {
            response = eventLoopHandler.handle(request);
        } catch (Throwable e) {
            LOG.debug("fast path failed for {} {}; using the executor", request.method(), request.uri(), e);
            response = null;
        }
        if (response == null) {
            return false;
        }
        inFlight.decrementAndGet();
        request.release();
        if (keepAlive) {
            HttpUtil.setKeepAlive(response, true);
            ResponseWriter.write(ctx, response, executor); // written in order: we are on the event loop, in this request's turn
            done(ctx);
        } else {
            ResponseWriter.sendAndClose(ctx, response, executor);
        }
        return true;
    }

    /**
     * On the executor: asks the handler for its answer. An answer already done (every synchronous
     * handler's) is written from this thread at once; any other is written by the thread that
     * completes it, and this thread returns to the pool meanwhile.
     */
    private void process(ChannelHandlerContext ctx, FullHttpRequest request, boolean keepAlive) {
        CompletableFuture<FullHttpResponse> answer;
        try {
            answer = Objects.requireNonNull(handler.handleAsync(request), "handleAsync returned null");
        } catch (Throwable e) {
            answer = CompletableFuture.failedFuture(e);
        }
        answer.whenComplete((response, failure) -> respond(ctx, request, keepAlive, response, failure));
    }

    /**
     * Once the handler's answer is in, on the thread that completed it: renders a failure, releases
     * the request (exactly once: a future completes once), counts it out of flight and writes the
     * response, or discards it if the channel is gone. Must not throw: nothing would see it.
     */
    private void respond(ChannelHandlerContext ctx, FullHttpRequest request, boolean keepAlive, FullHttpResponse answer,
                         Throwable failure) {
        FullHttpResponse response = answer;
        try {
            if (failure != null || response == null) {
                Throwable cause = failure == null ? new IllegalStateException("the handler answered no response")
                        : RequestErrors.unwrap(failure);
                response = RequestErrors.renderer(ctx.channel()).failure(request, cause);
            }
        } catch (Throwable e) { // an ErrorRenderer that threw: no answer to give, so end the connection
            LOG.error("rendering the failure of {} {} failed; closing the connection", request.method(), request.uri(), e);
            response = null;
        } finally {
            request.release();
            inFlight.decrementAndGet();
        }
        if (response == null) {
            ctx.close();
            return;
        }
        if (!ctx.channel().isActive()) {
            ResponseWriter.discard(response);
            return;
        }
        if (keepAlive) {
            HttpUtil.setKeepAlive(response, true);
            ResponseWriter.write(ctx, response, executor).addListener(f -> done(ctx));
        } else {
            ResponseWriter.sendAndClose(ctx, response, executor);
        }
    }

    /** On the event loop after a response was written: next queued request, or read more. */
    private void done(ChannelHandlerContext ctx) {
        busy = false;
        stream = null;
        ctx.channel().attr(BUSY).set(Boolean.FALSE);
        drainQueue(ctx);
        if (!busy) {
            ctx.channel().config().setAutoRead(true);
            ctx.read();
        } else {
            updateReads(ctx);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        Object r;
        while ((r = queue.poll()) != null) {
            ReferenceCountUtil.release(r);
        }
        if (stream != null) {
            stream.channelClosed();
        }
        super.channelInactive(ctx);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (!(cause instanceof IOException)) {
            LOG.debug("closing connection after error", cause);
        }
        ctx.close();
    }
}
