package io.hayloft.serverkit.http;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;

/**
 * A {@link RequestHandler} that takes the bodies of some requests as a stream instead of whole: for
 * a request it {@linkplain #streamsBody chooses}, {@link HttpServer} does not aggregate the body (its
 * {@code maxBodyBytes} does not apply: the handler bounds what it accepts); it calls
 * {@link #openBody} with the request head, then {@link RequestBody#content} with each piece of the
 * body as it arrives (at most the codec's chunk size, 64 KiB), then {@link RequestBody#end} for the
 * response. Every other request is aggregated and given to {@link #handle}, as by a plain {@link RequestHandler}.
 *
 * <p>Threads and order: {@link #streamsBody} runs on the event loop and must not block; the
 * {@link RequestBody} calls run on the server's blocking executor, one at a time and in order (not
 * always on the same thread, each call happening-after the previous one), so they may write files.
 * Backpressure: while more than {@link BodyStream#HIGH_WATER} bytes of a body wait for the executor,
 * the server stops reading that connection.
 *
 * <p>Failure: an {@link io.hayloft.format.errors.ApiException} (or an {@link java.io.IOException}: 500 {@code IO_ERROR}, or
 * anything else: 500 {@code INTERNAL}) thrown by {@link #openBody}, {@link RequestBody#content} or
 * {@link RequestBody#end} is answered at once with its JSON error and {@code Connection: close}; the
 * rest of the body is read and dropped (up to 64 MiB, so that the client gets to read the answer),
 * then the connection is closed. {@link RequestBody#abort} is called whenever a body that was opened
 * gets no {@link RequestBody#end} that returned normally: a failure, a malformed body, the client
 * disconnecting or timing out mid-body, the server closing.
 */
public interface StreamedRequestHandler extends RequestHandler {

    /**
     * Whether the body of {@code head} is streamed to {@link #openBody} (e.g. {@code PUT /blocks/...}).
     * On the event loop: must not block, should not throw (a throw counts as false). Heads that did
     * not decode, or whose URI has a bad percent-escape, are never offered.
     */
    boolean streamsBody(HttpRequest head);

    /**
     * Starts a streamed request: checks it (authorization, name, declared length) and opens what
     * receives the body. On the executor. The server sets {@link HttpServer#PEER_HEADER} in
     * {@code head} as for aggregated requests. An {@code Expect: 100-continue} is answered
     * {@code 100 Continue} once this returned.
     */
    RequestBody openBody(HttpRequest head) throws Exception;

    /** The receiving end of one streamed request body. Not thread-safe: the server calls it serially. */
    interface RequestBody {
        /**
         * The next bytes of the body (never empty). The buffer belongs to the server: read it during
         * the call, do not release or keep it.
         */
        void content(ByteBuf chunk) throws Exception;

        /**
         * The body is complete; {@code trailers} holds the trailer fields of a chunked body (empty
         * otherwise). Returns the response, which the server writes and releases.
         */
        FullHttpResponse end(HttpHeaders trailers) throws Exception;

        /** The request ended without a response from {@link #end}: discard what was received. Must not throw. */
        void abort();
    }
}
