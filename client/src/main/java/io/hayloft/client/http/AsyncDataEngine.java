package io.hayloft.client.http;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import org.apache.hc.client5.http.async.methods.SimpleHttpResponse;
import org.apache.hc.client5.http.async.methods.SimpleRequestBuilder;
import org.apache.hc.client5.http.async.methods.SimpleRequestProducer;
import org.apache.hc.client5.http.async.methods.SimpleResponseConsumer;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.config.TlsConfig;
import org.apache.hc.client5.http.impl.async.CloseableHttpAsyncClient;
import org.apache.hc.client5.http.impl.async.HttpAsyncClients;
import org.apache.hc.client5.http.impl.nio.PoolingAsyncClientConnectionManagerBuilder;
import org.apache.hc.client5.http.ssl.DefaultClientTlsStrategy;
import org.apache.hc.core5.concurrent.FutureCallback;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.EntityDetails;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.nio.AsyncResponseConsumer;
import org.apache.hc.core5.http.nio.CapacityChannel;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.http2.HttpVersionPolicy;
import org.apache.hc.core5.reactor.IOReactorConfig;
import org.apache.hc.core5.util.Timeout;

/**
 * The engine of the client's data writes without a blocked thread ({@link HttpTransport#exchangeAsync}
 * with PUT, POST or DELETE: needle writes, multi-writes and deletes of the store API), and of nothing
 * else: Apache HttpClient 5's asynchronous client, HTTP/1.1 on pooled keep-alive
 * connections (up to {@value DataEngine#PER_ROUTE} per server), driven by a few I/O reactor threads
 * ({@code hayloft-http-io-N}, daemons) instead of one blocked thread per request. A put writes to
 * three replicas at once: with the blocking engine that took three threads each woken for its answer;
 * here the three requests and their answers share the reactor, and the future completes on a reactor
 * thread (continuations must not block: the client's write path does not).
 *
 * <p>Timeouts, TLS (the transport's {@link SSLContext}, hostname verified), no cookies, no redirects,
 * and the one retry of an idempotent request on a pooled connection the server had closed are those of
 * {@link DataEngine}. Engines are shared by every transport of the process with the same TLS context
 * and timeouts (a transport is never closed, and an application normally has one), so the reactor
 * threads are started once, on the first write.
 *
 * <p>Thread-safe.
 */
final class AsyncDataEngine {
    private static final AtomicInteger THREADS = new AtomicInteger();
    private static final Map<Key, AsyncDataEngine> ENGINES = new ConcurrentHashMap<>();

    /** Reactor threads: one per core, at most 4 (the data calls are small; the servers do the work). */
    static final int IO_THREADS = Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors()));

    private record Key(SSLContext ssl, Duration connect, Duration request) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && k.ssl == ssl && k.connect.equals(connect) && k.request.equals(request);
        }

        @Override
        public int hashCode() {
            return Objects.hash(System.identityHashCode(ssl), connect, request);
        }
    }

    private final CloseableHttpAsyncClient client;

    /** The process's engine for these settings, started on first use. */
    static AsyncDataEngine of(SSLContext ssl, Duration connectTimeout, Duration requestTimeout) {
        return ENGINES.computeIfAbsent(new Key(ssl, connectTimeout, requestTimeout),
                k -> new AsyncDataEngine(k.ssl(), k.connect(), k.request()));
    }

    private AsyncDataEngine(SSLContext ssl, Duration connectTimeout, Duration requestTimeout) {
        Timeout response = Timeout.of(requestTimeout);
        PoolingAsyncClientConnectionManagerBuilder pb = PoolingAsyncClientConnectionManagerBuilder.create()
                .setMaxConnPerRoute(DataEngine.PER_ROUTE)
                .setMaxConnTotal(DataEngine.TOTAL)
                .setDefaultTlsConfig(TlsConfig.custom().setVersionPolicy(HttpVersionPolicy.FORCE_HTTP_1).build())
                .setDefaultConnectionConfig(DataEngine.connectionConfig(connectTimeout, response));
        if (ssl != null) {
            pb.setTlsStrategy(new DefaultClientTlsStrategy(ssl));
        }
        this.client = HttpAsyncClients.custom()
                .setConnectionManager(pb.build())
                .setVersionPolicy(HttpVersionPolicy.FORCE_HTTP_1)
                .setIOReactorConfig(IOReactorConfig.custom()
                        .setIoThreadCount(IO_THREADS)
                        .setTcpNoDelay(true)
                        .setSoTimeout(response)
                        .build())
                .setThreadFactory(r -> {
                    Thread t = new Thread(r, "hayloft-http-io-" + THREADS.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                })
                .setRetryStrategy(new DataEngine.StaleConnectionRetry())
                .disableCookieManagement()
                .disableRedirectHandling()
                .disableAuthCaching()
                .disableConnectionState()
                .setDefaultRequestConfig(RequestConfig.custom()
                        .setResponseTimeout(response)
                        .setConnectionRequestTimeout(response)
                        .build())
                .build();
        client.start();
    }

    /** Called with the answer (status, headers, whole body) or the failure, on a reactor thread. */
    interface Done {
        void answered(SimpleHttpResponse response);

        /** @param answerStarted whether the answer's status line and headers had arrived (a truncated body) */
        void failed(Exception e, boolean answerStarted);
    }

    /** Sends {@code method host path} with {@code headers} and an optional body; tells {@code done} on a reactor thread. */
    void execute(String method, HttpHost host, String path, Map<String, String> headers, byte[] body, Done done) {
        SimpleRequestBuilder b = SimpleRequestBuilder.create(method).setHttpHost(host).setPath(path);
        if (headers != null) {
            headers.forEach(b::addHeader);
        }
        if (body != null) {
            b.setBody(body, ContentType.APPLICATION_OCTET_STREAM);
        }
        Marked consumer = new Marked(SimpleResponseConsumer.create());
        client.execute(SimpleRequestProducer.create(b.build()), consumer, null,
                new FutureCallback<>() {
                    @Override
                    public void completed(SimpleHttpResponse result) {
                        done.answered(result);
                    }

                    @Override
                    public void failed(Exception ex) {
                        done.failed(ex, consumer.started);
                    }

                    @Override
                    public void cancelled() {
                        done.failed(new InterruptedIOException("request cancelled"), consumer.started);
                    }
                });
    }

    /** The response consumer, noting when the answer's head arrived (for {@link Failures}: truncated answer or broken connection). */
    private static final class Marked implements AsyncResponseConsumer<SimpleHttpResponse> {
        private final AsyncResponseConsumer<SimpleHttpResponse> inner;
        volatile boolean started;

        Marked(AsyncResponseConsumer<SimpleHttpResponse> inner) {
            this.inner = inner;
        }

        @Override
        public void consumeResponse(HttpResponse response, EntityDetails entity, HttpContext context,
                                    FutureCallback<SimpleHttpResponse> callback) throws HttpException, IOException {
            started = true;
            inner.consumeResponse(response, entity, context, callback);
        }

        @Override
        public void informationResponse(HttpResponse response, HttpContext context) throws HttpException, IOException {
            inner.informationResponse(response, context);
        }

        @Override
        public void failed(Exception cause) {
            inner.failed(cause);
        }

        @Override
        public void updateCapacity(CapacityChannel capacityChannel) throws IOException {
            inner.updateCapacity(capacityChannel);
        }

        @Override
        public void consume(ByteBuffer src) throws IOException {
            inner.consume(src);
        }

        @Override
        public void streamEnd(List<? extends Header> trailers) throws HttpException, IOException {
            inner.streamEnd(trailers);
        }

        @Override
        public void releaseResources() {
            inner.releaseResources();
        }
    }
}
