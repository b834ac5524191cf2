package io.hayloft.client.http;

import io.hayloft.client.RemoteException;
import io.hayloft.client.RemoteException.Kind;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.IntPredicate;
import javax.net.ssl.SSLContext;

/**
 * The engine of the calls between servers and of the client's directory and admin calls:
 * {@link java.net.http.HttpClient} (HTTP/1.1, pooled keep-alive connections, connect and per-request
 * timeouts), whole request and answer bodies, each call a future that completes off the caller's
 * thread, retried and failed over by the {@link RetryPolicy} ({@link #call}). Its role is the
 * control plane: small JSON requests whose callers build a {@link HttpRequest} (cold-read's
 * {@code ClusterRpc} names that type, so cold reads and the raid-node use it below the client).
 *
 * <p>Each exchange is one blocking {@link HttpClient#send} on a thread of the process's I/O pool
 * (daemon threads {@code hayloft-http-N}, one per request in flight, idle ones end after 60 s), and its
 * future completes on that thread, never on the caller's: callers on event loops are not blocked. Not
 * {@link HttpClient#sendAsync}: on JDK 17 it hands every response to {@code CompletableFuture}'s
 * default executor, which on a machine with 2 cores or fewer (a common pool of one thread) starts a
 * new thread per response.
 *
 * <p>Thread-safe.
 */
final class RpcEngine {
    private static final AtomicInteger IO_THREADS = new AtomicInteger();

    /** The threads of the blocking sends, shared by every transport of the process: one per request in flight. */
    static final Executor IO = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
        Thread t = new Thread(r, "hayloft-http-" + IO_THREADS.incrementAndGet());
        t.setDaemon(true);
        return t;
    });

    private final HttpClient http;
    private final Duration requestTimeout;
    private final Reporting reporting;

    RpcEngine(SSLContext ssl, Duration connectTimeout, Duration requestTimeout, Executor executor, Reporting reporting) {
        HttpClient.Builder hb = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(connectTimeout)
                .followRedirects(HttpClient.Redirect.NEVER);
        if (executor != null) {
            hb.executor(executor);
        }
        if (ssl != null) {
            hb.sslContext(ssl);
        }
        this.http = hb.build();
        this.requestTimeout = requestTimeout;
        this.reporting = reporting;
    }

    /**
     * Sends {@code request} with a blocking {@link HttpClient#send} on an I/O thread; the future
     * completes on that thread with the response, or exceptionally with what {@code send} threw.
     * {@code started} is set when the answer's status line and headers arrived (what {@link Failures}
     * needs to tell a truncated answer from a broken connection).
     */
    <T> CompletableFuture<HttpResponse<T>> exchange(HttpRequest request, HttpResponse.BodyHandler<T> handler,
                                                   AtomicBoolean started) {
        CompletableFuture<HttpResponse<T>> f = new CompletableFuture<>();
        HttpResponse.BodyHandler<T> marked = info -> {
            started.set(true);
            return handler.apply(info);
        };
        IO.execute(() -> {
            try {
                f.complete(http.send(request, marked));
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

    /** One attempt, no retry: the response when its status satisfies {@code ok}, else the caller's error. */
    CompletableFuture<HttpResponse<byte[]>> send(String server, String what, HttpRequest request, IntPredicate ok,
                                                 HttpTransport.ErrorFactory errors) {
        AtomicBoolean started = new AtomicBoolean();
        long start = System.nanoTime();
        CompletableFuture<HttpResponse<byte[]>> sent;
        try {
            sent = exchange(request, HttpResponse.BodyHandlers.ofByteArray(), started);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(notSent(server, what, e, errors));
        }
        return sent.handle((resp, t) -> answer(server, what, request.method(), resp, t, started.get(), start, ok, errors));
    }

    /**
     * A call over {@code addresses} with retries and failover as {@code policy} decides (with
     * {@code classifier}, or when null the standard classification: the request may be sent twice when
     * {@code idempotent} or its method is), within
     * {@code deadline}; each attempt waits at most the request's timeout (or the transport's) and never
     * past the deadline. {@code request} builds the request for an address (its body publisher must be
     * replayable). Every attempt is reported, and every retry. A replicated directory's "not the leader"
     * (421) and "no leader" (503 {@code NO_LEADER}) are never handed back as answers, even when
     * {@code ok} takes them: the policy follows them, and when it cannot, the call fails with them.
     */
    CompletableFuture<HttpResponse<byte[]>> call(AddressList addresses, String what, Function<String, HttpRequest> request,
                                                 boolean idempotent, Duration deadline, IntPredicate ok,
                                                 HttpTransport.ErrorFactory errors, RetryPolicy policy,
                                                 RetryPolicy.Classifier classifier) {
        AtomicBoolean mayRepeat = new AtomicBoolean(idempotent);
        return policy.run(addresses, (server, n, waited, end) -> {
            HttpRequest r = request.apply(server);
            if (HttpTransport.isIdempotent(r.method())) {
                mayRepeat.set(true);
            }
            if (n > 1) {
                reporting.retry(server, r.method(), n, waited);
            }
            long left = end - System.nanoTime();
            Duration perAttempt = r.timeout().orElse(requestTimeout);
            if (perAttempt.toNanos() > left) {
                perAttempt = Duration.ofNanos(Math.max(1, left));
            }
            HttpRequest one = HttpRequest.newBuilder(r, (name, value) -> true).timeout(perAttempt).build();
            AtomicBoolean started = new AtomicBoolean();
            long start = System.nanoTime();
            CompletableFuture<HttpResponse<byte[]>> sent;
            try {
                sent = exchange(one, HttpResponse.BodyHandlers.ofByteArray(), started);
            } catch (RuntimeException e) {
                return CompletableFuture.failedFuture(notSent(server, what, e, errors));
            }
            return sent.handle((resp, t) -> answer(server, what, r.method(), resp, t, started.get(), start,
                    status -> ok.test(status) && !Failures.leaderAnswer(status, resp.body()), errors));
        }, classifier != null ? classifier : f -> RetryPolicy.standard(f, mayRepeat.get()), deadline);
    }

    /** A request that could not even be handed to the engine (a shut-down executor, say): not retried. */
    private RemoteException notSent(String server, String what, RuntimeException e, HttpTransport.ErrorFactory errors) {
        return errors.create(server, Kind.UNREACHABLE, 0, 0, null, null, server + ": " + what + " could not be sent: " + e, e);
    }

    private HttpResponse<byte[]> answer(String server, String what, String method, HttpResponse<byte[]> resp, Throwable t,
                                        boolean started, long start, IntPredicate ok, HttpTransport.ErrorFactory errors) {
        long nanos = System.nanoTime() - start;
        if (t != null) {
            RemoteException r = Failures.failure(server, what, t, started, errors);
            reporting.report(server, method, 0, r, nanos);
            throw r;
        }
        reporting.report(server, method, resp.statusCode(), null, nanos);
        if (!ok.test(resp.statusCode())) {
            throw Failures.errorAnswer(server, what, resp.statusCode(), resp.body(),
                    resp.headers().firstValue(HttpTransport.LEADER_HEADER).orElse(null), errors);
        }
        return resp;
    }
}
