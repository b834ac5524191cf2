package io.hayloft.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.hayloft.client.RemoteException.Kind;
import io.hayloft.client.http.RetryPolicy;
import io.hayloft.client.store.StoreException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The client's operation retries ({@link RetryPolicy#retry}): what the writer, reader and deletes run through. */
class OperationRetryTest {
    private final RetryPolicy retrier = new RetryPolicy(4, Duration.ofMillis(1), Duration.ofMillis(5), null, ForkJoinPool.commonPool());

    private static StoreException error(Kind kind, int status) {
        return new StoreException("s:1", kind, status, 0, null, null, "boom " + status, null);
    }

    @Test
    void retriesTransientFailuresUntilSuccess() {
        AtomicInteger calls = new AtomicInteger();
        String v = Futures.await(retrier.retry(() -> calls.incrementAndGet() < 3
                ? CompletableFuture.failedFuture(error(Kind.UNREACHABLE, 0)) : CompletableFuture.completedFuture("ok"),
                Futures::remoteRetryable));
        assertThat(v).isEqualTo("ok");
        assertThat(calls).hasValue(3);
    }

    @Test
    void stopsAtTheAttemptLimitWithTheLastError() {
        AtomicInteger calls = new AtomicInteger();
        Throwable t = catchThrowable(() -> Futures.await(retrier.retry(() ->
                CompletableFuture.failedFuture(error(Kind.ERROR, 500 + calls.incrementAndGet())), Futures::remoteRetryable)));
        assertThat(calls).hasValue(4);
        assertThat(t).isInstanceOf(StoreException.class).hasMessage("boom 504");
    }

    @Test
    void doesNotRetryClientErrorsOrThrownExceptions() {
        AtomicInteger calls = new AtomicInteger();
        Throwable t = catchThrowable(() -> Futures.await(retrier.retry(() -> {
            calls.incrementAndGet();
            return CompletableFuture.failedFuture(error(Kind.ERROR, 400));
        }, Futures::remoteRetryable)));
        assertThat(calls).hasValue(1);
        assertThat(((StoreException) t).httpStatus()).isEqualTo(400);
        Throwable thrown = catchThrowable(() -> Futures.await(retrier.retry(() -> {
            throw new IllegalArgumentException("bad");
        }, x -> true)));
        assertThat(thrown).isInstanceOf(IllegalArgumentException.class);
    }
}
