package io.hayloft.serverkit.http;

import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import java.util.concurrent.CompletableFuture;

/**
 * Application logic of a server: turns one complete request into one response. Called on the
 * server's blocking executor, never on an event loop, so it may do disk I/O. It must not release
 * {@code request} (the caller does, once the answer is in) and must return a response it owns. Throw
 * {@link io.hayloft.format.errors.ApiException} for client errors; anything else becomes a 500 JSON error.
 *
 * <p>Asynchronous answers: the server calls {@link #handleAsync}, whose default runs {@link #handle}.
 * A handler that waits on something that completes later (a consensus round, a call to another
 * server) overrides it and returns a future instead of parking the executor's thread; see
 * {@link #handleAsync} for the contract. A handler that wraps another one (adds a check, times it)
 * must forward both methods, or the wrapped handler's asynchronous answers are waited for by
 * {@link #handle} on an executor thread.
 */
@FunctionalInterface
public interface RequestHandler {
    /**
     * The response to {@code request}, on the calling thread. For a handler whose answers are
     * asynchronous, this waits for {@link #handleAsync}'s future.
     */
    FullHttpResponse handle(FullHttpRequest request) throws Exception;

    /**
     * The response to {@code request}, as a future: called by the server on its blocking executor,
     * as {@link #handle} is. The default runs {@link #handle} and returns a completed future, or a
     * failed one with what it threw.
     *
     * <p>Contract of an asynchronous answer (a future not yet done when this returns): the executor
     * thread goes back to its pool at once, and the response is written when the future completes,
     * from whatever thread completes it (the write hops to the connection's event loop); completing
     * it must not block on the connection. The request stays the handler's to read until the future
     * completes and is released by the server then, exactly once; the handler must not release it
     * nor keep it past that point. A future failed with an {@link io.hayloft.format.errors.ApiException}
     * (directly or wrapped in a {@link java.util.concurrent.CompletionException} or
     * {@link java.util.concurrent.ExecutionException}) is answered with its JSON error, anything else
     * as an exception thrown by {@link #handle}; a future completed with null is answered 500. The
     * connection takes no other request until the answer is written (pipelined ones wait, in order),
     * and the request counts as in flight (towards {@code maxConcurrentRequests}) until the future
     * completes, so the future must complete: bound what it waits for (a timeout) rather than leave it
     * pending. If the connection closed meanwhile, the response is released unwritten. Must not return null.
     */
    default CompletableFuture<FullHttpResponse> handleAsync(FullHttpRequest request) {
        try {
            return CompletableFuture.completedFuture(handle(request));
        } catch (Throwable e) {
            return CompletableFuture.failedFuture(e);
        }
    }
}
