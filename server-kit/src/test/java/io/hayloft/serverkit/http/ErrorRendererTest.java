package io.hayloft.serverkit.http;

import static io.hayloft.serverkit.http.EmbeddedHttp.ascii;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.errors.ApiError;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.ResourceLeakDetector;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A server built with its own {@link ErrorRenderer} (the S3 gateway's XML) answers every error of
 * the pipeline through it: header block and request line too long, body too large, a bad escape,
 * a handler that threw, plain HTTP on a TLS port. Servers built without one keep the JSON errors.
 */
class ErrorRendererTest {
    /** Renders "E name status [uri]" and "F exception-class [uri]" as text. */
    static final ErrorRenderer TEXT = new ErrorRenderer() {
        @Override
        public FullHttpResponse error(HttpRequest request, ApiError error, String message) {
            return HttpResponses.text(HttpResponseStatus.valueOf(error.status()),
                    "E " + error.name() + " " + error.status() + " " + (request == null ? "-" : request.uri()), "text/plain");
        }

        @Override
        public FullHttpResponse failure(HttpRequest request, Throwable failure) {
            return HttpResponses.text(HttpResponseStatus.BAD_GATEWAY, "F " + failure.getClass().getSimpleName() + " "
                    + (request == null ? "-" : request.uri()), "text/plain");
        }
    };

    @BeforeAll
    static void leaks() {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    }

    private static EmbeddedHttp server(RequestHandler handler) {
        return new EmbeddedHttp(EmbeddedHttp.smallLimits(), handler, null, new AtomicInteger(), TEXT);
    }

    @Test
    void pipelineErrorsGoThroughTheRenderer() {
        RequestHandler ok = r -> HttpResponses.text(HttpResponseStatus.OK, "ok", "text/plain");
        EmbeddedHttp h = server(ok);
        assertThat(h.exchange(ascii("GET /" + "a".repeat(100) + " HTTP/1.1\r\n\r\n"), EmbeddedHttp.Feed.WHOLE))
                .contains("414").contains("E URI_TOO_LONG 414").doesNotContain("{\"error\"");
        h.assertAllReleased();
        h = server(ok);
        assertThat(h.exchange(ascii("GET / HTTP/1.1\r\nx-big: " + "b".repeat(300) + "\r\n\r\n"), EmbeddedHttp.Feed.WHOLE))
                .contains("E HEADER_TOO_LARGE 431");
        h.assertAllReleased();
        h = server(ok);
        assertThat(h.exchange(ascii("PUT /x HTTP/1.1\r\nContent-Length: 200\r\n\r\n" + "c".repeat(200)), EmbeddedHttp.Feed.WHOLE))
                .contains("E BODY_TOO_LARGE 413 /x");
        h.assertAllReleased();
        h = server(ok);
        assertThat(h.exchange(ascii("GET /%zz HTTP/1.1\r\n\r\n"), EmbeddedHttp.Feed.WHOLE)).contains("E BAD_REQUEST 400 /%zz");
        h.assertAllReleased();
    }

    @Test
    void handlerFailuresGoThroughTheRenderer() {
        EmbeddedHttp h = server(r -> {
            throw new IllegalStateException("boom");
        });
        assertThat(h.exchange(ascii("GET /y HTTP/1.1\r\n\r\n"), EmbeddedHttp.Feed.WHOLE))
                .startsWith("HTTP/1.1 502").contains("F IllegalStateException /y");
        h.assertAllReleased();
    }

    @Test
    void withoutARendererTheErrorsStayJson() {
        EmbeddedHttp h = new EmbeddedHttp(EmbeddedHttp.smallLimits(), r -> {
            throw new IllegalStateException("boom");
        });
        assertThat(h.exchange(ascii("GET /y HTTP/1.1\r\n\r\n"), EmbeddedHttp.Feed.WHOLE)).contains("{\"error\":{\"code\":9");
        h.assertAllReleased();
    }

    @Test
    void plainHttpOnATlsPortIsRendered() {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.attr(RequestErrors.RENDERER).set(TEXT);
        ch.pipeline().addLast(new PlainHttpRefusal());
        ch.writeInbound(Unpooled.wrappedBuffer("GET / HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
        ByteBuf out = ch.readOutbound();
        try {
            String text = out.toString(StandardCharsets.ISO_8859_1);
            assertThat(text).startsWith("HTTP/1.1 400 Bad Request\r\n").containsIgnoringCase("connection: close\r\n")
                    .endsWith("\r\n\r\nE TLS_REQUIRED 400 -");
        } finally {
            out.release();
        }
        assertThat(ch.isOpen()).isFalse();
        ch.finishAndReleaseAll();
    }
}
