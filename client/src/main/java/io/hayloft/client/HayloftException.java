package io.hayloft.client;

/**
 * The base of every error the Hayloft client raises. Unchecked, so it can travel through
 * {@link java.util.concurrent.CompletableFuture}s; the asynchronous methods complete exceptionally
 * with it (wrapped in a {@link java.util.concurrent.CompletionException} by dependent stages, see
 * {@link Futures#unwrap(Throwable)}), the blocking methods throw it.
 *
 * <p>Immutable, hence thread-safe.
 */
public class HayloftException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public HayloftException(String message) {
        super(message);
    }

    public HayloftException(String message, Throwable cause) {
        super(message, cause);
    }
}
