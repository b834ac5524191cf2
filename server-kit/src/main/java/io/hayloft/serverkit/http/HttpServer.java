package io.hayloft.serverkit.http;

import io.hayloft.format.errors.ApiException;
import io.hayloft.format.errors.CommonErrors;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A small Netty HTTP/1.1 server bootstrap shared by the Hayloft servers. The pipeline is: idle
 * timeout, {@link HttpServerCodec} bounded by {@link HttpLimits} (414/431 JSON on a long line or
 * header block), a tracker of partial requests (408 JSON when one stalls), an aggregator bounded by
 * the body limit (413 JSON), and a dispatcher that hands each complete request to the
 * {@link RequestHandler} on the given blocking executor, so disk I/O never runs on an event loop.
 * With TLS, a first-bytes check ({@link PlainHttpRefusal}) and Netty's {@code SslHandler} come first.
 * One request per connection is processed at a time (reads pause until the response is written),
 * so pipelined requests are answered in order. Over {@code maxConcurrentRequests} in flight, 503.
 * A {@link StreamedResponse}'s body is read a chunk at a time on the executor and written as the
 * socket takes each chunk, so a large file costs one chunk per connection and no event-loop read.
 * Optionally a non-blocking fast-path handler answers what it can on the event loop (a cache hit
 * from memory), in the request's turn on its connection, and leaves the rest to the executor.
 * A handler that is a {@link StreamedRequestHandler} receives the bodies of the requests it chooses
 * as a stream instead (a router ahead of the aggregator passes them by it; see {@link BodyStream}):
 * pieces handed to the executor in order, reads paused while too much of a body waits for it.
 *
 * <p>Buffer ownership: the aggregated request is retained by the dispatcher when handed to the
 * executor and released there in a {@code finally}; the handler's response is written (Netty
 * releases it) or released if the channel is gone.
 *
 * <p>Thread-safe: {@link #start} once, {@link #close} from any thread.
 */
public final class HttpServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HttpServer.class);
    /**
     * Request header the server sets (overwriting whatever the client sent) to the IP address of
     * the connection's peer, so a {@link RequestHandler} can tell where a request came from.
     */
    public static final String PEER_HEADER = "X-Hayloft-Peer";

    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final Channel channel;
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Bytes read from and written to this server's sockets (TLS records included), for {@link #bindMetrics}. */
    private final java.util.concurrent.atomic.LongAdder receivedBytes = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.LongAdder sentBytes = new java.util.concurrent.atomic.LongAdder();
    private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
    /** Set while a request of the channel is being processed: idle time then is ours, not the client's. */
    private static final io.netty.util.AttributeKey<Boolean> BUSY = io.netty.util.AttributeKey.valueOf("hayloft.busy");

    private HttpServer(String host, int port, HttpLimits limits, RequestHandler handler, ExecutorService executor,
                       int ioThreads, io.netty.handler.ssl.SslContext tls, RequestHandler eventLoopHandler)
            throws InterruptedException {
        Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(handler, "handler");
        Objects.requireNonNull(executor, "executor");
        boss = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        workers = new MultiThreadIoEventLoopGroup(ioThreads, NioIoHandler.newFactory());
        try {
            ServerBootstrap b = new ServerBootstrap()
                    .group(boss, workers)
                    .channel(NioServerSocketChannel.class)
                    .option(ChannelOption.SO_BACKLOG, 1024)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ChannelPipeline p = ch.pipeline();
                            p.addLast(new ByteCounter(receivedBytes, sentBytes));
                            if (tls != null) {
                                p.addLast(new PlainHttpRefusal());
                                p.addLast(tls.newHandler(ch.alloc()));
                            }
                            p.addLast(new IdleStateHandler(limits.idleTimeoutMillis(), 0, 0, TimeUnit.MILLISECONDS));
                            p.addLast(new HttpServerCodec(limits.maxInitialLineLength(), limits.maxHeaderSize(), 64 * 1024));
                            p.addLast(new PartialTracker());
                            if (handler instanceof StreamedRequestHandler streamed) {
                                p.addLast(new StreamRouter(streamed));
                            }
                            p.addLast(new BoundedAggregator(limits.maxBodyBytes()));
                            p.addLast(new Dispatcher(handler, executor, limits.maxConcurrentRequests(), eventLoopHandler));
                        }
                    });
            channel = b.bind(host, port).sync().channel();
        } catch (RuntimeException | InterruptedException e) {
            boss.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            workers.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            throw e;
        }
    }

    /**
     * Binds {@code host:port} (port 0 picks a free one) and starts serving.
     *
     * @param ioThreads event loop threads; 0 means Netty's default (2 × cores)
     */
    public static HttpServer start(String host, int port, HttpLimits limits, RequestHandler handler,
                                   ExecutorService executor, int ioThreads) throws InterruptedException {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be in 0..65535, got " + port);
        }
        return new HttpServer(host, port, limits, handler, executor, ioThreads, null, null);
    }

    /**
     * As {@link #start(String, int, HttpLimits, RequestHandler, ExecutorService, int)}, serving HTTPS
     * when {@code tls} is not null (Netty's {@code SslHandler} first in every channel; see {@link Tls}).
     */
    public static HttpServer start(String host, int port, HttpLimits limits, RequestHandler handler,
                                   ExecutorService executor, int ioThreads, io.netty.handler.ssl.SslContext tls)
            throws InterruptedException {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be in 0..65535, got " + port);
        }
        return new HttpServer(host, port, limits, handler, executor, ioThreads, tls, null);
    }

    /**
     * As {@link #start(String, int, HttpLimits, RequestHandler, ExecutorService, int, io.netty.handler.ssl.SslContext)},
     * with a fast path: {@code eventLoopHandler} is offered each request first, <em>on the event
     * loop</em>, in its turn on the connection; it must never block (no disk, no network, no
     * contended locks) and returns a response for requests it can answer from memory (a cache hit)
     * or null to hand the request to {@code handler} on the executor as usual. It must not release
     * the request.
     *
     * @param tls null for plain HTTP
     */
    public static HttpServer start(String host, int port, HttpLimits limits, RequestHandler handler,
                                   ExecutorService executor, int ioThreads, io.netty.handler.ssl.SslContext tls,
                                   RequestHandler eventLoopHandler) throws InterruptedException {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be in 0..65535, got " + port);
        }
        return new HttpServer(host, port, limits, handler, executor, ioThreads, tls,
                Objects.requireNonNull(eventLoopHandler, "eventLoopHandler"));
    }

    /** The port actually bound. */
    public int port() {
        return ((InetSocketAddress) channel.localAddress()).getPort();
    }

    /** Bytes received on this server's sockets since it started (request heads and bodies, TLS records included). */
    public long receivedBytes() {
        return receivedBytes.sum();
    }

    /** Bytes sent on this server's sockets since it started. */
    public long sentBytes() {
        return sentBytes.sum();
    }

    /**
     * Registers this server's socket byte counters in {@code registry}: {@code hayloft_http_received_bytes_total}
     * and {@code hayloft_http_sent_bytes_total} on its {@code /metrics}.
     */
    public HttpServer bindMetrics(io.micrometer.core.instrument.MeterRegistry registry) {
        io.micrometer.core.instrument.FunctionCounter.builder("hayloft_http_received_bytes", receivedBytes,
                java.util.concurrent.atomic.LongAdder::sum).description("bytes received on the server's sockets")
                .baseUnit("bytes").register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("hayloft_http_sent_bytes", sentBytes,
                java.util.concurrent.atomic.LongAdder::sum).description("bytes sent on the server's sockets")
                .baseUnit("bytes").register(registry);
        return this;
    }

    /** First handler of every channel: counts the bytes read from and written to the socket. Stateless apart from the adders. */
    private static final class ByteCounter extends io.netty.channel.ChannelDuplexHandler {
        private final java.util.concurrent.atomic.LongAdder in;
        private final java.util.concurrent.atomic.LongAdder out;

        ByteCounter(java.util.concurrent.atomic.LongAdder in, java.util.concurrent.atomic.LongAdder out) {
            this.in = in;
            this.out = out;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof io.netty.buffer.ByteBuf b) {
                in.add(b.readableBytes());
            }
            ctx.fireChannelRead(msg);
        }

        @Override
        public void write(ChannelHandlerContext ctx, Object msg, io.netty.channel.ChannelPromise promise) {
            if (msg instanceof io.netty.buffer.ByteBuf b) {
                out.add(b.readableBytes());
            } else if (msg instanceof io.netty.buffer.ByteBufHolder h) {
                out.add(h.content().readableBytes());
            } else if (msg instanceof io.netty.channel.FileRegion f) {
                out.add(f.count() - f.transferred());
            }
            ctx.write(msg, promise);
        }
    }

    /** Requests being processed right now. */
    public int inFlight() {
        return inFlight.get();
    }

    /** Stops accepting, closes the listener and the event loops. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        channel.close().syncUninterruptibly();
        boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
    }

    static void sendAndClose(ChannelHandlerContext ctx, FullHttpResponse response) {
        sendAndClose(ctx, response, null);
    }

    static void sendAndClose(ChannelHandlerContext ctx, FullHttpResponse response, java.util.concurrent.Executor disk) {
        write(ctx, HttpResponses.closing(response), disk).addListener(ChannelFutureListener.CLOSE);
    }

    /** Writes and flushes a response that is not streamed (error answers written on the event loop). */
    static io.netty.channel.ChannelFuture write(ChannelHandlerContext ctx, FullHttpResponse response) {
        return write(ctx, response, null);
    }

    /**
     * Writes and flushes a response: a {@link StreamedResponse} as its head, then its body one chunk
     * at a time, each chunk read on {@code disk} (the blocking executor: a file read never runs on the
     * event loop) once the previous one has been written to the socket, so a connection holds one
     * chunk in memory; the body is closed when done or failed. Any other response as it is.
     */
    static io.netty.channel.ChannelFuture write(ChannelHandlerContext ctx, FullHttpResponse response,
                                                java.util.concurrent.Executor disk) {
        if (response instanceof StreamedResponse streamed) {
            Objects.requireNonNull(disk, "a streamed response needs the blocking executor");
            io.netty.channel.ChannelPromise done = ctx.newPromise();
            ctx.write(new io.netty.handler.codec.http.DefaultHttpResponse(streamed.protocolVersion(), streamed.status(),
                    streamed.headers()));
            ReferenceCountUtil.release(streamed); // its own content is empty; the body is pumped below
            pump(ctx, streamed, disk, done);
            return done;
        }
        return ctx.writeAndFlush(response);
    }

    /** Reads the next chunk of {@code streamed} on {@code disk}, writes it, and goes on when the socket took it. */
    private static void pump(ChannelHandlerContext ctx, StreamedResponse streamed, java.util.concurrent.Executor disk,
                             io.netty.channel.ChannelPromise done) {
        try {
            disk.execute(() -> {
                io.netty.buffer.ByteBuf chunk;
                try {
                    chunk = streamed.body().isEndOfInput() ? null : streamed.body().readChunk(ctx.alloc());
                } catch (Exception e) {
                    finish(ctx, streamed, done, e);
                    return;
                }
                if (chunk == null) {
                    ctx.writeAndFlush(io.netty.handler.codec.http.LastHttpContent.EMPTY_LAST_CONTENT)
                            .addListener(f -> finish(ctx, streamed, done, f.cause()));
                    return;
                }
                ctx.writeAndFlush(new io.netty.handler.codec.http.DefaultHttpContent(chunk)).addListener(f -> {
                    if (f.isSuccess()) {
                        pump(ctx, streamed, disk, done);
                    } else {
                        finish(ctx, streamed, done, f.cause());
                    }
                });
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            finish(ctx, streamed, done, e); // the server is closing
        }
    }

    private static void finish(ChannelHandlerContext ctx, StreamedResponse streamed, io.netty.channel.ChannelPromise done,
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

    /**
     * First handler of a TLS channel: looks at the first bytes of the connection and, when they are
     * not a TLS record (a plain-HTTP client on an HTTPS port), answers a plain-HTTP 400 with the JSON
     * error {@link CommonErrors#TLS_REQUIRED} and closes; otherwise removes itself, handing the
     * bytes read so far to the {@code SslHandler} behind it. Touched only on the channel's event loop.
     */
    static final class PlainHttpRefusal extends io.netty.handler.codec.ByteToMessageDecoder {
        /** A TLS record header: type, version (2 bytes), length (2 bytes). */
        private static final int RECORD_HEADER = 5;
        static final String MESSAGE = "this listener speaks HTTPS (TLS): use https://host:port";

        @Override
        protected void decode(ChannelHandlerContext ctx, io.netty.buffer.ByteBuf in, java.util.List<Object> out) {
            if (in.readableBytes() < RECORD_HEADER) {
                return;
            }
            if (io.netty.handler.ssl.SslHandler.isEncrypted(in, false)) {
                ctx.pipeline().remove(this); // the cumulated bytes go on to the SslHandler
                return;
            }
            in.skipBytes(in.readableBytes());
            ctx.writeAndFlush(plainResponse(HttpResponses.errorBytes(CommonErrors.TLS_REQUIRED, MESSAGE)))
                    .addListener(ChannelFutureListener.CLOSE);
        }

        /** A whole HTTP/1.1 400 response as bytes: there is no HTTP encoder ahead of this handler. */
        static io.netty.buffer.ByteBuf plainResponse(byte[] json) {
            String head = "HTTP/1.1 400 Bad Request\r\n"
                    + "Content-Type: application/json\r\n"
                    + "Content-Length: " + json.length + "\r\n"
                    + "Connection: close\r\n\r\n";
            return io.netty.buffer.Unpooled.wrappedBuffer(head.getBytes(java.nio.charset.StandardCharsets.US_ASCII), json);
        }
    }

    /** Knows whether a request is half received, to answer 408 rather than just close on idle. */
    private static final class PartialTracker extends ChannelInboundHandlerAdapter {
        private boolean partial;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof HttpRequest) {
                partial = true;
            }
            if (msg instanceof LastHttpContent) {
                partial = false;
            }
            ctx.fireChannelRead(msg);
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            if (evt instanceof IdleStateEvent) {
                if (Boolean.TRUE.equals(ctx.channel().attr(BUSY).get())) {
                    return;
                }
                if (partial) {
                    sendAndClose(ctx, HttpResponses.error(CommonErrors.REQUEST_TIMEOUT,
                            "request not completed within the idle timeout"));
                } else {
                    ctx.close();
                }
                return;
            }
            if (evt instanceof io.netty.channel.socket.ChannelInputShutdownEvent && partial) {
                sendAndClose(ctx, HttpResponses.error(CommonErrors.BAD_REQUEST,
                        "connection closed before the request body was complete"));
                return;
            }
            ctx.fireUserEventTriggered(evt);
        }
    }

    /**
     * An aggregator whose 413 carries a JSON error body. The connection is not closed at once: a
     * client still sending the body would get a reset and might never read the 413. The rest of the
     * body is read and dropped, and the connection closed when it ends or after
     * {@link #DRAIN_LIMIT} more bytes (or by the idle timeout, for a client that stops sending).
     */
    private static final class BoundedAggregator extends HttpObjectAggregator {
        /** Most bytes of an oversized body read and dropped after the 413. */
        static final long DRAIN_LIMIT = 64L << 20;
        private final int max;
        private boolean draining;
        private long drained;

        BoundedAggregator(int max) {
            super(max);
            this.max = max;
        }

        @Override
        protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
            ctx.writeAndFlush(HttpResponses.closing(HttpResponses.error(CommonErrors.BODY_TOO_LARGE,
                    "request body exceeds the limit of " + max + " bytes")));
            draining = true;
        }

        /**
         * The answer to {@code Expect: 100-continue}: Netty's own refusal of an oversized or unknown
         * expectation has an empty body; ours names the problem in JSON like every other error.
         */
        @Override
        protected Object newContinueResponse(HttpMessage start, int maxContentLength, io.netty.channel.ChannelPipeline pipeline) {
            Object r = super.newContinueResponse(start, maxContentLength, pipeline);
            if (r instanceof io.netty.handler.codec.http.HttpResponse h && h.status().code() >= 400) {
                FullHttpResponse json = h.status().code() == 413
                        ? HttpResponses.error(CommonErrors.BODY_TOO_LARGE, "request body of "
                                + HttpUtil.getContentLength(start, -1L) + " bytes exceeds the limit of " + max + " bytes")
                        : HttpResponses.error(CommonErrors.BAD_REQUEST, "unsupported expectation: "
                                + start.headers().get(io.netty.handler.codec.http.HttpHeaderNames.EXPECT));
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
                if (msg instanceof io.netty.handler.codec.http.HttpContent c) {
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

    /**
     * A streamed request's head or a piece of its body, as the {@link StreamRouter} passes it on: not
     * an {@code HttpObject}, so the aggregator lets it by. Reference-counted as the body piece it holds
     * (a head holds no buffer).
     */
    static final class StreamPart implements io.netty.util.ReferenceCounted {
        final HttpRequest head;
        final io.netty.handler.codec.http.HttpContent content;

        private StreamPart(HttpRequest head, io.netty.handler.codec.http.HttpContent content) {
            this.head = head;
            this.content = content;
        }

        @Override
        public int refCnt() {
            return content == null ? 1 : content.refCnt();
        }

        @Override
        public StreamPart retain() {
            if (content != null) {
                content.retain();
            }
            return this;
        }

        @Override
        public StreamPart retain(int increment) {
            if (content != null) {
                content.retain(increment);
            }
            return this;
        }

        @Override
        public StreamPart touch() {
            return this;
        }

        @Override
        public StreamPart touch(Object hint) {
            if (content != null) {
                content.touch(hint);
            }
            return this;
        }

        @Override
        public boolean release() {
            return content != null && content.release();
        }

        @Override
        public boolean release(int decrement) {
            return content != null && content.release(decrement);
        }
    }

    /**
     * Ahead of the aggregator: wraps the head and body pieces of each request the
     * {@link StreamedRequestHandler} {@linkplain StreamedRequestHandler#streamsBody chooses} in
     * {@link StreamPart}s, which the aggregator lets by; every other message goes on as it came.
     * Touched only on the channel's event loop.
     */
    private static final class StreamRouter extends ChannelInboundHandlerAdapter {
        private final StreamedRequestHandler handler;
        private boolean routing;

        StreamRouter(StreamedRequestHandler handler) {
            this.handler = handler;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof HttpRequest head && !(msg instanceof FullHttpRequest)) {
                routing = head.decoderResult().isSuccess() && malformedUri(head.uri()) == null && wants(head);
                if (routing) {
                    ctx.fireChannelRead(new StreamPart(head, null));
                    return;
                }
            } else if (routing && msg instanceof io.netty.handler.codec.http.HttpContent c) {
                if (c instanceof LastHttpContent || c.decoderResult().isFailure()) {
                    routing = false;
                }
                ctx.fireChannelRead(new StreamPart(null, c));
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

    /**
     * Hands requests to the executor one at a time per connection. Requests that the codec decoded
     * from the same read while one is in flight (pipelining) wait in {@code queue}, with the body
     * pieces of queued streamed requests; all state is touched only on the channel's event loop.
     * A streamed request ({@link StreamPart}) is busy from its head to its answer: its body pieces go
     * to its {@link BodyStream} as they arrive, reads paused while the stream says so and after the
     * last piece until the answer is written, as for an aggregated request.
     */
    private final class Dispatcher extends ChannelInboundHandlerAdapter implements BodyStream.Owner {
        private final RequestHandler handler;
        private final ExecutorService executor;
        private final int maxConcurrent;
        /** FullHttpRequests and StreamParts, in the order they arrived. */
        private final java.util.ArrayDeque<Object> queue = new java.util.ArrayDeque<>();
        private boolean busy;
        /** The streamed request of this connection being received or answered, or null. */
        private BodyStream stream;
        private final RequestHandler eventLoopHandler; // may be null

        Dispatcher(RequestHandler handler, ExecutorService executor, int maxConcurrent, RequestHandler eventLoopHandler) {
            this.handler = handler;
            this.executor = executor;
            this.maxConcurrent = maxConcurrent;
            this.eventLoopHandler = eventLoopHandler;
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
                sendAndClose(ctx, decodeError(cause));
                return;
            }
            String badUri = malformedUri(request.uri());
            if (badUri != null) {
                request.release();
                sendAndClose(ctx, HttpResponses.error(CommonErrors.BAD_REQUEST, badUri));
                return;
            }
            if (inFlight.incrementAndGet() > maxConcurrent) {
                inFlight.decrementAndGet();
                request.release();
                sendAndClose(ctx, HttpResponses.error(CommonErrors.OVERLOADED,
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
                sendAndClose(ctx, HttpResponses.error(CommonErrors.OVERLOADED, "server is shutting down"));
            }
        }

        /** A streamed request's head (decoded, its URI checked by the router): its body goes to a new {@link BodyStream}. */
        private void startStream(ChannelHandlerContext ctx, HttpRequest head) {
            busy = true;
            setPeer(ctx, head);
            stream = new BodyStream(ctx, head, (StreamedRequestHandler) handler, executor, this, inFlight);
            String expect = head.headers().get(io.netty.handler.codec.http.HttpHeaderNames.EXPECT);
            if (expect != null && !HttpUtil.is100ContinueExpected(head)) {
                FullHttpResponse r = HttpResponses.error(CommonErrors.BAD_REQUEST, "unsupported expectation: " + expect);
                r.setStatus(io.netty.handler.codec.http.HttpResponseStatus.EXPECTATION_FAILED);
                stream.refuseAtStart(r);
            } else if (inFlight.incrementAndGet() > maxConcurrent) {
                inFlight.decrementAndGet();
                stream.refuseAtStart(HttpResponses.error(CommonErrors.OVERLOADED,
                        "more than " + maxConcurrent + " requests in flight; retry later"));
            } else {
                stream.start();
            }
            updateReads(ctx);
        }

        private void setPeer(ChannelHandlerContext ctx, HttpRequest request) {
            if (ctx.channel().remoteAddress() instanceof InetSocketAddress peer && peer.getAddress() != null) {
                request.headers().set(PEER_HEADER, peer.getAddress().getHostAddress());
            } else {
                request.headers().remove(PEER_HEADER);
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
                discard(response);
                return;
            }
            if (s.keepAlive) {
                HttpUtil.setKeepAlive(response, true);
                write(ctx, response, executor).addListener(f -> done(ctx));
            } else {
                sendAndClose(ctx, response, executor);
            }
        }

        @Override
        public void refused(ChannelHandlerContext ctx, BodyStream s, FullHttpResponse response) {
            if (!ctx.channel().isActive()) {
                discard(response);
                return;
            }
            if (s.lastReceived) { // the whole body was read: the connection may go on
                answered(ctx, s, response);
                return;
            }
            s.refused = true;
            write(ctx, HttpResponses.closing(response)).addListener(f -> s.answerWritten(f.isSuccess()));
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
                write(ctx, response, executor); // written in order: we are on the event loop, in this request's turn
                done(ctx);
            } else {
                sendAndClose(ctx, response, executor);
            }
            return true;
        }

        private void process(ChannelHandlerContext ctx, FullHttpRequest request, boolean keepAlive) {
            FullHttpResponse response;
            try {
                response = handler.handle(request);
            } catch (Throwable e) {
                response = errorResponse(request, e);
            } finally {
                request.release();
                inFlight.decrementAndGet();
            }
            if (!ctx.channel().isActive()) {
                discard(response);
                return;
            }
            if (keepAlive) {
                HttpUtil.setKeepAlive(response, true);
                write(ctx, response, executor).addListener(f -> done(ctx));
            } else {
                sendAndClose(ctx, response, executor);
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

    /**
     * The error answer for a request that failed: an {@link ApiException} as its JSON error, an I/O
     * failure as 500 {@code IO_ERROR}, anything else as 500 {@code INTERNAL} (both logged).
     */
    static FullHttpResponse errorResponse(HttpRequest request, Throwable e) {
        if (e instanceof ApiException api) {
            return HttpResponses.error(api);
        }
        if (e instanceof IOException || e instanceof UncheckedIOException) {
            LOG.warn("I/O error serving {} {}", request.method(), request.uri(), e);
            return HttpResponses.error(CommonErrors.IO_ERROR, "I/O error: " + e.getMessage());
        }
        LOG.error("internal error serving {} {}", request.method(), request.uri(), e);
        return HttpResponses.error(CommonErrors.INTERNAL, "internal error: " + e);
    }

    /**
     * Why {@code uri} cannot be decoded (a bad percent-escape in its path or query), or null: checked
     * once here, so that no handler meets an undecodable URI.
     */
    static String malformedUri(String uri) {
        if (uri.indexOf('%') < 0) {
            return null;
        }
        try {
            io.netty.handler.codec.http.QueryStringDecoder q = new io.netty.handler.codec.http.QueryStringDecoder(uri);
            q.path();
            q.parameters();
            return null;
        } catch (IllegalArgumentException e) {
            return "malformed percent-escape in the request URI: " + e.getMessage();
        }
    }

    static FullHttpResponse decodeError(Throwable cause) {
        if (cause instanceof TooLongHttpLineException) {
            return HttpResponses.error(CommonErrors.URI_TOO_LONG, "request line too long: " + cause.getMessage());
        }
        if (cause instanceof TooLongHttpHeaderException) {
            return HttpResponses.error(CommonErrors.HEADER_TOO_LARGE, "header block too large: " + cause.getMessage());
        }
        if (cause instanceof TooLongFrameException) {
            return HttpResponses.error(CommonErrors.BAD_REQUEST, "request too long: " + cause.getMessage());
        }
        return HttpResponses.error(CommonErrors.BAD_REQUEST, "malformed HTTP request: " + cause);
    }
}
