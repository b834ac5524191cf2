package io.hayloft.client.http;

import io.hayloft.client.RemoteException;
import java.io.Closeable;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.SocketException;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntPredicate;
import javax.net.ssl.SSLContext;
import org.apache.hc.client5.http.HttpRequestRetryStrategy;
import org.apache.hc.client5.http.async.methods.SimpleHttpResponse;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.ManagedHttpClientConnectionFactory;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.client5.http.ssl.DefaultClientTlsStrategy;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.NoHttpResponseException;
import org.apache.hc.core5.http.impl.io.DefaultHttpResponseParserFactory;
import org.apache.hc.core5.http.io.SocketConfig;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.message.BasicClassicHttpRequest;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;

/**
 * The engine of the data calls made on the CALLING thread, and of every streamed body: Apache
 * HttpClient 5 classic (blocking). Its role: the store API's needle reads and writes of
 * {@link HttpTransport#exchange} (the blocking client API's path: the caller's thread does the I/O,
 * no hand-off), the reads of {@link HttpTransport#exchangeAsync} (on an I/O thread), request bodies
 * streamed from a file, response bodies handed back as streams ({@link HttpTransport#openStream}: block
 * ranges, large objects) and request bodies the caller writes as it computes them
 * ({@link HttpTransport#openRequest}). Chosen over java.net.http for the calling-thread path because its
 * blocking calls need no thread hand-off per request, and for streams because it gives the
 * connection's own input and output streams.
 *
 * <p>Pooled keep-alive HTTP/1.1 connections (up to {@value #PER_ROUTE} per server, {@value #TOTAL} in
 * all). Connect timeout and socket (response) timeout are the transport's; TLS uses the transport's
 * {@link SSLContext} (its key store, for mutual TLS, included) with hostname verification, as
 * java.net.http does. No cookies, no redirects, no content decompression, and no automatic retries
 * (the callers retry), except one: an idempotent request (GET, HEAD, PUT, DELETE) sent on a pooled
 * connection that the server had closed meanwhile (no answer at all, or the connection reset) is sent
 * once more on a new connection, as java.net.http does. A connection idle for more than a second is
 * checked before use. Responses are parsed strictly: an invalid status line fails the call.
 *
 * <p>Thread-safe.
 */
final class DataEngine {
    static final int PER_ROUTE = 256;
    static final int TOTAL = 1024;

    final CloseableHttpClient client;
    private final PoolingHttpClientConnectionManager pool;
    private final SSLContext ssl;
    private final Duration connectTimeout;
    private final Duration requestTimeout;
    private final Reporting reporting;
    private final HttpTransport addresses;
    private final ConcurrentHashMap<String, Target> targets = new ConcurrentHashMap<>();
    private volatile AsyncDataEngine asyncData;

    DataEngine(SSLContext ssl, Duration connectTimeout, Duration requestTimeout, Reporting reporting, HttpTransport addresses) {
        this.ssl = ssl;
        this.connectTimeout = connectTimeout;
        this.requestTimeout = requestTimeout;
        this.reporting = reporting;
        this.addresses = addresses;
        Timeout response = Timeout.of(requestTimeout);
        PoolingHttpClientConnectionManagerBuilder pb = PoolingHttpClientConnectionManagerBuilder.create()
                .setMaxConnPerRoute(PER_ROUTE)
                .setMaxConnTotal(TOTAL)
                // core's strict parser: an invalid status line is an error (BAD_RESPONSE), not
                // "garbage" to skip as the client's lenient default parser does
                .setConnectionFactory(ManagedHttpClientConnectionFactory.builder()
                        .responseParserFactory(DefaultHttpResponseParserFactory.INSTANCE)
                        .build())
                .setDefaultSocketConfig(SocketConfig.custom().setTcpNoDelay(true).setSoTimeout(response).build())
                .setDefaultConnectionConfig(connectionConfig(connectTimeout, response));
        if (ssl != null) {
            pb.setTlsSocketStrategy(new DefaultClientTlsStrategy(ssl));
        }
        this.pool = pb.build();
        this.client = HttpClients.custom()
                .setConnectionManager(pool)
                .setRetryStrategy(new StaleConnectionRetry())
                .disableCookieManagement()
                .disableRedirectHandling()
                .disableContentCompression()
                .disableAuthCaching()
                .disableConnectionState() // one identity per transport: any pooled connection serves any call
                .setDefaultRequestConfig(RequestConfig.custom()
                        .setResponseTimeout(response)
                        .setConnectionRequestTimeout(response)
                        .build())
                .build();
    }


    /** A server as this engine addresses it: the host (scheme, name, port) and the path prefix. */
    record Target(HttpHost host, String prefix) {
    }

    /** The host and path prefix of {@code server}, parsed once per server ({@link HttpTransport#uri} checks the address). */
    Target target(String server) {
        Target t = targets.get(server);
        if (t == null) {
            URI u = addresses.uri(server, "/");
            String path = u.getRawPath();
            String host = u.getHost();
            if (host == null) {
                throw new IllegalArgumentException("bad server address '" + server + "': no host");
            }
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1); // an IPv6 literal
            }
            t = new Target(new HttpHost(u.getScheme(), host, u.getPort()), path.substring(0, path.length() - 1));
            if (targets.size() < 10_000) {
                targets.put(server, t);
            }
        }
        return t;
    }

    /** See {@link HttpTransport#exchange(String, String, String, String, Map, byte[], IntPredicate, HttpTransport.ErrorFactory)}. */
    HttpTransport.Response exchange(String server, String what, String method, String pathAndQuery, Map<String, String> headers,
                                    HttpEntity entity, IntPredicate ok, HttpTransport.ErrorFactory errors) {
        Target target = target(server);
        BasicClassicHttpRequest req = new BasicClassicHttpRequest(method, target.host(), target.prefix() + pathAndQuery);
        if (headers != null) {
            headers.forEach(req::addHeader);
        }
        if (entity != null) {
            req.setEntity(entity);
        }
        long start = System.nanoTime();
        boolean started = false;
        int status;
        byte[] body;
        Header[] answerHeaders;
        try (ClassicHttpResponse resp = client.executeOpen(target.host(), req, null)) {
            started = true;
            status = resp.getCode();
            body = resp.getEntity() == null ? new byte[0] : EntityUtils.toByteArray(resp.getEntity());
            answerHeaders = resp.getHeaders();
        } catch (IOException | RuntimeException e) {
            RemoteException r = Failures.failure(server, what, e, started, errors);
            reporting.report(server, method, 0, r, System.nanoTime() - start);
            throw r;
        }
        reporting.report(server, method, status, null, System.nanoTime() - start);
        if (!ok.test(status)) {
            throw Failures.errorAnswer(server, what, status, body, errors);
        }
        return new HttpTransport.Response(status, answerHeaders, body);
    }

    /**
     * A data call without blocking the caller: a GET or a file body on one of the I/O threads (this
     * engine, the future completes there); a PUT, POST or DELETE with a body in memory on the
     * {@link AsyncDataEngine} (the future completes on a reactor thread).
     */
    CompletableFuture<HttpTransport.Response> exchangeAsync(String server, String what, String method, String pathAndQuery,
                                                            Map<String, String> headers, byte[] body, IntPredicate ok,
                                                            HttpTransport.ErrorFactory errors) {
        Target target = target(server);
        if ("GET".equals(method)) {
            HttpEntity entity = body == null ? null : new ByteArrayEntity(body, ContentType.APPLICATION_OCTET_STREAM);
            return CompletableFuture.supplyAsync(() -> exchange(server, what, method, pathAndQuery, headers, entity, ok, errors),
                    RpcEngine.IO);
        }
        CompletableFuture<HttpTransport.Response> f = new CompletableFuture<>();
        long start = System.nanoTime();
        try {
            asyncData().execute(method, target.host(), target.prefix() + pathAndQuery, headers, body, new AsyncDataEngine.Done() {
                @Override
                public void answered(SimpleHttpResponse resp) {
                    int status = resp.getCode();
                    reporting.report(server, method, status, null, System.nanoTime() - start);
                    byte[] answer = resp.getBodyBytes() == null ? new byte[0] : resp.getBodyBytes();
                    try {
                        if (!ok.test(status)) {
                            f.completeExceptionally(Failures.errorAnswer(server, what, status, answer, errors));
                            return;
                        }
                        f.complete(new HttpTransport.Response(status, resp.getHeaders(), answer));
                    } catch (RuntimeException e) {
                        f.completeExceptionally(e);
                    }
                }

                @Override
                public void failed(Exception e, boolean answerStarted) {
                    RemoteException r = Failures.failure(server, what, e, answerStarted, errors);
                    reporting.report(server, method, 0, r, System.nanoTime() - start);
                    f.completeExceptionally(r);
                }
            });
        } catch (RuntimeException e) { // the engine was shut down, say
            RemoteException r = Failures.failure(server, what, e, false, errors);
            reporting.report(server, method, 0, r, System.nanoTime() - start);
            f.completeExceptionally(r);
        }
        return f;
    }

    private AsyncDataEngine asyncData() {
        AsyncDataEngine e = asyncData;
        if (e == null) {
            e = AsyncDataEngine.of(ssl, connectTimeout, requestTimeout);
            asyncData = e;
        }
        return e;
    }

    /** See {@link HttpTransport#openStream(String, String, String, Map, HttpTransport.ErrorFactory)}. */
    InputStream openStream(String server, String what, String pathAndQuery, Map<String, String> headers,
                           HttpTransport.ErrorFactory errors) {
        Target target = target(server);
        long start = System.nanoTime();
        ClassicHttpResponse resp;
        HttpGet get = new HttpGet(target.prefix() + pathAndQuery);
        if (headers != null) {
            headers.forEach(get::addHeader);
        }
        try {
            resp = client.executeOpen(target.host(), get, null);
        } catch (IOException e) {
            RemoteException r = Failures.failure(server, what, e, false, errors);
            reporting.report(server, "GET", 0, r, System.nanoTime() - start);
            throw r;
        }
        int status = resp.getCode();
        reporting.report(server, "GET", status, null, System.nanoTime() - start);
        try {
            if (status == 200 && resp.getEntity() != null) {
                return new BodyStream(resp.getEntity().getContent(), resp.getEntity().getContentLength(), get, resp);
            }
            byte[] body;
            try {
                body = resp.getEntity() == null ? new byte[0] : resp.getEntity().getContent().readNBytes(64 * 1024);
            } catch (IOException e) {
                body = new byte[0];
            }
            closeQuietly(resp);
            throw Failures.errorAnswer(server, what, status, body, errors);
        } catch (IOException e) {
            closeQuietly(resp);
            throw Failures.failure(server, what, e, true, errors);
        }
    }

    /** A 200 answer's body: closed before its end, it drops the connection rather than read the rest to reuse it. */
    private static final class BodyStream extends FilterInputStream {
        private final long length;
        private final HttpGet get;
        private final ClassicHttpResponse resp;
        private long got;
        private boolean eof;

        BodyStream(InputStream in, long length, HttpGet get, ClassicHttpResponse resp) {
            super(in);
            this.length = length;
            this.get = get;
            this.resp = resp;
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b < 0) {
                eof = true;
            } else {
                got++;
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = super.read(b, off, len);
            if (n < 0) {
                eof = true;
            } else {
                got += n;
            }
            return n;
        }

        @Override
        public void close() throws IOException {
            if (!eof && (length < 0 || got < length)) {
                get.cancel(); // drop the connection: closing the entity would read the rest
                closeQuietly(in);
                closeQuietly(resp);
                return;
            }
            try {
                super.close();
            } finally {
                resp.close();
            }
        }
    }

    private static void closeQuietly(Closeable c) {
        try {
            c.close();
        } catch (IOException e) {
            // the connection is discarded anyway
        }
    }

    /** Connect and socket timeouts, and a check of a connection idle for more than a second before it is used again. */
    static ConnectionConfig connectionConfig(Duration connectTimeout, Timeout response) {
        return ConnectionConfig.custom()
                .setConnectTimeout(Timeout.of(connectTimeout))
                .setSocketTimeout(response)
                .setValidateAfterInactivity(TimeValue.ofSeconds(1))
                .build();
    }

    /** Sends once more only an idempotent request whose connection the server had closed (never on a status). */
    static final class StaleConnectionRetry implements HttpRequestRetryStrategy {
        @Override
        public boolean retryRequest(HttpRequest request, IOException exception, int execCount, HttpContext context) {
            if (execCount > 1) {
                return false;
            }
            boolean closed = exception instanceof NoHttpResponseException
                    || (exception instanceof SocketException && !(exception instanceof ConnectException));
            String m = request.getMethod();
            return closed && ("GET".equals(m) || "HEAD".equals(m) || "PUT".equals(m) || "DELETE".equals(m));
        }

        @Override
        public boolean retryRequest(HttpResponse response, int execCount, HttpContext context) {
            return false;
        }

        @Override
        public TimeValue getRetryInterval(HttpResponse response, int execCount, HttpContext context) {
            return TimeValue.ZERO_MILLISECONDS;
        }
    }
}
