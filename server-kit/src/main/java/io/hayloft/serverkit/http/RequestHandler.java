package io.hayloft.serverkit.http;

import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;

/**
 * Application logic of a server: turns one complete request into one response. Called on the
 * server's blocking executor, never on an event loop, so it may do disk I/O. It must not release
 * {@code request} (the caller does, in a finally block) and must return a response it owns. Throw
 * {@link io.hayloft.format.errors.ApiException} for client errors; anything else becomes a 500 JSON error.
 */
@FunctionalInterface
public interface RequestHandler {
    FullHttpResponse handle(FullHttpRequest request) throws Exception;
}
