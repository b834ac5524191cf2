package io.hayloft.serverkit.http;

import io.hayloft.format.errors.CommonErrors;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One request whose body {@link HttpServer} streams to a {@link StreamedRequestHandler}: the pieces
 * the event loop receives are queued, in order, and handed to the handler's
 * {@link StreamedRequestHandler.RequestBody} by a task on the blocking executor that runs while the
 * queue is not empty (one task at a time per stream: the calls are serial and in order; no thread
 * waits for the client). Backpressure: while more than {@link #HIGH_WATER} bytes are queued the
 * connection is {@linkplain #paused() paused} (the dispatcher turns {@code autoRead} off) until the
 * executor brings them under {@link #LOW_WATER}.
 *
 * <p>Buffer ownership: a queued {@link HttpContent} belongs to the stream and is released by the
 * executor task after the handler saw it (or without showing it, once the stream has finished), or
 * here when the executor refuses work (the server is closing).
 *
 * <p>Threads: the fields marked "event loop" are touched only on the channel's event loop, those
 * marked "executor" only by the (serial) executor task; the queue and counters are shared.
 */
final class BodyStream implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(BodyStream.class);
    /** Bytes queued for the executor above which the connection stops reading. */
    static final int HIGH_WATER = 1 << 20;
    /** Bytes queued below which a paused connection reads again. */
    static final int LOW_WATER = 256 << 10;
    /** Most bytes of a refused body read and dropped after its error answer, before the connection is closed. */
    static final long DRAIN_LIMIT = 64L << 20;

    private static final Object OPEN = new Object();
    private static final Object ABORT = new Object();

    /** A body the codec could not decode (a bad chunk header): answered 400. */
    private record Malformed(Throwable cause) {
    }

    /** What the stream tells its connection's dispatcher, always on the event loop. */
    interface Owner {
        /** The handler answered: write {@code response} and go on with the connection. */
        void answered(ChannelHandlerContext ctx, BodyStream stream, FullHttpResponse response);

        /** The request failed before its end: write {@code response}, drop the rest of the body, close. */
        void refused(ChannelHandlerContext ctx, BodyStream stream, FullHttpResponse response);

        /** The queue went under {@link #LOW_WATER} while the connection was paused. */
        void drained(ChannelHandlerContext ctx, BodyStream stream);
    }

    final HttpRequest head;
    final boolean keepAlive;
    final boolean expectContinue;
    private final StreamedRequestHandler handler;
    private final Executor executor;
    private final ChannelHandlerContext ctx;
    private final Owner owner;
    private final AtomicInteger inFlight;

    private final ConcurrentLinkedQueue<Object> items = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final AtomicLong queued = new AtomicLong();
    private volatile boolean paused;
    /** Set once {@code 100 Continue} was sent (executor), read by the event loop. */
    private volatile boolean continued;

    // executor
    private StreamedRequestHandler.RequestBody body;
    private boolean finished;

    // event loop
    /** The body's last piece arrived (or it could not be decoded further). */
    boolean lastReceived;
    /** A piece of the body could not be decoded: the codec reads nothing more of this connection. */
    boolean malformed;
    /** An error answer is written or on its way: the rest of the body is dropped. */
    boolean refused;
    /** The error answer has been written. */
    boolean answerWritten;
    private long dropped;

    /** @param inFlight the server's count of requests in flight, already incremented for this one; decremented once when it finishes */
    BodyStream(ChannelHandlerContext ctx, HttpRequest head, StreamedRequestHandler handler, Executor executor, Owner owner,
               AtomicInteger inFlight) {
        this.ctx = ctx;
        this.head = head;
        this.keepAlive = HttpUtil.isKeepAlive(head);
        this.expectContinue = HttpUtil.is100ContinueExpected(head);
        this.handler = handler;
        this.executor = executor;
        this.owner = owner;
        this.inFlight = inFlight;
    }

    /** Event loop: opens the body on the executor. */
    void start() {
        offer(OPEN);
    }

    /** Event loop: refuses the request before it was opened (overload, a bad expectation); {@code inFlight} was not counted. */
    void refuseAtStart(FullHttpResponse response) {
        finished = true; // nothing was offered yet: the executor never runs for this stream
        owner.refused(ctx, this, response);
    }

    /** Event loop: the next piece of the body, owned by the stream from here on. */
    void content(HttpContent c) {
        if (c instanceof LastHttpContent || c.decoderResult().isFailure()) {
            lastReceived = true;
            malformed = c.decoderResult().isFailure();
        }
        if (refused) {
            dropped += c.content().readableBytes();
            c.release();
            if (answerWritten && (lastReceived || dropped > DRAIN_LIMIT)) {
                ctx.close();
            }
            return;
        }
        if (c.decoderResult().isFailure()) {
            Throwable cause = c.decoderResult().cause();
            c.release();
            offer(new Malformed(cause));
            return;
        }
        long now = queued.addAndGet(c.content().readableBytes());
        offer(c);
        if (now > HIGH_WATER && !paused) {
            paused = true;
            if (queued.get() < LOW_WATER) { // the executor caught up meanwhile and saw paused false
                paused = false;
            }
        }
    }

    /** Event loop: the connection closed; the body, if not answered yet, is aborted. */
    void channelClosed() {
        offer(ABORT);
    }

    /** True while the connection must not read: too much of this body waits for the executor. */
    boolean paused() {
        return paused;
    }

    /** Event loop: reading again after {@link Owner#drained}. */
    void resume() {
        paused = false;
    }

    long queuedBytes() {
        return queued.get();
    }

    /** Event loop: the error answer has been written; closes once nothing more of the body is expected. */
    void answerWritten(boolean success) {
        answerWritten = true;
        if (!success || lastReceived || dropped > DRAIN_LIMIT || (expectContinue && !continued)) {
            ctx.close(); // a client still waiting for 100 Continue sends no body: nothing to drain
        }
    }

    private void offer(Object item) {
        items.add(item);
        if (!scheduled.compareAndSet(false, true)) {
            return;
        }
        try {
            executor.execute(this);
        } catch (RejectedExecutionException e) { // the server is closing: no task runs, so this thread may clean up
            scheduled.set(false);
            Object i;
            while ((i = items.poll()) != null) {
                ReferenceCountUtil.release(i);
            }
            if (!finished) {
                finished = true;
                abortBody();
                inFlight.decrementAndGet();
            }
            ctx.close();
        }
    }

    /** The executor task: every queued item in order, then ends (a later item schedules a new task). */
    @Override
    public void run() {
        for (;;) {
            Object item;
            while ((item = items.poll()) != null) {
                process(item);
            }
            scheduled.set(false);
            if (items.isEmpty() || !scheduled.compareAndSet(false, true)) {
                return;
            }
        }
    }

    private void process(Object item) {
        if (item == OPEN) {
            try {
                body = handler.openBody(head);
                if (expectContinue) {
                    continued = true;
                    ctx.writeAndFlush(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.CONTINUE,
                            Unpooled.EMPTY_BUFFER));
                }
            } catch (Throwable e) {
                fail(e);
            }
            return;
        }
        if (item == ABORT) {
            if (!finished) {
                finished = true;
                abortBody();
                inFlight.decrementAndGet();
            }
            return;
        }
        if (item instanceof Malformed m) {
            fail(CommonErrors.BAD_REQUEST.exception("malformed request body: " + m.cause()));
            return;
        }
        HttpContent c = (HttpContent) item;
        int n = c.content().readableBytes();
        try {
            if (!finished) {
                if (n > 0) {
                    body.content(c.content());
                }
                if (c instanceof LastHttpContent last) {
                    FullHttpResponse response = body.end(last.trailingHeaders());
                    finished = true;
                    inFlight.decrementAndGet();
                    ctx.executor().execute(() -> owner.answered(ctx, this, response));
                }
            }
        } catch (Throwable e) {
            fail(e);
        } finally {
            c.release();
            if (queued.addAndGet(-n) < LOW_WATER && paused) {
                ctx.executor().execute(() -> owner.drained(ctx, this));
            }
        }
    }

    /** Executor: the request failed; the body is aborted and the error answered. */
    private void fail(Throwable e) {
        if (finished) {
            return;
        }
        finished = true;
        abortBody();
        inFlight.decrementAndGet();
        FullHttpResponse response = RequestErrors.renderer(ctx.channel()).failure(head, e);
        ctx.executor().execute(() -> owner.refused(ctx, this, response));
    }

    private void abortBody() {
        if (body == null) {
            return;
        }
        try {
            body.abort();
        } catch (Throwable t) {
            LOG.warn("aborting the streamed body of {} {} failed", head.method(), head.uri(), t);
        }
        body = null;
    }
}
