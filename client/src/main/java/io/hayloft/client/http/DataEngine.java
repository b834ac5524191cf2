package io.hayloft.client.http;

import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketException;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import org.apache.hc.client5.http.HttpRequestRetryStrategy;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.ManagedHttpClientConnectionFactory;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.client5.http.ssl.DefaultClientTlsStrategy;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.http.NoHttpResponseException;
import org.apache.hc.core5.http.impl.io.DefaultHttpResponseParserFactory;
import org.apache.hc.core5.http.io.SocketConfig;
import org.apache.hc.core5.http.protocol.HttpContext;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;

/**
 * The Apache HttpClient 5 classic (blocking) client behind {@link HttpTransport}'s data calls
 * ({@link HttpTransport#exchange}): the calling thread does the I/O, on pooled keep-alive HTTP/1.1
 * connections (up to {@value #PER_ROUTE} per server, {@value #TOTAL} in all). Connect timeout and
 * socket (response) timeout are the transport's; TLS uses the transport's {@link SSLContext} (its key
 * store, for mutual TLS, included) with hostname verification, as java.net.http does. No cookies,
 * no redirects, no content decompression, and no automatic retries (the callers retry), except one:
 * an idempotent request (GET, HEAD, PUT, DELETE) sent on a pooled connection that the server had
 * closed meanwhile (no answer at all, or the connection reset) is sent once more on a new
 * connection, as java.net.http does. A connection idle for more than a second is checked before use.
 * Responses are parsed strictly: an invalid status line fails the call.
 */
final class DataEngine {
    static final int PER_ROUTE = 256;
    static final int TOTAL = 1024;

    final CloseableHttpClient client;
    private final PoolingHttpClientConnectionManager pool;

    DataEngine(SSLContext ssl, Duration connectTimeout, Duration requestTimeout) {
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
