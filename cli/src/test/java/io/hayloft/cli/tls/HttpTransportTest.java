package io.hayloft.cli.tls;

import java.security.NoSuchAlgorithmException;
import javax.net.ssl.SSLContext;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.hayloft.client.DirectoryException;
import io.hayloft.client.Futures;
import io.hayloft.client.RemoteException;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.client.store.NotFoundException;
import io.hayloft.client.store.StoreException;
import io.hayloft.format.errors.ApiError;
import io.hayloft.format.errors.CommonErrors;
import io.hayloft.serverkit.http.HttpLimits;
import io.hayloft.serverkit.http.HttpResponses;
import io.hayloft.serverkit.http.HttpServer;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The client transport's retries, deadline, typed errors and metrics, against the servers' own
 * Netty {@link HttpServer} on loopback. Paths: {@code /busy} always 503; {@code /flaky} 503 twice,
 * then 200; {@code /needle} a store's 404; {@code /photo} a directory's 404; {@code /ok} 200.
 */
class HttpTransportTest {
    private static final ApiError UNKNOWN_PHOTO = new ApiError(202, "UNKNOWN_PHOTO", 404);
    private static ExecutorService executor;
    private static HttpServer server;
    private static final Map<String, AtomicInteger> SEEN = new ConcurrentHashMap<>();
    private static String address;

    @BeforeAll
    static void start() throws Exception {
        executor = Executors.newFixedThreadPool(4);
        server = HttpServer.start("127.0.0.1", 0, HttpLimits.defaults(), request -> answer(request.method().name(),
                new URI(request.uri()).getPath()), executor, 1);
        address = "127.0.0.1:" + server.port();
    }

    @AfterAll
    static void stop() {
        server.close();
        executor.shutdownNow();
    }

    @BeforeEach
    void reset() {
        SEEN.clear();
    }

    private static FullHttpResponse answer(String method, String path) {
        int n = SEEN.computeIfAbsent(method + " " + path, k -> new AtomicInteger()).incrementAndGet();
        return switch (path) {
            case "/busy" -> HttpResponses.error(CommonErrors.OVERLOADED, "busy");
            case "/flaky" -> n <= 2 ? HttpResponses.error(CommonErrors.OVERLOADED, "busy") : HttpResponses.text(
                    HttpResponseStatus.OK, "fine", "text/plain");
            case "/needle" -> HttpResponses.error(CommonErrors.NEEDLE_NOT_FOUND, CommonErrors.needleNotFound(1, 2, 0));
            case "/photo" -> HttpResponses.error(UNKNOWN_PHOTO, "photo 1/2 unknown");
            default -> HttpResponses.text(HttpResponseStatus.OK, "fine", "text/plain");
        };
    }

    private static int seen(String methodAndPath) {
        AtomicInteger n = SEEN.get(methodAndPath);
        return n == null ? 0 : n.get();
    }

    /** Records every attempt and retry, as a metrics listener would. */
    private static final class Recorder implements HttpTransport.Listener {
        final List<String> requests = new CopyOnWriteArrayList<>();
        final AtomicInteger retries = new AtomicInteger();

        @Override
        public void onRequest(String target, String method, int status, RemoteException failure, long nanos) {
            assertThat(nanos).isPositive();
            requests.add(target + " " + method + " " + (failure == null ? String.valueOf(status) : failure.kind().name()));
        }

        @Override
        public void onRetry(String target, String method, int attempt, Duration backoff) {
            retries.incrementAndGet();
        }
    }

    private static HttpTransport transport(Recorder r, int attempts, Duration deadline) {
        return HttpTransport.builder().listener(r).retries(attempts, Duration.ofMillis(5), Duration.ofMillis(20))
                .deadline(deadline).build();
    }

    private static HttpResponse<byte[]> call(HttpTransport t, String server, String method, String path, boolean idempotent) {
        HttpRequest req = t.request(t.uri(server, path)).method(method, HttpRequest.BodyPublishers.noBody()).build();
        return Futures.await(t.call(server, method + " " + path, req, idempotent, s -> s == 200, HttpTransport.TYPED));
    }

    @Test
    void idempotentRequestsAreRetriedOn503AndTheListenerCountsEveryAttempt() {
        Recorder r = new Recorder();
        HttpTransport t = transport(r, 5, Duration.ofSeconds(10));
        assertThat(call(t, address, "GET", "/flaky", false).statusCode()).isEqualTo(200);
        assertThat(seen("GET /flaky")).isEqualTo(3);
        assertThat(r.requests).containsExactly(address + " GET 503", address + " GET 503", address + " GET 200");
        assertThat(r.retries.get()).isEqualTo(2);
        assertThat(t.retries()).isEqualTo(2);

        RemoteException busy = (RemoteException) catchThrowable(() -> call(t, address, "PUT", "/busy", false));
        assertThat(busy.httpStatus()).isEqualTo(503);
        assertThat(busy.code()).isEqualTo(CommonErrors.OVERLOADED.code());
        assertThat(seen("PUT /busy")).isEqualTo(5); // bounded: maxAttempts
    }

    @Test
    void aPostIsNotRetriedOnceSentUnlessMarkedIdempotent() {
        Recorder r = new Recorder();
        HttpTransport t = transport(r, 5, Duration.ofSeconds(10));
        RemoteException once = (RemoteException) catchThrowable(() -> call(t, address, "POST", "/busy", false));
        assertThat(once.httpStatus()).isEqualTo(503);
        assertThat(seen("POST /busy")).isEqualTo(1);
        assertThat(r.retries.get()).isZero();
        assertThat(r.requests).containsExactly(address + " POST 503");

        catchThrowable(() -> call(t, address, "POST", "/flaky", true));
        assertThat(seen("POST /flaky")).isEqualTo(3);
        assertThat(r.retries.get()).isEqualTo(2);
    }

    @Test
    void retriesStopAtTheDeadline() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // closed at once: connections are refused
        }
        String dead = "127.0.0.1:" + port;
        Recorder r = new Recorder();
        HttpTransport t = transport(r, 1_000_000, Duration.ofMillis(400));
        long start = System.nanoTime();
        RemoteException e = (RemoteException) catchThrowable(() -> call(t, dead, "GET", "/ok", false));
        long millis = (System.nanoTime() - start) / 1_000_000;
        // The last attempt gets what is left of the deadline: refused, or timed out when little was left.
        assertThat(e.kind()).isIn(RemoteException.Kind.UNREACHABLE, RemoteException.Kind.TIMEOUT);
        assertThat(r.retries.get()).isGreaterThan(3);
        assertThat(r.requests).hasSize(r.retries.get() + 1);
        assertThat(r.requests.subList(0, r.requests.size() - 1)).allMatch(s -> s.endsWith(" UNREACHABLE"));
        assertThat(millis).isLessThan(400 + 1000); // the deadline, plus scheduling slack on a busy machine

        Recorder busy = new Recorder();
        HttpTransport t2 = transport(busy, 1_000_000, Duration.ofMillis(300));
        RemoteException e2 = (RemoteException) catchThrowable(() -> call(t2, address, "GET", "/busy", false));
        // The last attempt gets what is left of the deadline: a 503, or a timeout when little was left (busy machine).
        assertThat(e2.httpStatus() == 503 || e2.kind() == RemoteException.Kind.TIMEOUT).as("%s", e2).isTrue();
        assertThat(seen("GET /busy")).isGreaterThan(3).isBetween(busy.retries.get(), busy.retries.get() + 1);
    }

    @Test
    void errorBodiesAreDecodedIntoTheClientsExceptionTypes() {
        HttpTransport t = transport(new Recorder(), 3, Duration.ofSeconds(10));
        Throwable needle = catchThrowable(() -> call(t, address, "GET", "/needle", false));
        assertThat(needle).isInstanceOf(NotFoundException.class);
        assertThat(((StoreException) needle).code()).isEqualTo(StoreException.NEEDLE_NOT_FOUND);
        assertThat(((StoreException) needle).serverMessage()).isEqualTo("needle 1/2/0 not found");
        Throwable photo = catchThrowable(() -> call(t, address, "GET", "/photo", false));
        assertThat(photo).isInstanceOf(DirectoryException.class);
        assertThat(((DirectoryException) photo).code()).isEqualTo(DirectoryException.UNKNOWN_PHOTO);
        assertThat(((DirectoryException) photo).errorName()).isEqualTo("UNKNOWN_PHOTO");
        assertThat(seen("GET /needle")).isEqualTo(1); // a 404 is not retried
    }

    @Test
    void everyUrlUsesTheTransportsScheme() {
        assertThat(HttpTransport.create().uri("10.0.0.1:80", "/x").toString()).isEqualTo("http://10.0.0.1:80/x");
        HttpTransport tls = HttpTransport.builder().sslContext(defaultContext()).build();
        assertThat(tls.uri("10.0.0.1:80", "/x").toString()).isEqualTo("https://10.0.0.1:80/x");
    }

    private static SSLContext defaultContext() {
        try {
            return SSLContext.getDefault();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
