package io.hayloft.client;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Bounded retries with exponential backoff and jitter, without blocking a thread: the next attempt
 * is scheduled on a delayed executor. Attempt {@code n} (from 1) waits a random time between half
 * and all of {@code min(maxBackoff, initialBackoff * 2^(n-1))} before running.
 *
 * <p>Thread-safe (immutable).
 */
final class Retrier {
    private final int maxAttempts;
    private final Duration initial;
    private final Duration max;
    private final Executor executor;

    Retrier(int maxAttempts, Duration initial, Duration max, Executor executor) {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be >= 1, was " + maxAttempts);
        }
        this.maxAttempts = maxAttempts;
        this.initial = initial;
        this.max = max;
        this.executor = executor;
    }

    int maxAttempts() {
        return maxAttempts;
    }

    /** Runs {@code op} until it succeeds, fails with a non-retryable error, or the attempts are used up. */
    <T> CompletableFuture<T> run(Supplier<CompletableFuture<T>> op, Predicate<Throwable> retryable) {
        return attempt(op, retryable, 1);
    }

    private <T> CompletableFuture<T> attempt(Supplier<CompletableFuture<T>> op, Predicate<Throwable> retryable, int n) {
        CompletableFuture<T> f;
        try {
            f = op.get();
        } catch (RuntimeException e) {
            f = CompletableFuture.failedFuture(e);
        }
        // one future per attempt: the answer is passed on as it comes (a put makes one call per replica)
        CompletableFuture<T> out = new CompletableFuture<>();
        f.whenComplete((v, t) -> {
            if (t == null) {
                out.complete(v);
                return;
            }
            Throwable c = Futures.unwrap(t);
            if (n >= maxAttempts || !retryable.test(c)) {
                out.completeExceptionally(c);
                return;
            }
            CompletableFuture.supplyAsync(() -> null, delayed(n))
                    .thenCompose(x -> attempt(op, retryable, n + 1))
                    .whenComplete((v2, t2) -> {
                        if (t2 == null) {
                            out.complete(v2);
                        } else {
                            out.completeExceptionally(Futures.unwrap(t2));
                        }
                    });
        });
        return out;
    }

    /**
     * The attempts after a first one that ran elsewhere (on a caller's thread) and failed with
     * {@code first}: fails with it when it is not retryable or there is no attempt left; else runs
     * {@code op} from attempt 2 on, as {@link #run} would have.
     */
    <T> CompletableFuture<T> after(Throwable first, Supplier<CompletableFuture<T>> op, Predicate<Throwable> retryable) {
        Throwable c = Futures.unwrap(first);
        if (maxAttempts <= 1 || !retryable.test(c)) {
            return CompletableFuture.failedFuture(c);
        }
        return CompletableFuture.supplyAsync(() -> null, delayed(1)).thenCompose(x -> attempt(op, retryable, 2));
    }

    /** Completes after the backoff of attempt {@code attempt} (from 1), on the executor. */
    CompletableFuture<Void> pause(int attempt) {
        return CompletableFuture.runAsync(() -> { }, delayed(attempt));
    }

    private Executor delayed(int attempt) {
        long cap = max.toMillis();
        long base = initial.toMillis() << Math.min(attempt - 1, 20);
        long d = Math.min(cap, Math.max(1, base));
        long jittered = d / 2 + ThreadLocalRandom.current().nextLong(d / 2 + 1);
        return CompletableFuture.delayedExecutor(jittered, TimeUnit.MILLISECONDS, executor);
    }

    /** Retryable: a {@link RemoteException} that says so. */
    static boolean remoteRetryable(Throwable t) {
        return t instanceof RemoteException r && r.isRetryable();
    }
}
