package io.hayloft.serverkit.http;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.timeout.IdleStateHandler;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * A small Netty HTTP/1.1 server bootstrap shared by the Hayloft servers. Each accepted channel gets
 * this pipeline ({@link #assemble}), one handler class each:
 * <ol>
 *   <li>{@link ByteCounter}: counts the bytes on the socket;</li>
 *   <li>with TLS, {@link PlainHttpRefusal} (a first-bytes check: plain HTTP is answered 400
 *       {@code TLS_REQUIRED}) and Netty's {@code SslHandler};</li>
 *   <li>Netty's {@link IdleStateHandler}, read-idle after {@link HttpLimits#idleTimeoutMillis};</li>
 *   <li>Netty's {@link HttpServerCodec}, bounded by {@link HttpLimits} (414/431 JSON on a long line
 *       or header block, answered by the dispatcher);</li>
 *   <li>{@link PartialTracker}: 408 JSON when a partial request stalls, 400 when the client
 *       half-closes in the middle of one;</li>
 *   <li>when the handler is a {@link StreamedRequestHandler}, {@link StreamRouter}: the bodies it
 *       chooses pass the aggregator by as a stream (see {@link BodyStream});</li>
 *   <li>{@link BoundedAggregator}: whole bodies up to the body limit (413 JSON over it);</li>
 *   <li>{@link Dispatcher}: hands each complete request to the {@link RequestHandler} on the given
 *       blocking executor, so disk I/O never runs on an event loop, and writes its answer
 *       ({@link ResponseWriter}), also one the handler gives later as a future without holding a
 *       thread meanwhile ({@link RequestHandler#handleAsync}).</li>
 * </ol>
 * One request per connection is processed at a time (reads pause until the response is written),
 * so pipelined requests are answered in order. Over {@code maxConcurrentRequests} in flight, 503.
 * A {@link StreamedResponse}'s body is read a chunk at a time on the executor and written as the
 * socket takes each chunk, so a large file costs one chunk per connection and no event-loop read.
 * Optionally a non-blocking fast-path handler answers what it can on the event loop (a cache hit
 * from memory), in the request's turn on its connection, and leaves the rest to the executor.
 *
 * <p>Buffer ownership: the aggregated request is handed by the dispatcher to the
 * executor and released once the handler's answer is in: when it returned, or, for an answer the
 * handler gives as a future ({@link RequestHandler#handleAsync}), when that completes; the
 * handler's response is written (Netty releases it) or released if the channel is gone.
 *
 * <p>Thread-safe: {@link #start} once, {@link #close} from any thread.
 */
public final class HttpServer implements AutoCloseable {
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
    private final LongAdder receivedBytes = new LongAdder();
    private final LongAdder sentBytes = new LongAdder();
    private final AtomicBoolean closed = new AtomicBoolean();

    private HttpServer(String host, int port, HttpLimits limits, RequestHandler handler, ExecutorService executor,
                       int ioThreads, SslContext tls, RequestHandler eventLoopHandler, ErrorRenderer errors)
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
                            assemble(ch, tls, limits, handler, executor, eventLoopHandler, receivedBytes, sentBytes,
                                    inFlight, errors);
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
     * Builds the pipeline of one accepted channel (see the class comment for its order). Package-private
     * so that tests build the very same pipeline on an {@code EmbeddedChannel}.
     *
     * @param tls              null for plain HTTP
     * @param eventLoopHandler the fast path, or null
     * @param received         the server's total of bytes read, shared by its channels
     * @param sent             the server's total of bytes written, shared by its channels
     * @param inFlight         the server's count of requests in flight, shared by its channels
     */
    static void assemble(Channel ch, SslContext tls, HttpLimits limits, RequestHandler handler, ExecutorService executor,
                         RequestHandler eventLoopHandler, LongAdder received, LongAdder sent, AtomicInteger inFlight) {
        assemble(ch, tls, limits, handler, executor, eventLoopHandler, received, sent, inFlight, ErrorRenderer.JSON);
    }

    /** As above, the pipeline's own error answers rendered by {@code errors}. */
    static void assemble(Channel ch, SslContext tls, HttpLimits limits, RequestHandler handler, ExecutorService executor,
                         RequestHandler eventLoopHandler, LongAdder received, LongAdder sent, AtomicInteger inFlight,
                         ErrorRenderer errors) {
        if (errors != ErrorRenderer.JSON) {
            ch.attr(RequestErrors.RENDERER).set(errors);
        }
        ChannelPipeline p = ch.pipeline();
        p.addLast(new ByteCounter(received, sent));
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
        p.addLast(new Dispatcher(handler, executor, limits.maxConcurrentRequests(), eventLoopHandler, inFlight));
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
        return new HttpServer(host, port, limits, handler, executor, ioThreads, null, null, ErrorRenderer.JSON);
    }

    /**
     * As {@link #start(String, int, HttpLimits, RequestHandler, ExecutorService, int)}, serving HTTPS
     * when {@code tls} is not null (Netty's {@code SslHandler} first in every channel; see {@link Tls}).
     */
    public static HttpServer start(String host, int port, HttpLimits limits, RequestHandler handler,
                                   ExecutorService executor, int ioThreads, SslContext tls)
            throws InterruptedException {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be in 0..65535, got " + port);
        }
        return new HttpServer(host, port, limits, handler, executor, ioThreads, tls, null, ErrorRenderer.JSON);
    }

    /**
     * As {@link #start(String, int, HttpLimits, RequestHandler, ExecutorService, int, SslContext)},
     * with a fast path: {@code eventLoopHandler} is offered each request first, <em>on the event
     * loop</em>, in its turn on the connection; it must never block (no disk, no network, no
     * contended locks) and returns a response for requests it can answer from memory (a cache hit)
     * or null to hand the request to {@code handler} on the executor as usual. It must not release
     * the request.
     *
     * @param tls null for plain HTTP
     */
    public static HttpServer start(String host, int port, HttpLimits limits, RequestHandler handler,
                                   ExecutorService executor, int ioThreads, SslContext tls,
                                   RequestHandler eventLoopHandler) throws InterruptedException {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be in 0..65535, got " + port);
        }
        return new HttpServer(host, port, limits, handler, executor, ioThreads, tls,
                Objects.requireNonNull(eventLoopHandler, "eventLoopHandler"), ErrorRenderer.JSON);
    }

    /**
     * As {@link #start(String, int, HttpLimits, RequestHandler, ExecutorService, int, SslContext)}, the
     * errors the pipeline answers on its own (and what the handler throws) rendered by {@code errors}
     * instead of the JSON of {@link ErrorRenderer#JSON}; {@code eventLoopHandler} may be null (no fast path).
     */
    public static HttpServer start(String host, int port, HttpLimits limits, RequestHandler handler,
                                   ExecutorService executor, int ioThreads, SslContext tls,
                                   RequestHandler eventLoopHandler, ErrorRenderer errors) throws InterruptedException {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be in 0..65535, got " + port);
        }
        return new HttpServer(host, port, limits, handler, executor, ioThreads, tls, eventLoopHandler,
                Objects.requireNonNull(errors, "errors"));
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
    public HttpServer bindMetrics(MeterRegistry registry) {
        FunctionCounter.builder("hayloft_http_received_bytes", receivedBytes, LongAdder::sum)
                .description("bytes received on the server's sockets").baseUnit("bytes").register(registry);
        FunctionCounter.builder("hayloft_http_sent_bytes", sentBytes, LongAdder::sum)
                .description("bytes sent on the server's sockets").baseUnit("bytes").register(registry);
        return this;
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
}
