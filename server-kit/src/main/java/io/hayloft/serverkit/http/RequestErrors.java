package io.hayloft.serverkit.http;

import io.hayloft.format.errors.ApiException;
import io.hayloft.format.errors.CommonErrors;
import io.netty.channel.Channel;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.AttributeKey;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JSON error answers the pipeline gives on its own: to a request the codec could not decode
 * ({@link #decodeError}), to a URI with a bad percent-escape ({@link #malformedUri}), and to a
 * request whose handler threw or whose answer failed ({@link #errorResponse}, {@link #unwrap}). Used
 * by the {@link Dispatcher}, the {@link StreamRouter} and {@link BodyStream}.
 *
 * <p>Thread-safe: stateless.
 */
final class RequestErrors {
    /** Under {@link HttpServer}'s name, as every log line of the pipeline. */
    private static final Logger LOG = LoggerFactory.getLogger(HttpServer.class);

    /** The {@link ErrorRenderer} of a channel's server, set by {@link HttpServer#assemble} (absent: {@link ErrorRenderer#JSON}). */
    static final AttributeKey<ErrorRenderer> RENDERER = AttributeKey.valueOf("hayloft.errorRenderer");

    private RequestErrors() {
    }

    /** How the server of {@code ch} renders its errors. */
    static ErrorRenderer renderer(Channel ch) {
        ErrorRenderer r = ch.attr(RENDERER).get();
        return r == null ? ErrorRenderer.JSON : r;
    }

    /**
     * The error answer for a request that failed: an {@link ApiException} as its JSON error, an I/O
     * failure as 500 {@code IO_ERROR}, anything else as 500 {@code INTERNAL} (both logged).
     */
    static FullHttpResponse errorResponse(HttpRequest request, Throwable e) {
        if (e instanceof ApiException api) {
            return HttpResponses.error(api);
        }
        if (e instanceof IOException || e instanceof UncheckedIOException) {
            LOG.warn("I/O error serving {} {}", request.method(), request.uri(), e);
            return HttpResponses.error(CommonErrors.IO_ERROR, "I/O error: " + e.getMessage());
        }
        LOG.error("internal error serving {} {}", request.method(), request.uri(), e);
        return HttpResponses.error(CommonErrors.INTERNAL, "internal error: " + e);
    }

    /**
     * What a failed future failed with: the cause of a {@link CompletionException} or
     * {@link ExecutionException} (the wrappers {@code CompletableFuture} adds), as deep as they nest;
     * any other failure as it is.
     */
    static Throwable unwrap(Throwable failure) {
        Throwable e = failure;
        while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }

    /**
     * Why {@code uri} cannot be decoded (a bad percent-escape in its path or query), or null: checked
     * once here, so that no handler meets an undecodable URI.
     */
    static String malformedUri(String uri) {
        if (uri.indexOf('%') < 0) {
            return null;
        }
        try {
            QueryStringDecoder q = new QueryStringDecoder(uri);
            q.path();
            q.parameters();
            return null;
        } catch (IllegalArgumentException e) {
            return "malformed percent-escape in the request URI: " + e.getMessage();
        }
    }

    /**
     * The answer to a request the codec could not decode: 414 for a request line over the limit,
     * 431 for a header block over the limit, 400 for anything else.
     */
    static FullHttpResponse decodeError(Throwable cause) {
        return decodeError(ErrorRenderer.JSON, null, cause);
    }

    /** As {@link #decodeError(Throwable)}, rendered by {@code renderer} for {@code request} (as far as it was decoded). */
    static FullHttpResponse decodeError(ErrorRenderer renderer, HttpRequest request, Throwable cause) {
        if (cause instanceof TooLongHttpLineException) {
            return renderer.error(request, CommonErrors.URI_TOO_LONG, "request line too long: " + cause.getMessage());
        }
        if (cause instanceof TooLongHttpHeaderException) {
            return renderer.error(request, CommonErrors.HEADER_TOO_LARGE, "header block too large: " + cause.getMessage());
        }
        if (cause instanceof TooLongFrameException) {
            return renderer.error(request, CommonErrors.BAD_REQUEST, "request too long: " + cause.getMessage());
        }
        return renderer.error(request, CommonErrors.BAD_REQUEST, "malformed HTTP request: " + cause);
    }
}
