package io.hayloft.serverkit.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.ResourceLeakDetector;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link StreamRouter} behind Netty's request decoder on an {@code EmbeddedChannel}: the heads and
 * body pieces of the requests the handler chooses come out as {@link StreamPart}s, everything else
 * as it came; heads that did not decode or carry a bad percent-escape are never offered.
 */
class StreamRouterTest {
    @BeforeAll
    static void leaks() {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    }

    /** Streams {@code /s/...}; throws on {@code /throw}; remembers what it was offered. */
    static final class Chooser implements StreamedRequestHandler {
        final List<String> offered = new ArrayList<>();

        @Override
        public boolean streamsBody(HttpRequest head) {
            offered.add(head.uri());
            if (head.uri().equals("/throw")) {
                throw new IllegalStateException("cannot tell");
            }
            return head.uri().startsWith("/s/");
        }

        @Override
        public RequestBody openBody(HttpRequest head) {
            throw new UnsupportedOperationException();
        }

        @Override
        public FullHttpResponse handle(FullHttpRequest request) {
            throw new UnsupportedOperationException();
        }
    }

    /** What came out of the router, in order: {@code S} before a stream part, {@code R(uri)} for a plain head. */
    record Result(String out, List<String> offered) {
    }

    static Result run(String in, EmbeddedHttp.Feed feed) {
        Chooser chooser = new Chooser();
        EmbeddedChannel ch = new EmbeddedChannel(new HttpRequestDecoder(), new StreamRouter(chooser));
        List<ByteBuf> fed = EmbeddedHttp.feed(ch, EmbeddedHttp.ascii(in), feed);
        StringBuilder out = new StringBuilder();
        Object o;
        while ((o = ch.readInbound()) != null) {
            if (o instanceof StreamPart p) {
                out.append(p.head != null ? "S(" + p.head.uri() + ")" : "S" + describe(p.content));
            } else {
                out.append(o instanceof HttpRequest r ? "R(" + r.uri() + (r.decoderResult().isFailure() ? " bad" : "") + ")"
                        : describe((HttpContent) o));
            }
            ReferenceCountUtil.release(o); // a body piece shares the fed buffer's count: checked below
        }
        assertThat(ch.finishAndReleaseAll()).isFalse();
        EmbeddedHttp.assertReleased(fed);
        return new Result(out.toString(), chooser.offered);
    }

    /** A body piece as {@code [bytes]}, a last one followed by a dot, one that did not decode marked {@code bad}. */
    private static String describe(HttpContent c) {
        String body = c.content().toString(StandardCharsets.ISO_8859_1);
        String bad = c.decoderResult().isFailure() ? " bad" : "";
        return "[" + body + bad + "]" + (c instanceof LastHttpContent ? "." : "");
    }

    /** Joins consecutive body pieces (fed a byte at a time, a body comes in many), so both feeds compare equal. */
    static String merged(String out) {
        return out.replace("]S[", "").replace("][", "");
    }

    static Result both(String in) {
        Result whole = run(in, EmbeddedHttp.Feed.WHOLE);
        Result bytes = run(in, EmbeddedHttp.Feed.BYTE_BY_BYTE);
        assertThat(bytes.offered()).isEqualTo(whole.offered());
        assertThat(merged(bytes.out())).as("fed one byte at a time").isEqualTo(merged(whole.out()));
        return new Result(merged(whole.out()), whole.offered());
    }

    @Test
    void chosenRequestsAreWrappedAndOthersPassAsTheyCame() {
        Result r = both("PUT /s/1 HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
                + "POST /plain HTTP/1.1\r\nContent-Length: 2\r\n\r\nde"
                + "PUT /s/2 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nf\r\n0\r\n\r\n"
                + "GET /throw HTTP/1.1\r\n\r\n");
        assertThat(r.out()).isEqualTo("S(/s/1)S[abc].R(/plain)[de].S(/s/2)S[f].R(/throw)[].");
        assertThat(r.offered()).containsExactly("/s/1", "/plain", "/s/2", "/throw");
    }

    @Test
    void headsThatDidNotDecodeOrHaveABadEscapeAreNotOffered() {
        Result r = both("PUT /s/a%zz HTTP/1.1\r\nContent-Length: 1\r\n\r\nx");
        assertThat(r.out()).isEqualTo("R(/s/a%zz)[x].");
        assertThat(r.offered()).isEmpty();
        Result bad = run("PUT /s/a HTTP/1.1\r\nContent-Length: x\r\n\r\n", EmbeddedHttp.Feed.WHOLE);
        assertThat(bad.out()).startsWith("R(/s/a bad)");
        assertThat(bad.offered()).isEmpty();
    }

    @Test
    void aBodyPieceThatDidNotDecodeEndsTheRouting() {
        Result r = both("PUT /s/a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\nZZ\r\n");
        assertThat(r.out()).startsWith("S(/s/a)S[x").contains(" bad]");
    }
}
