package io.hayloft.client;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Helpers for the client's {@link CompletableFuture}s: unwrapping the exception a dependent stage
 * wraps, and waiting for a future while throwing the client's own exception types.
 *
 * <p>Thread-safe (stateless).
 */
public final class Futures {
    private Futures() {
    }

    /** The real cause of a future's failure: strips {@link CompletionException} and {@link ExecutionException}. */
    public static Throwable unwrap(Throwable t) {
        Throwable cur = t;
        while ((cur instanceof CompletionException || cur instanceof ExecutionException) && cur.getCause() != null) {
            cur = cur.getCause();
        }
        return cur;
    }

    /**
     * Waits for {@code future} and returns its value; a failure is rethrown as it was raised (a
     * {@link HayloftException} stays one), a checked cause is wrapped in a {@link HayloftException}.
     * An interrupt cancels nothing but restores the flag and throws.
     */
    public static <T> T await(CompletableFuture<T> future) {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new HayloftException("interrupted while waiting for a Hayloft call", e);
        } catch (ExecutionException | CancellationException e) {
            Throwable c = unwrap(e);
            if (c instanceof RuntimeException r) {
                throw r;
            }
            if (c instanceof Error err) {
                throw err;
            }
            throw new HayloftException(String.valueOf(c.getMessage()), c);
        }
    }

    /** Whether an operation that failed with {@code t} may succeed when tried again: a {@link RemoteException} that says so. */
    static boolean remoteRetryable(Throwable t) {
        return t instanceof RemoteException r && r.isRetryable();
    }

    /** A future already failed with {@code t}. */
    public static <T> CompletableFuture<T> failed(Throwable t) {
        return CompletableFuture.failedFuture(t);
    }
}
