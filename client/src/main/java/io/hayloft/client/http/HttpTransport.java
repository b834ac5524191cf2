package io.hayloft.client.http;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.client.RemoteException;
import io.hayloft.client.RemoteException.Kind;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.ProtocolException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.IntPredicate;
import javax.net.ssl.SSLContext;

/**
 * The HTTP plumbing shared by the store and directory clients, on {@link java.net.http.HttpClient}
 * (HTTP/1.1, pooled keep-alive connections, connect and per-request timeouts, no Netty). It builds
 * URLs from {@code host:port} addresses ({@code http://}, or {@code https://} when built with an
 * {@link SSLContext}), sends requests asynchronously, and turns every way a call can fail into a
 * {@link RemoteException} of the caller's type: an error answer (status, code, name and message
 * from the JSON error body), no connection, a timeout, or an answer that is not valid (a non-JSON
 * error body, a body shorter than its {@code Content-Length}, an invalid status line, JSON that does
 * not parse).
 *
 * <p>{@link #call} adds what servers calling each other need: a deadline for the whole call, bounded
 * retries with exponential backoff and full jitter for idempotent requests (GET, HEAD, PUT, DELETE,
 * and POSTs the caller marks idempotent) on connection failures and 503, never past the deadline; a
 * request that may not be idempotent is retried only when the connection could not be made at all
 * (it was never sent). Every attempt is reported to a {@link Listener} (metrics per target).
 * {@link #TYPED} decodes error bodies into the client's exception types by their code.
 *
 * <p>Data calls (the store API: {@link #exchange}, {@link #exchangeAsync}, {@link #openStream}) use a
 * second engine, Apache HttpClient 5 classic (see {@code DataEngine}): blocking, on the CALLING thread,
 * with the same typed errors and {@link Listener} reports; it is used for data because with many
 * requests in flight it reads faster than java.net.http's blocking {@code send} (the figures:
 * docs/client.md "Threads"). The asynchronous writes ({@link #exchangeAsync} with PUT, POST or DELETE) use a third,
 * {@code AsyncDataEngine}: HttpClient 5's non-blocking client on a few reactor threads, so a put to
 * three replicas holds no thread per request. What follows is about the java.net.http calls
 * (directory, admin, {@link #call}).
 *
 * <p>Each exchange is one blocking {@link HttpClient#send} on a thread of the transport's own cached
 * pool (daemon threads {@code hayloft-http-N}, one per request in flight, idle ones end after 60 s),
 * and its future completes on that thread, never on the caller's: callers on event loops are not
 * blocked. Not {@link HttpClient#sendAsync}: on JDK 17 it hands every response to
 * {@code CompletableFuture}'s default executor, which on a machine with 2 cores or fewer (a common
 * pool of one thread) starts a new thread per response, and reads ran at less than half today's
 * rate (docs/benchmarks.md "Client transport").
 *
 * <p>Thread-safe: one instance is meant to be shared by every call of an application.
 */
public final class HttpTransport {
    /** The JSON mapper of the client: ignores unknown fields (either side may add fields). */
    public static final ObjectMapper JSON = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private static final int SNIPPET = 120;

    /** Builds the caller's exception type (store or directory) for a failed call. */
    @FunctionalInterface
    public interface ErrorFactory {
        RemoteException create(String server, Kind kind, int httpStatus, int code, String errorName,
                               String serverMessage, String message, Throwable cause);
    }

    /**
     * Told of every attempt a transport makes, for metrics per target (a server may plug Micrometer
     * in; the client does not depend on it). Called on the transport's executor; must be thread-safe
     * and quick, and must not throw.
     */
    public interface Listener {
        /** Does nothing. */
        Listener NONE = new Listener() {
        };

        /**
         * One attempt ended: an answer with {@code status} ({@code failure} null), or no answer
         * ({@code status} 0, {@code failure} the {@link RemoteException} of the attempt).
         *
         * @param target the server ({@code host:port} or URL prefix)
         * @param nanos time from sending to the answer or failure
         */
        default void onRequest(String target, String method, int status, RemoteException failure, long nanos) {
        }

        /** An attempt is about to be retried after {@code backoff}; {@code attempt} is the one that follows (2, 3...). */
        default void onRetry(String target, String method, int attempt, Duration backoff) {
        }
    }

    /** Decodes an error body into the client's exception type by its code: store (100..199), directory (200..299), else {@link RemoteException}. */
    public static final ErrorFactory TYPED = (server, kind, status, code, name, serverMessage, message, cause) -> {
        if (code >= 100 && code < 200) {
            return io.hayloft.client.store.StoreException.of(server, kind, status, code, name, serverMessage, message, cause);
        }
        if (code >= 200 && code < 300) {
            return new io.hayloft.client.DirectoryException(server, kind, status, code, name, serverMessage, message, cause);
        }
        return new RemoteException(server, kind, status, code, name, serverMessage, message, cause);
    };

    private final HttpClient http;
    private final String scheme;
    private final SSLContext ssl;
    private final Duration requestTimeout;
    private final Duration connectTimeout;
    private final Duration deadline;
    private final int maxAttempts;
    private final Duration backoffBase;
    private final Duration backoffMax;
    private final Listener listener;
    private final Executor delayer;
    private final Executor ioThreads;
    private final java.util.concurrent.atomic.AtomicLong retries = new java.util.concurrent.atomic.AtomicLong();
    private final DataEngine data;

    private HttpTransport(Builder b) {
        HttpClient.Builder hb = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(b.connectTimeout)
                .followRedirects(HttpClient.Redirect.NEVER);
        if (b.executor != null) {
            hb.executor(b.executor);
        }
        SSLContext ssl = b.sslContext();
        if (ssl != null) {
            hb.sslContext(ssl);
        }
        this.http = hb.build();
        this.scheme = ssl == null ? "http" : "https";
        this.ssl = ssl;
        this.requestTimeout = b.requestTimeout;
        this.connectTimeout = b.connectTimeout;
        this.deadline = b.deadline == null ? b.requestTimeout : b.deadline;
        this.maxAttempts = b.maxAttempts;
        this.backoffBase = b.backoffBase;
        this.backoffMax = b.backoffMax;
        this.listener = b.listener;
        this.delayer = b.executor;
        this.ioThreads = IO;
        this.data = new DataEngine(ssl, b.connectTimeout, b.requestTimeout);
    }

    private static final java.util.concurrent.atomic.AtomicInteger IO_THREADS = new java.util.concurrent.atomic.AtomicInteger();

    /** The threads of the blocking sends, shared by every transport of the process: one per request in flight. */
    private static final Executor IO = new java.util.concurrent.ThreadPoolExecutor(0, Integer.MAX_VALUE, 60,
            java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.SynchronousQueue<>(), r -> {
                Thread t = new Thread(r, "hayloft-http-" + IO_THREADS.incrementAndGet());
                t.setDaemon(true);
                return t;
            });

    /**
     * Sends {@code request} with a blocking {@link HttpClient#send} on an I/O thread; the future
     * completes on that thread with the response, or exceptionally with what {@code send} threw.
     */
    private <T> CompletableFuture<HttpResponse<T>> exchange(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
        CompletableFuture<HttpResponse<T>> f = new CompletableFuture<>();
        ioThreads.execute(() -> {
            try {
                f.complete(http.send(request, handler));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                f.completeExceptionally(e);
            } catch (IOException e) {
                // send() rethrows the exchange's failure as a plain IOException around the original
                // (a ProtocolException, a ClosedChannelException...): keep the original, as sendAsync gives it.
                f.completeExceptionally(e.getClass() == IOException.class && e.getCause() instanceof IOException c ? c : e);
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        });
        return f;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A transport with the default timeouts (connect 2 s, request 10 s) over plain HTTP. */
    public static HttpTransport create() {
        return builder().build();
    }

    /**
     * This transport as cold-read's {@link io.hayloft.cold.ClusterRpc}, so that a process's cold reads
     * and raid calls share its one transport: every answer completes the future (the caller reads
     * the status), failures are this transport's {@link RemoteException}s, retries as {@link #call}.
     */
    public io.hayloft.cold.ClusterRpc clusterRpc() {
        HttpTransport t = this;
        return new io.hayloft.cold.ClusterRpc() {
            @Override
            public URI uri(String server, String pathAndQuery) {
                return t.uri(server, pathAndQuery);
            }

            @Override
            public CompletableFuture<HttpResponse<byte[]>> send(String server, String what, HttpRequest request,
                                                                boolean idempotent, Duration deadline) {
                return t.call(server, what, request, idempotent, deadline, s -> true, TYPED);
            }

            @Override
            public InputStream openStream(String server, String what, String pathAndQuery, java.util.Map<String, String> headers)
                    throws IOException {
                try {
                    return t.openStream(server, what, pathAndQuery, headers, TYPED);
                } catch (RuntimeException e) {
                    throw new IOException(what + " on " + server + " failed: " + e.getMessage(), e);
                }
            }

            @Override
            public StreamedRequest openRequest(String server, String what, String method, String pathAndQuery,
                                               java.util.Map<String, String> headers, long length) {
                return t.openRequest(server, what, method, pathAndQuery, headers, length);
            }
        };
    }

    /**
     * A data call whose body the caller writes as it produces it (a block sent in one request while
     * it is being computed): see {@link StreamedUpload}. The request runs on one of the transport's
     * I/O threads; the caller writes {@link io.hayloft.cold.ClusterRpc.StreamedRequest#body()} (waiting
     * at most the connect timeout plus the request timeout for the connection), then
     * {@link io.hayloft.cold.ClusterRpc.StreamedRequest#finish finish} waits for the answer (each read
     * bounded by the request timeout). Never retried. Reported to the {@link Listener} when answered.
     *
     * @param length the body's length, or -1 for a chunked body (which may end with trailers)
     * @throws IllegalArgumentException for a bad server address
     */
    public io.hayloft.cold.ClusterRpc.StreamedRequest openRequest(String server, String what, String method,
                                                                  String pathAndQuery, java.util.Map<String, String> headers,
                                                                  long length) {
        Target target = target(server);
        long start = System.nanoTime();
        return StreamedUpload.start(data.client, target.host(), method, target.prefix() + pathAndQuery, headers, length,
                ioThreads, connectTimeout.plus(requestTimeout), server, what, (status, failure) -> report(server, method, status,
                        failure == null ? null : failure(server, what, failure, TYPED), System.nanoTime() - start));
    }

    /** The transport's I/O threads (one per call in flight), for blocking data calls made asynchronous. */
    public Executor ioExecutor() {
        return ioThreads;
    }

    /** {@code http} or {@code https}. */
    public String scheme() {
        return scheme;
    }

    /** The TLS context of the calls, or null for plain HTTP (for code that must build its own HttpClient, e.g. cold-read). */
    public SSLContext sslContext() {
        return ssl;
    }

    public Duration requestTimeout() {
        return requestTimeout;
    }

    /** The default deadline of a {@link #call} (all its attempts and backoffs together). */
    public Duration deadline() {
        return deadline;
    }

    /** Retries made so far by {@link #call} (attempts after the first), over all targets. */
    public long retries() {
        return retries.get();
    }

    /**
     * The URI of {@code pathAndQuery} on a server given as {@code host:port} or as a URL prefix
     * ({@code http://host:port}, as in a photo's read places).
     *
     * @throws IllegalArgumentException naming the bad address
     */
    public URI uri(String server, String pathAndQuery) {
        String base = baseUrl(server);
        try {
            return URI.create(base + pathAndQuery);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("bad server address '" + server + "': " + e.getMessage(), e);
        }
    }

    /** {@code scheme://host:port} for an address, or the prefix itself (trailing slashes removed). */
    public String baseUrl(String server) {
        if (server == null || server.isBlank()) {
            throw new IllegalArgumentException("server address is missing");
        }
        String s = server.trim();
        if (s.contains("://")) {
            while (s.endsWith("/")) {
                s = s.substring(0, s.length() - 1);
            }
            return s;
        }
        int colon = s.lastIndexOf(':');
        if (colon <= 0 || colon == s.length() - 1 || !s.substring(colon + 1).chars().allMatch(Character::isDigit)) {
            throw new IllegalArgumentException("bad server address '" + server + "': expected host:port");
        }
        int port = Integer.parseInt(s.substring(colon + 1).length() > 5 ? "99999" : s.substring(colon + 1));
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("bad server address '" + server + "': port must be in 1..65535");
        }
        return scheme + "://" + s;
    }

    /** A request builder for {@code uri} with the transport's request timeout. */
    public HttpRequest.Builder request(URI uri) {
        return HttpRequest.newBuilder(uri).timeout(requestTimeout);
    }

    /**
     * Sends {@code request} and completes with the response when its status satisfies {@code ok};
     * otherwise fails with the error {@code errors} builds.
     *
     * @param what the call in words for error messages, e.g. {@code "PUT /3/7/0"}
     */
    public CompletableFuture<HttpResponse<byte[]>> send(String server, String what, HttpRequest request, IntPredicate ok,
                                                        ErrorFactory errors) {
        CompletableFuture<HttpResponse<byte[]>> sent;
        long start = System.nanoTime();
        try {
            sent = exchange(request, HttpResponse.BodyHandlers.ofByteArray());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(
                    errors.create(server, Kind.UNREACHABLE, 0, 0, null, null, server + ": " + what + " could not be sent: " + e, e));
        }
        return sent.handle((resp, t) -> {
            if (t != null) {
                RemoteException r = failure(server, what, t, errors);
                report(server, request.method(), 0, r, System.nanoTime() - start);
                throw r;
            }
            report(server, request.method(), resp.statusCode(), null, System.nanoTime() - start);
            if (!ok.test(resp.statusCode())) {
                throw errorAnswer(server, what, resp.statusCode(), resp.body(), errors);
            }
            return resp;
        });
    }

    /**
     * Sends {@code request} with retries within the transport's {@link #deadline()}; see
     * {@link #call(String, String, HttpRequest, boolean, Duration, IntPredicate, ErrorFactory)}.
     */
    public CompletableFuture<HttpResponse<byte[]>> call(String server, String what, HttpRequest request,
                                                        boolean idempotentPost, IntPredicate ok, ErrorFactory errors) {
        return call(server, what, request, idempotentPost, deadline, ok, errors);
    }

    /**
     * Sends {@code request} and completes with the response when its status satisfies {@code ok};
     * otherwise fails with the error {@code errors} builds from the last attempt. Each attempt waits
     * at most the request's timeout (or the transport's) and never past {@code deadline}. Retried,
     * after {@code base × 2^(n-1)} (capped, with full jitter), while attempts and time remain: an
     * idempotent request (GET, HEAD, PUT, DELETE, or any method when {@code idempotent} is true)
     * after a connection failure, a timeout of the attempt or a 503; any request when no
     * connection could be made (nothing was sent).
     *
     * A retried request is sent again with the same body publisher: give a replayable one
     * ({@code BodyPublishers.ofByteArray}, {@code noBody}), not a one-shot stream.
     *
     * @param idempotent true when the caller knows the request (a POST) may be repeated safely
     * @param deadline time for the whole call, attempts and backoffs together
     */
    public CompletableFuture<HttpResponse<byte[]>> call(String server, String what, HttpRequest request, boolean idempotent,
                                                        Duration deadline, IntPredicate ok, ErrorFactory errors) {
        Objects.requireNonNull(deadline, "deadline");
        boolean safe = idempotent || isIdempotent(request.method());
        long end = System.nanoTime() + deadline.toNanos();
        CompletableFuture<HttpResponse<byte[]>> result = new CompletableFuture<>();
        attempt(server, what, request, safe, end, 1, ok, errors, result, Duration.ZERO, null);
        return result;
    }

    /** GET, HEAD, PUT and DELETE: repeating one leaves the server as one would. */
    public static boolean isIdempotent(String method) {
        return switch (method.toUpperCase(Locale.ROOT)) {
            case "GET", "HEAD", "PUT", "DELETE", "OPTIONS" -> true;
            default -> false;
        };
    }

    private void attempt(String server, String what, HttpRequest request, boolean safe, long end, int n, IntPredicate ok,
                         ErrorFactory errors, CompletableFuture<HttpResponse<byte[]>> result, Duration waited,
                         RemoteException last) {
        long left = end - System.nanoTime();
        if (left <= 0) {
            // A backoff that overslept the deadline: the previous attempt's error says more than a timeout.
            result.completeExceptionally(last != null ? last : errors.create(server, Kind.TIMEOUT, 0, 0, null, null,
                    server + ": " + what + " timed out (deadline passed before attempt " + n + ")", null));
            return;
        }
        if (n > 1) {
            // Counted here, when the retry is really sent (a backoff that overslept the deadline sends nothing).
            retries.incrementAndGet();
            try {
                listener.onRetry(server, request.method(), n, waited);
            } catch (RuntimeException e) {
                // a listener must not break a call
            }
        }
        Duration perAttempt = request.timeout().orElse(requestTimeout);
        if (perAttempt.toNanos() > left) {
            perAttempt = Duration.ofNanos(left);
        }
        HttpRequest one = HttpRequest.newBuilder(request, (name, value) -> true).timeout(perAttempt).build();
        long start = System.nanoTime();
        CompletableFuture<HttpResponse<byte[]>> sent;
        try {
            sent = exchange(one, HttpResponse.BodyHandlers.ofByteArray());
        } catch (RuntimeException e) {
            RemoteException r = errors.create(server, Kind.UNREACHABLE, 0, 0, null, null,
                    server + ": " + what + " could not be sent: " + e, e);
            report(server, request.method(), 0, r, System.nanoTime() - start);
            result.completeExceptionally(r);
            return;
        }
        sent.whenComplete((resp, t) -> {
            long nanos = System.nanoTime() - start;
            RemoteException failure;
            boolean retryable;
            if (t != null) {
                failure = failure(server, what, t, errors);
                Throwable c = io.hayloft.client.Futures.unwrap(t);
                boolean neverSent = c instanceof ConnectException || c instanceof java.net.http.HttpConnectTimeoutException;
                retryable = neverSent || (safe && (failure.kind() == Kind.UNREACHABLE || failure.kind() == Kind.TIMEOUT));
                report(server, request.method(), 0, failure, nanos);
            } else {
                report(server, request.method(), resp.statusCode(), null, nanos);
                if (ok.test(resp.statusCode())) {
                    result.complete(resp);
                    return;
                }
                failure = errorAnswer(server, what, resp.statusCode(), resp.body(), errors);
                retryable = safe && resp.statusCode() == 503;
            }
            if (!retryable || n >= maxAttempts) {
                result.completeExceptionally(failure);
                return;
            }
            Duration backoff = backoff(n);
            if (System.nanoTime() + backoff.toNanos() >= end) {
                result.completeExceptionally(failure); // no time for another attempt: the last error, not a timeout
                return;
            }
            Executor later = delayer == null
                    ? CompletableFuture.delayedExecutor(backoff.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS)
                    : CompletableFuture.delayedExecutor(backoff.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS, delayer);
            try {
                later.execute(() -> attempt(server, what, request, safe, end, n + 1, ok, errors, result, backoff, failure));
            } catch (RuntimeException e) {
                result.completeExceptionally(failure);
            }
        });
    }

    /** Full jitter: uniformly in (0, min(max, base × 2^(n-1))], at least a millisecond. */
    private Duration backoff(int n) {
        long cap = backoffBase.toNanos() << Math.min(n - 1, 30);
        if (cap <= 0 || cap > backoffMax.toNanos()) {
            cap = backoffMax.toNanos();
        }
        long d = java.util.concurrent.ThreadLocalRandom.current().nextLong(cap) + 1;
        return Duration.ofNanos(Math.max(d, 1_000_000L));
    }

    private void report(String server, String method, int status, RemoteException failure, long nanos) {
        try {
            listener.onRequest(server, method, status, failure, nanos);
        } catch (RuntimeException e) {
            // a listener must not break a call
        }
    }

    /** Sends a request whose body is streamed back to the caller; only the status is checked here. */
    public <T> CompletableFuture<HttpResponse<T>> sendRaw(String server, String what, HttpRequest request,
                                                          HttpResponse.BodyHandler<T> handler, ErrorFactory errors) {
        CompletableFuture<HttpResponse<T>> sent;
        try {
            sent = exchange(request, handler);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(
                    errors.create(server, Kind.UNREACHABLE, 0, 0, null, null, server + ": " + what + " could not be sent: " + e, e));
        }
        return sent.handle((resp, t) -> {
            if (t != null) {
                throw failure(server, what, t, errors);
            }
            return resp;
        });
    }

    // ---------------------------------------------------------------- data calls (HC5 classic)

    /** An answer of a data call ({@link #exchange}): the status, the response headers and the whole body. */
    public static final class Response {
        private final int status;
        private final org.apache.hc.core5.http.Header[] headers;
        private final byte[] body;

        Response(int status, org.apache.hc.core5.http.Header[] headers, byte[] body) {
            this.status = status;
            this.headers = headers;
            this.body = body;
        }

        public int status() {
            return status;
        }

        public byte[] body() {
            return body;
        }

        /** The first value of a header ({@code name} in any case), or null. */
        public String header(String name) {
            for (org.apache.hc.core5.http.Header h : headers) {
                if (h.getName().equalsIgnoreCase(name)) {
                    return h.getValue();
                }
            }
            return null;
        }
    }

    /** A server as the data engine addresses it: the host (scheme, name, port) and the path prefix. */
    private record Target(org.apache.hc.core5.http.HttpHost host, String prefix) {
    }

    private final java.util.concurrent.ConcurrentHashMap<String, Target> targets = new java.util.concurrent.ConcurrentHashMap<>();

    /** The host and path prefix of {@code server}, parsed once per server ({@link #uri} checks the address). */
    private Target target(String server) {
        Target t = targets.get(server);
        if (t == null) {
            URI u = uri(server, "/");
            String path = u.getRawPath();
            String host = u.getHost();
            if (host == null) {
                throw new IllegalArgumentException("bad server address '" + server + "': no host");
            }
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1); // an IPv6 literal
            }
            t = new Target(new org.apache.hc.core5.http.HttpHost(u.getScheme(), host, u.getPort()),
                    path.substring(0, path.length() - 1));
            if (targets.size() < 10_000) {
                targets.put(server, t);
            }
        }
        return t;
    }

    /**
     * A data call (store reads and writes) sent on the CALLING thread with the transport's blocking
     * Apache HttpClient 5 engine: {@code method} on {@code server} ({@code host:port} or a URL prefix
     * such as a cache's {@code http://cache:8080/store}) plus {@code pathAndQuery}, with
     * {@code headers} and an optional body. Answers with the response when its status satisfies
     * {@code ok}; otherwise throws the error {@code errors} builds, as {@link #send} does: the JSON
     * error body's code ({@link Kind#ERROR}), {@link Kind#UNREACHABLE} for no connection,
     * {@link Kind#TIMEOUT} when the connection or the answer took longer than the connect or request
     * timeout, {@link Kind#BAD_RESPONSE} for an answer that is not valid HTTP or is truncated. One
     * attempt (no retries but the one for a pooled connection the server had closed, see
     * {@code DataEngine}); reported to the {@link Listener} on the calling thread.
     *
     * @param what the call in words for error messages, e.g. {@code "GET /3/7/0"}
     * @param body the request body, or null for none
     * @throws IllegalArgumentException for a bad server address
     */
    public Response exchange(String server, String what, String method, String pathAndQuery,
                             java.util.Map<String, String> headers, byte[] body, IntPredicate ok, ErrorFactory errors) {
        return exchange(server, what, method, pathAndQuery, headers,
                body == null ? null : new org.apache.hc.core5.http.io.entity.ByteArrayEntity(body,
                        org.apache.hc.core5.http.ContentType.APPLICATION_OCTET_STREAM), ok, errors);
    }

    /** Like {@link #exchange(String, String, String, String, java.util.Map, byte[], IntPredicate, ErrorFactory)} with a file as the body, streamed from disk. */
    public Response exchange(String server, String what, String method, String pathAndQuery,
                             java.util.Map<String, String> headers, java.nio.file.Path body, IntPredicate ok, ErrorFactory errors) {
        return exchange(server, what, method, pathAndQuery, headers,
                new org.apache.hc.core5.http.io.entity.FileEntity(body.toFile(),
                        org.apache.hc.core5.http.ContentType.APPLICATION_OCTET_STREAM), ok, errors);
    }

    /**
     * {@link #exchange(String, String, String, String, java.util.Map, byte[], IntPredicate, ErrorFactory)}
     * without blocking the caller, with the same answers and errors: a GET on one of the transport's
     * I/O threads (the future completes there); a PUT, POST or DELETE on the asynchronous engine
     * ({@code AsyncDataEngine}: no thread waits for the answer; the future completes on a reactor
     * thread, so what is chained to it must not block). A bad server address fails at once (thrown).
     */
    public CompletableFuture<Response> exchangeAsync(String server, String what, String method, String pathAndQuery,
                                                     java.util.Map<String, String> headers, byte[] body, IntPredicate ok,
                                                     ErrorFactory errors) {
        Target target = target(server);
        if ("GET".equals(method) || BLOCKING_WRITES) {
            return CompletableFuture.supplyAsync(() -> exchange(server, what, method, pathAndQuery, headers, body, ok, errors), ioThreads);
        }
        CompletableFuture<Response> f = new CompletableFuture<>();
        long start = System.nanoTime();
        try {
            asyncData().execute(method, target.host(), target.prefix() + pathAndQuery, headers, body, new AsyncDataEngine.Done() {
                @Override
                public void answered(org.apache.hc.client5.http.async.methods.SimpleHttpResponse resp) {
                    int status = resp.getCode();
                    report(server, method, status, null, System.nanoTime() - start);
                    byte[] answer = resp.getBodyBytes() == null ? new byte[0] : resp.getBodyBytes();
                    try {
                        if (!ok.test(status)) {
                            f.completeExceptionally(errorAnswer(server, what, status, answer, errors));
                            return;
                        }
                        f.complete(new Response(status, resp.getHeaders(), answer));
                    } catch (RuntimeException e) {
                        f.completeExceptionally(e);
                    }
                }

                @Override
                public void failed(Exception e) {
                    RemoteException r = failure(server, what, e, errors);
                    report(server, method, 0, r, System.nanoTime() - start);
                    f.completeExceptionally(r);
                }
            });
        } catch (RuntimeException e) { // the engine was shut down, say
            RemoteException r = failure(server, what, e, errors);
            report(server, method, 0, r, System.nanoTime() - start);
            f.completeExceptionally(r);
        }
        return f;
    }

    /**
     * {@code -Dhayloft.http.blockingWrites=true}: data writes (PUT, POST, DELETE) on the blocking engine,
     * one {@code hayloft-http} thread per request in flight instead of the asynchronous engine (for
     * comparisons; see docs/client.md "Threads").
     */
    private static final boolean BLOCKING_WRITES = Boolean.getBoolean("hayloft.http.blockingWrites");

    private volatile AsyncDataEngine asyncData;

    private AsyncDataEngine asyncData() {
        AsyncDataEngine e = asyncData;
        if (e == null) {
            e = AsyncDataEngine.of(ssl, connectTimeout, requestTimeout);
            asyncData = e;
        }
        return e;
    }

    /** Like {@link #exchangeAsync(String, String, String, String, java.util.Map, byte[], IntPredicate, ErrorFactory)} with a file body. */
    public CompletableFuture<Response> exchangeAsync(String server, String what, String method, String pathAndQuery,
                                                     java.util.Map<String, String> headers, java.nio.file.Path body,
                                                     IntPredicate ok, ErrorFactory errors) {
        baseUrl(server);
        return CompletableFuture.supplyAsync(() -> exchange(server, what, method, pathAndQuery, headers, body, ok, errors), ioThreads);
    }

    /**
     * A GET on the calling thread whose body is handed back as a stream once the status is known
     * (for large objects); the caller must close it (which returns the connection to the pool, or
     * closes it when the body was not read to its end). A status other than 200 throws as
     * {@link #exchange} does.
     */
    public InputStream openStream(String server, String what, String pathAndQuery, ErrorFactory errors) {
        return openStream(server, what, pathAndQuery, null, errors);
    }

    /**
     * As {@link #openStream(String, String, String, ErrorFactory)} with request headers (an
     * {@code Authorization}, say). Closing the stream before its end aborts the connection rather
     * than reading the rest of the body to reuse it (a streamed block range may have hundreds of
     * MiB left); every read is bounded by the request timeout (the socket timeout).
     */
    public InputStream openStream(String server, String what, String pathAndQuery, java.util.Map<String, String> headers,
                                  ErrorFactory errors) {
        Target target = target(server);
        long start = System.nanoTime();
        org.apache.hc.core5.http.ClassicHttpResponse resp;
        org.apache.hc.client5.http.classic.methods.HttpGet get =
                new org.apache.hc.client5.http.classic.methods.HttpGet(target.prefix() + pathAndQuery);
        if (headers != null) {
            headers.forEach(get::addHeader);
        }
        try {
            resp = data.client.executeOpen(target.host(), get, null);
        } catch (IOException e) {
            RemoteException r = failure(server, what, e, errors);
            report(server, "GET", 0, r, System.nanoTime() - start);
            throw r;
        }
        int status = resp.getCode();
        report(server, "GET", status, null, System.nanoTime() - start);
        try {
            if (status == 200 && resp.getEntity() != null) {
                InputStream in = resp.getEntity().getContent();
                long length = resp.getEntity().getContentLength();
                return new java.io.FilterInputStream(in) {
                    private long got;
                    private boolean eof;

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
                };
            }
            byte[] body;
            try {
                body = resp.getEntity() == null ? new byte[0] : resp.getEntity().getContent().readNBytes(64 * 1024);
            } catch (IOException e) {
                body = new byte[0];
            }
            closeQuietly(resp);
            throw errorAnswer(server, what, status, body, errors);
        } catch (IOException e) {
            closeQuietly(resp);
            throw failure(server, what, e, errors);
        }
    }

    private Response exchange(String server, String what, String method, String pathAndQuery,
                              java.util.Map<String, String> headers, org.apache.hc.core5.http.HttpEntity entity,
                              IntPredicate ok, ErrorFactory errors) {
        Target target = target(server);
        org.apache.hc.core5.http.message.BasicClassicHttpRequest req =
                new org.apache.hc.core5.http.message.BasicClassicHttpRequest(method, target.host(), target.prefix() + pathAndQuery);
        if (headers != null) {
            headers.forEach(req::addHeader);
        }
        if (entity != null) {
            req.setEntity(entity);
        }
        long start = System.nanoTime();
        int status;
        byte[] body;
        org.apache.hc.core5.http.Header[] answerHeaders;
        try (org.apache.hc.core5.http.ClassicHttpResponse resp = data.client.executeOpen(target.host(), req, null)) {
            status = resp.getCode();
            body = resp.getEntity() == null ? new byte[0]
                    : org.apache.hc.core5.http.io.entity.EntityUtils.toByteArray(resp.getEntity());
            answerHeaders = resp.getHeaders();
        } catch (IOException | RuntimeException e) {
            RemoteException r = failure(server, what, e, errors);
            report(server, method, 0, r, System.nanoTime() - start);
            throw r;
        }
        report(server, method, status, null, System.nanoTime() - start);
        if (!ok.test(status)) {
            throw errorAnswer(server, what, status, body, errors);
        }
        return new Response(status, answerHeaders, body);
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException e) {
            // the connection is discarded anyway
        }
    }

    /** Parses a JSON answer, or fails with a {@link Kind#BAD_RESPONSE} error naming the server. */
    public <T> T json(String server, String what, byte[] body, Class<T> type, ErrorFactory errors) {
        try {
            T v = JSON.readValue(body, type);
            if (v == null) {
                throw new IOException("empty body");
            }
            return v;
        } catch (IOException | RuntimeException e) {
            throw errors.create(server, Kind.BAD_RESPONSE, 200, 0, null, null,
                    server + ": " + what + " answered a body that is not the expected JSON (" + type.getSimpleName() + "): "
                            + shortMessage(e) + "; body starts '" + snippet(body) + "'", e);
        }
    }

    /** Like {@link #json(String, String, byte[], Class, ErrorFactory)} for generic types. */
    public <T> T json(String server, String what, byte[] body, TypeReference<T> type, ErrorFactory errors) {
        try {
            T v = JSON.readValue(body, type);
            if (v == null) {
                throw new IOException("empty body");
            }
            return v;
        } catch (IOException | RuntimeException e) {
            throw errors.create(server, Kind.BAD_RESPONSE, 200, 0, null, null,
                    server + ": " + what + " answered a body that is not the expected JSON: " + shortMessage(e)
                            + "; body starts '" + snippet(body) + "'", e);
        }
    }

    /** The exception for a non-success answer: the JSON error body's fields, or BAD_RESPONSE when it has none. */
    public static RemoteException errorAnswer(String server, String what, int status, byte[] body, ErrorFactory errors) {
        JsonNode err = null;
        try {
            JsonNode root = body == null || body.length == 0 ? null : JSON.readTree(body);
            err = root == null ? null : root.get("error");
        } catch (IOException | RuntimeException e) {
            err = null;
        }
        if (err != null && err.isObject() && err.path("code").isInt()) {
            int code = err.get("code").asInt();
            String name = err.path("name").asText(null);
            String msg = err.path("message").asText(null);
            return errors.create(server, Kind.ERROR, status, code, name, msg,
                    server + ": " + what + " failed: " + status + " " + name + " (" + code + "): " + msg, null);
        }
        return errors.create(server, Kind.BAD_RESPONSE, status, 0, null, null,
                server + ": " + what + " answered " + status + " without a Hayloft error body; body starts '"
                        + snippet(body) + "'", null);
    }

    /** Maps an exception from the HTTP stack (connect, timeout, protocol) to the caller's exception. */
    public static RemoteException failure(String server, String what, Throwable t, ErrorFactory errors) {
        Throwable c = io.hayloft.client.Futures.unwrap(t);
        if (c instanceof RemoteException r) {
            return r;
        }
        Kind kind;
        String why;
        String m = String.valueOf(c.getMessage());
        if (c instanceof HttpTimeoutException || c instanceof java.io.InterruptedIOException) {
            // java.net.http's timeouts; the data engine's: connect (a SocketTimeoutException), no
            // answer within the socket timeout, no pooled connection in time (InterruptedIOExceptions)
            kind = Kind.TIMEOUT;
            why = "timed out (" + m + ")";
        } else if (c instanceof ConnectException || c instanceof ClosedChannelException) {
            kind = Kind.UNREACHABLE;
            why = "cannot connect (" + c.getClass().getSimpleName() + ": " + m + ")";
        } else if (c instanceof ProtocolException
                || c instanceof org.apache.hc.client5.http.ClientProtocolException
                || c instanceof org.apache.hc.core5.http.HttpException
                || c instanceof org.apache.hc.core5.http.MessageConstraintException
                || m.toLowerCase(Locale.ROOT).contains("content-length") || m.contains("bytes received")
                || m.contains("Premature end")) {
            kind = Kind.BAD_RESPONSE;
            why = "answered an invalid or truncated HTTP response (" + m + ")";
        } else if (c instanceof IOException) {
            kind = Kind.UNREACHABLE;
            why = "connection failed (" + c.getClass().getSimpleName() + ": " + m + ")";
        } else {
            kind = Kind.BAD_RESPONSE;
            why = "call failed (" + c + ")";
        }
        return errors.create(server, kind, 0, 0, null, null, server + ": " + what + " " + why, c);
    }

    private static String shortMessage(Throwable e) {
        String m = String.valueOf(e.getMessage());
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }

    /** The first bytes of a body as printable text, for error messages. */
    public static String snippet(byte[] body) {
        if (body == null || body.length == 0) {
            return "";
        }
        String s = new String(body, 0, Math.min(body.length, SNIPPET), StandardCharsets.UTF_8);
        StringBuilder out = new StringBuilder(s.length());
        for (char ch : s.toCharArray()) {
            out.append(ch >= 0x20 && ch < 0x7f ? ch : '.');
        }
        return body.length > SNIPPET ? out + "..." : out.toString();
    }

    /**
     * Options of a transport. Defaults: connect timeout 2 s, request timeout 10 s (time to the whole
     * answer of one attempt), a {@link #call} deadline equal to the request timeout, 3 attempts with
     * backoff from 50 ms up to 1 s, the {@link HttpClient}'s own executor, plain HTTP, no listener.
     * TLS: either an {@link SSLContext}, or PKCS#12 files ({@link #trustStore}, and
     * {@link #keyStore} for a client certificate, mutual TLS).
     */
    public static final class Builder {
        private Duration connectTimeout = Duration.ofSeconds(2);
        private Duration requestTimeout = Duration.ofSeconds(10);
        private Duration deadline;
        private int maxAttempts = 3;
        private Duration backoffBase = Duration.ofMillis(50);
        private Duration backoffMax = Duration.ofSeconds(1);
        private Listener listener = Listener.NONE;
        private Executor executor;
        private SSLContext sslContext;
        private String trustStore;
        private String trustStorePassword;
        private String keyStore;
        private String keyStorePassword;

        private Builder() {
        }

        public Builder connectTimeout(Duration d) {
            this.connectTimeout = positive(d, "connectTimeout");
            return this;
        }

        public Builder requestTimeout(Duration d) {
            this.requestTimeout = positive(d, "requestTimeout");
            return this;
        }

        /** Runs the {@link HttpClient}'s own tasks and the waits between retries; must not be an event loop (futures complete on the transport's I/O threads). */
        public Builder executor(Executor e) {
            this.executor = Objects.requireNonNull(e, "executor");
            return this;
        }

        /** Use {@code https://} with this context (the hook for TLS-enabled servers). */
        public Builder sslContext(SSLContext c) {
            this.sslContext = Objects.requireNonNull(c, "sslContext");
            return this;
        }

        /** Use {@code https://}, trusting the certificates (the cluster CA) in this PKCS#12 file. */
        public Builder trustStore(String file, String password) {
            this.trustStore = Objects.requireNonNull(file, "trustStore");
            this.trustStorePassword = password;
            return this;
        }

        /** Present the key and certificate in this PKCS#12 file to servers that ask (mutual TLS); needs {@link #trustStore}. */
        public Builder keyStore(String file, String password) {
            this.keyStore = Objects.requireNonNull(file, "keyStore");
            this.keyStorePassword = password;
            return this;
        }

        /** Time for a whole {@link #call}: all attempts and backoffs. Default: the request timeout. */
        public Builder deadline(Duration d) {
            this.deadline = positive(d, "deadline");
            return this;
        }

        /**
         * Retries of {@link #call}: at most {@code maxAttempts} attempts (1: none), the n-th retry
         * after a random wait up to {@code min(max, base × 2^(n-1))}.
         */
        public Builder retries(int maxAttempts, Duration base, Duration max) {
            if (maxAttempts < 1) {
                throw new IllegalArgumentException("maxAttempts must be >= 1, got " + maxAttempts);
            }
            this.maxAttempts = maxAttempts;
            this.backoffBase = positive(base, "backoff base");
            this.backoffMax = positive(max, "backoff max");
            return this;
        }

        /** Told of every attempt and retry (metrics per target). */
        public Builder listener(Listener l) {
            this.listener = Objects.requireNonNull(l, "listener");
            return this;
        }

        private SSLContext sslContext() {
            if (sslContext != null) {
                if (trustStore != null || keyStore != null) {
                    throw new IllegalArgumentException("give either an sslContext or trustStore/keyStore files, not both");
                }
                return sslContext;
            }
            if (keyStore != null && trustStore == null) {
                throw new IllegalArgumentException("keyStore " + keyStore + " needs a trustStore to verify the servers");
            }
            return trustStore == null ? null : TlsFiles.context(trustStore, trustStorePassword, keyStore, keyStorePassword);
        }

        public HttpTransport build() {
            return new HttpTransport(this);
        }

        private static Duration positive(Duration d, String name) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + " must be positive, got " + d);
            }
            return d;
        }
    }
}
