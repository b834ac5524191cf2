package io.hayloft.serverkit.http;

import io.hayloft.format.errors.ApiError;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpRequest;

/**
 * How a server renders the error answers that its pipeline gives on its own: a request the codec
 * could not decode (414, 431, 400), a bad percent-escape, overload (503), a body over the limit
 * (413), a refused expectation (417), a stalled or half-closed request (408, 400), plain HTTP on a
 * TLS port, and a handler (or streamed body) that threw. {@link #JSON} is every Hayloft server's
 * format ({@code {"error":{...}}}); a server speaking another protocol (the S3 gateway's XML errors)
 * passes its own to {@link HttpServer#start(String, int, HttpLimits, RequestHandler,
 * java.util.concurrent.ExecutorService, int, io.netty.handler.ssl.SslContext, RequestHandler, ErrorRenderer)}.
 *
 * <p>Implementations must be thread-safe (called on event loops and executor threads), must not
 * block, and return a response the caller owns. The pipeline adds {@code Connection: close} where it
 * closes the connection, and overrides the status for a refused expectation.
 */
public interface ErrorRenderer {

    /**
     * The answer to an error the pipeline detected itself.
     *
     * @param request the request's head as far as it was decoded, or null (plain HTTP on a TLS port)
     * @param error   what went wrong (one of {@link io.hayloft.format.errors.CommonErrors}: its name and status)
     * @param message what to tell the client
     */
    FullHttpResponse error(HttpRequest request, ApiError error, String message);

    /**
     * The answer to a request whose handler threw {@code failure} (an
     * {@link io.hayloft.format.errors.ApiException}, an I/O error, anything else).
     */
    FullHttpResponse failure(HttpRequest request, Throwable failure);

    /** Today's JSON error bodies (the default of every server). */
    ErrorRenderer JSON = new ErrorRenderer() {
        @Override
        public FullHttpResponse error(HttpRequest request, ApiError error, String message) {
            return HttpResponses.error(error, message);
        }

        @Override
        public FullHttpResponse failure(HttpRequest request, Throwable failure) {
            return RequestErrors.errorResponse(request, failure);
        }
    };
}
