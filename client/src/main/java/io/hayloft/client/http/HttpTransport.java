package io.hayloft.client.http;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.client.DirectoryException;
import io.hayloft.client.Futures;
import io.hayloft.client.RemoteException.Kind;
import io.hayloft.client.RemoteException;
import io.hayloft.client.store.StoreException;
import io.hayloft.cold.ClusterRpc;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.IntPredicate;
import javax.net.ssl.SSLContext;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.apache.hc.core5.http.io.entity.FileEntity;

/**
 * Hayloft's one HTTP client layer: how the client library and every server call another server. It
 * builds URLs from {@code host:port} addresses ({@code http://}, or {@code https://} when built with an
 * {@link SSLContext}) or URL prefixes, sends requests, and turns every way a call can fail into a
 * {@link RemoteException} of the caller's type: an error answer (status, code, name and message from
 * the JSON error body), no connection, a timeout, or an answer that is not valid (a non-JSON error
 * body, a truncated body, an invalid status line, JSON that does not parse). Failures are classified
 * by exception type ({@link Failures}), retried and failed over by the one {@link RetryPolicy}, over
 * an {@link AddressList} when a service has several addresses.
 *
 * <p>One engine per role:
 * <ul>
 *   <li><b>Control calls</b> ({@link #send}, {@link #call}, {@link #clusterRpc()}'s whole-body calls): the
 *       directory API, admin calls, and the calls servers make to each other (a cold reader's block
 *       reads, the raid-node's, a cache's fetches): {@link RpcEngine}, java.net.http, each call a future
 *       completing on an I/O thread, with the retry policy, deadlines and failover. Its callers build
 *       {@link HttpRequest}s (cold-read's interface names that type).</li>
 *   <li><b>Data calls on the calling thread and streamed bodies</b> ({@link #exchange}, the reads of
 *       {@link #exchangeAsync}, {@link #openStream}, {@link #openRequest}): {@link DataEngine}, Apache
 *       HttpClient 5 classic: the blocking client API's reads do their I/O on the caller's thread
 *       without a hand-off, and streams get the connection's own input and output.</li>
 *   <li><b>Data writes without a blocked thread</b> (the PUT, POST and DELETE of {@link #exchangeAsync}):
 *       {@link AsyncDataEngine}, HttpClient 5 async on a few reactor threads, so a put to three
 *       replicas holds no thread per request.</li>
 * </ul>
 * The data calls make one attempt (their callers, the client's reader and writer, retry whole
 * operations with the same {@link RetryPolicy} and fail over between replicas themselves). Every
 * attempt is reported to a {@link Listener} (metrics per target). {@link #TYPED} decodes error bodies
 * into the client's exception types by their code.
 *
 * <p>Thread-safe: one instance is meant to be shared by every call of an application.
 */
public final class HttpTransport {
    /** The JSON mapper of the client: ignores unknown fields (either side may add fields). */
    public static final ObjectMapper JSON = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    /**
     * The header of a directory replica's 421 {@code NOT_LEADER} answer that names the leader's HTTP
     * address ({@code host:port}), as its error body's {@code leader} field does.
     */
    public static final String LEADER_HEADER = "X-Hayloft-Leader";

    /** Builds the caller's exception type (store or directory) for a failed call. */
    @FunctionalInterface
    public interface ErrorFactory {
        RemoteException create(String server, Kind kind, int httpStatus, int code, String errorName,
                               String serverMessage, String message, Throwable cause);
    }

    /**
     * Told of every attempt a transport makes, for metrics per target (a server may plug Micrometer
     * in; the client does not depend on it). Called on the transport's threads; must be thread-safe
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
            return StoreException.of(server, kind, status, code, name, serverMessage, message, cause);
        }
        if (code >= 200 && code < 300) {
            return new DirectoryException(server, kind, status, code, name, serverMessage, message, cause);
        }
        return new RemoteException(server, kind, status, code, name, serverMessage, message, cause);
    };

    private final String scheme;
    private final SSLContext ssl;
    private final Duration requestTimeout;
    private final Duration connectTimeout;
    private final RetryPolicy retry;
    private final Reporting reporting;
    private final RpcEngine rpc;
    private final DataEngine data;

    private HttpTransport(Builder b) {
        SSLContext ssl = b.sslContext();
        this.scheme = ssl == null ? "http" : "https";
        this.ssl = ssl;
        this.requestTimeout = b.requestTimeout;
        this.connectTimeout = b.connectTimeout;
        this.retry = new RetryPolicy(b.maxAttempts, b.backoffBase, b.backoffMax,
                b.deadline == null ? b.requestTimeout : b.deadline, b.executor);
        this.reporting = new Reporting(b.listener);
        this.rpc = new RpcEngine(ssl, b.connectTimeout, b.requestTimeout, b.executor, reporting);
        this.data = new DataEngine(ssl, b.connectTimeout, b.requestTimeout, reporting, this);
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
    public ClusterRpc clusterRpc() {
        return new TransportRpc(this);
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
    public ClusterRpc.StreamedRequest openRequest(String server, String what, String method,
                                                                  String pathAndQuery, Map<String, String> headers,
                                                                  long length) {
        DataEngine.Target target = data.target(server);
        long start = System.nanoTime();
        return StreamedUpload.start(data.client, target.host(), method, target.prefix() + pathAndQuery, headers, length,
                RpcEngine.IO, connectTimeout.plus(requestTimeout), server, what, (status, failure) -> reporting.report(server,
                        method, status, failure == null ? null : failure(server, what, failure, TYPED), System.nanoTime() - start));
    }

    /** The transport's I/O threads (one per call in flight), for blocking data calls made asynchronous. */
    public Executor ioExecutor() {
        return RpcEngine.IO;
    }

    /** {@code http} or {@code https}. */
    public String scheme() {
        return scheme;
    }

    /** The TLS context of the calls, or null for plain HTTP. */
    public SSLContext sslContext() {
        return ssl;
    }

    public Duration requestTimeout() {
        return requestTimeout;
    }

    /** The default deadline of a {@link #call} (all its attempts and backoffs together). */
    public Duration deadline() {
        return retry.deadline();
    }

    /** The retry policy of {@link #call} (attempts, backoff, default deadline). */
    public RetryPolicy retryPolicy() {
        return retry;
    }

    /** Retries made so far by {@link #call} (attempts after the first), over all targets. */
    public long retries() {
        return reporting.retries();
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

    // ---------------------------------------------------------------- control calls (RpcEngine)

    /**
     * Sends {@code request} once (no retry) and completes with the response when its status
     * satisfies {@code ok}; otherwise fails with the error {@code errors} builds.
     *
     * @param what the call in words for error messages, e.g. {@code "PUT /3/7/0"}
     */
    public CompletableFuture<HttpResponse<byte[]>> send(String server, String what, HttpRequest request, IntPredicate ok,
                                                        ErrorFactory errors) {
        return rpc.send(server, what, request, ok, errors);
    }

    /**
     * Sends {@code request} with retries within the transport's {@link #deadline()}; see
     * {@link #call(String, String, HttpRequest, boolean, Duration, IntPredicate, ErrorFactory)}.
     */
    public CompletableFuture<HttpResponse<byte[]>> call(String server, String what, HttpRequest request,
                                                        boolean idempotentPost, IntPredicate ok, ErrorFactory errors) {
        return call(server, what, request, idempotentPost, retry.deadline(), ok, errors);
    }

    /**
     * Sends {@code request} to one server with the transport's {@link RetryPolicy}: completes with the
     * response when its status satisfies {@code ok}; otherwise fails with the error {@code errors}
     * builds from the last attempt. Each attempt waits at most the request's timeout (or the
     * transport's) and never past {@code deadline}. Retried (see {@link RetryPolicy#standard}) while
     * attempts and time remain: any request when no connection could be made (nothing was sent); an
     * idempotent request (GET, HEAD, PUT, DELETE, or any method when {@code idempotent} is true) after
     * the connection broke, a timeout of the attempt or a 503. A retried request is sent again with
     * the same body publisher: give a replayable one ({@code BodyPublishers.ofByteArray}, {@code noBody}).
     *
     * @param idempotent true when the caller knows the request (a POST) may be repeated safely
     * @param deadline time for the whole call, attempts and backoffs together
     */
    public CompletableFuture<HttpResponse<byte[]>> call(String server, String what, HttpRequest request, boolean idempotent,
                                                        Duration deadline, IntPredicate ok, ErrorFactory errors) {
        return call(AddressList.of(server), what, a -> request, idempotent, deadline, ok, errors);
    }

    /**
     * A call to a service with several addresses: as {@link #call(String, String, HttpRequest, boolean,
     * Duration, IntPredicate, ErrorFactory)}, starting at the list's preferred address and going on to
     * the next one when the {@link RetryPolicy} says so (nothing was sent, or a request that may be
     * repeated broke off), within the one deadline; the address that answers becomes the preferred one.
     * A replicated directory's follower that names the leader (421 {@code NOT_LEADER}) sends the call
     * there at once, and a replica without a leader (503 {@code NO_LEADER}) to the next address
     * ({@link RetryPolicy}, "A replicated service's leader"), whatever the method.
     *
     * @param request builds the request for an address
     */
    public CompletableFuture<HttpResponse<byte[]>> call(AddressList addresses, String what, Function<String, HttpRequest> request,
                                                        boolean idempotent, Duration deadline, IntPredicate ok,
                                                        ErrorFactory errors) {
        Objects.requireNonNull(deadline, "deadline");
        return call(addresses, what, request, idempotent, deadline, ok, errors, retry);
    }

    /** As {@link #call(AddressList, String, Function, boolean, Duration, IntPredicate, ErrorFactory)} with another policy's budgets. */
    public CompletableFuture<HttpResponse<byte[]>> call(AddressList addresses, String what, Function<String, HttpRequest> request,
                                                        boolean idempotent, Duration deadline, IntPredicate ok,
                                                        ErrorFactory errors, RetryPolicy policy) {
        return rpc.call(addresses, what, request, idempotent, deadline, ok, errors, policy, null);
    }

    /** GET, HEAD, PUT and DELETE: repeating one leaves the server as one would. */
    public static boolean isIdempotent(String method) {
        return switch (method.toUpperCase(Locale.ROOT)) {
            case "GET", "HEAD", "PUT", "DELETE", "OPTIONS" -> true;
            default -> false;
        };
    }

    /**
     * {@code GET path} on a server that may still be starting (a directory's {@code /health} at a
     * server's start): retried on every failure and every status but 200, at most every
     * {@code period}, until {@code patience} ran out; the last failure then.
     */
    public byte[] getPatiently(String server, String path, Duration patience, Duration period) throws InterruptedException {
        return getPatiently(List.of(server), path, patience, period);
    }

    /**
     * {@link #getPatiently(String, String, Duration, Duration)} from whichever of {@code servers} (the
     * replicas of a directory group, say) answers first: round the list, each address at most every
     * {@code period}.
     */
    public byte[] getPatiently(List<String> servers, String path, Duration patience, Duration period) throws InterruptedException {
        String server = servers.get(0);
        Duration timeout = requestTimeout.compareTo(patience) < 0 ? requestTimeout : patience;
        RetryPolicy patient = new RetryPolicy(Integer.MAX_VALUE, period, period, patience, null);
        CompletableFuture<HttpResponse<byte[]>> f = rpc.call(AddressList.of(servers), "GET " + path,
                a -> request(uri(a, path)).timeout(timeout).GET().build(), true, patience,
                s -> s == 200, TYPED, patient, t -> RetryPolicy.Action.NEXT_ADDRESS);
        try {
            return f.get().body();
        } catch (ExecutionException e) {
            Throwable c = Futures.unwrap(e);
            throw c instanceof RuntimeException r ? r : new RemoteException(server, Kind.UNREACHABLE, 0, 0, null, null,
                    String.valueOf(c), c);
        }
    }

    /** Sends a request whose body is streamed back to the caller; only the status is checked here. */
    public <T> CompletableFuture<HttpResponse<T>> sendRaw(String server, String what, HttpRequest request,
                                                          HttpResponse.BodyHandler<T> handler, ErrorFactory errors) {
        AtomicBoolean started = new AtomicBoolean();
        CompletableFuture<HttpResponse<T>> sent;
        try {
            sent = rpc.exchange(request, handler, started);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(
                    errors.create(server, Kind.UNREACHABLE, 0, 0, null, null, server + ": " + what + " could not be sent: " + e, e));
        }
        return sent.handle((resp, t) -> {
            if (t != null) {
                throw Failures.failure(server, what, t, started.get(), errors);
            }
            return resp;
        });
    }

    // ---------------------------------------------------------------- data calls (DataEngine, AsyncDataEngine)

    /** An answer of a data call ({@link #exchange}): the status, the response headers and the whole body. */
    public static final class Response {
        private final int status;
        private final Header[] headers;
        private final byte[] body;

        Response(int status, Header[] headers, byte[] body) {
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
            for (Header h : headers) {
                if (h.getName().equalsIgnoreCase(name)) {
                    return h.getValue();
                }
            }
            return null;
        }
    }

    /**
     * A data call (store reads and writes) sent on the CALLING thread with the {@link DataEngine}:
     * {@code method} on {@code server} ({@code host:port} or a URL prefix such as a cache's
     * {@code http://cache:8080/store}) plus {@code pathAndQuery}, with {@code headers} and an optional
     * body. Answers with the response when its status satisfies {@code ok}; otherwise throws the error
     * {@code errors} builds, as {@link #send} does. One attempt (no retries but the one for a pooled
     * connection the server had closed, see {@code DataEngine}); reported on the calling thread.
     *
     * @param what the call in words for error messages, e.g. {@code "GET /3/7/0"}
     * @param body the request body, or null for none
     * @throws IllegalArgumentException for a bad server address
     */
    public Response exchange(String server, String what, String method, String pathAndQuery,
                             Map<String, String> headers, byte[] body, IntPredicate ok, ErrorFactory errors) {
        return data.exchange(server, what, method, pathAndQuery, headers,
                body == null ? null : new ByteArrayEntity(body, ContentType.APPLICATION_OCTET_STREAM), ok, errors);
    }

    /** Like {@link #exchange(String, String, String, String, Map, byte[], IntPredicate, ErrorFactory)} with a file as the body, streamed from disk. */
    public Response exchange(String server, String what, String method, String pathAndQuery,
                             Map<String, String> headers, Path body, IntPredicate ok, ErrorFactory errors) {
        return data.exchange(server, what, method, pathAndQuery, headers,
                new FileEntity(body.toFile(), ContentType.APPLICATION_OCTET_STREAM), ok, errors);
    }

    /**
     * {@link #exchange(String, String, String, String, Map, byte[], IntPredicate, ErrorFactory)}
     * without blocking the caller, with the same answers and errors: a GET on one of the transport's
     * I/O threads (the future completes there); a PUT, POST or DELETE on the {@link AsyncDataEngine}
     * (no thread waits for the answer; the future completes on a reactor thread, so what is chained to
     * it must not block). A bad server address fails at once (thrown).
     */
    public CompletableFuture<Response> exchangeAsync(String server, String what, String method, String pathAndQuery,
                                                     Map<String, String> headers, byte[] body, IntPredicate ok,
                                                     ErrorFactory errors) {
        return data.exchangeAsync(server, what, method, pathAndQuery, headers, body, ok, errors);
    }

    /** Like {@link #exchangeAsync(String, String, String, String, Map, byte[], IntPredicate, ErrorFactory)} with a file body (on an I/O thread). */
    public CompletableFuture<Response> exchangeAsync(String server, String what, String method, String pathAndQuery,
                                                     Map<String, String> headers, Path body, IntPredicate ok, ErrorFactory errors) {
        baseUrl(server);
        return CompletableFuture.supplyAsync(() -> exchange(server, what, method, pathAndQuery, headers, body, ok, errors), RpcEngine.IO);
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
    public InputStream openStream(String server, String what, String pathAndQuery, Map<String, String> headers,
                                  ErrorFactory errors) {
        return data.openStream(server, what, pathAndQuery, headers, errors);
    }

    // ---------------------------------------------------------------- answers and failures (Failures)

    /** Parses a JSON answer, or fails with a {@link Kind#BAD_RESPONSE} error naming the server. */
    public <T> T json(String server, String what, byte[] body, Class<T> type, ErrorFactory errors) {
        return Failures.json(server, what, body, type, errors);
    }

    /** Like {@link #json(String, String, byte[], Class, ErrorFactory)} for generic types. */
    public <T> T json(String server, String what, byte[] body, TypeReference<T> type, ErrorFactory errors) {
        return Failures.json(server, what, body, type, errors);
    }

    /** The exception for a non-success answer: the JSON error body's fields, or BAD_RESPONSE when it has none. */
    public static RemoteException errorAnswer(String server, String what, int status, byte[] body, ErrorFactory errors) {
        return Failures.errorAnswer(server, what, status, body, errors);
    }

    /**
     * Maps an exception from the HTTP stack (connect, timeout, protocol) to the caller's exception, by
     * its type ({@link Failures}), for a failure before the answer began (a broken connection is
     * UNREACHABLE, not a truncated answer).
     */
    public static RemoteException failure(String server, String what, Throwable t, ErrorFactory errors) {
        return Failures.failure(server, what, t, false, errors);
    }

    /** The first bytes of a body as printable text, for error messages. */
    public static String snippet(byte[] body) {
        return Failures.snippet(body);
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
