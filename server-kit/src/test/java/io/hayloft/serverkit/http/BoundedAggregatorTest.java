package io.hayloft.serverkit.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.PrematureChannelClosureException;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.ResourceLeakDetector;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link BoundedAggregator} behind Netty's request decoder on an {@code EmbeddedChannel}, with a
 * 10-byte limit: whole requests up to it, a 413 JSON answer over it (the rest of the body read and
 * dropped before closing), JSON answers to expectations it cannot meet, {@link StreamPart}s let by.
 */
class BoundedAggregatorTest {
    private static final String TOO_LARGE = "413 close {\"error\":{\"code\":4,\"name\":\"BODY_TOO_LARGE\","
            + "\"message\":\"request body exceeds the limit of 10 bytes\"}}";

    @BeforeAll
    static void leaks() {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    }

    /**
     * What one input gave: the requests aggregated (method, uri, body), the answers written, whether
     * the connection was open, and whether closing it found a request half aggregated (Netty's
     * aggregator then fires a {@link PrematureChannelClosureException}, which the server's
     * dispatcher answers by closing).
     */
    record Result(String requests, String answers, boolean open, boolean halfAggregated) {
        Result(String requests, String answers, boolean open) {
            this(requests, answers, open, false);
        }
    }

    static Result run(String in, EmbeddedHttp.Feed feed) {
        EmbeddedChannel ch = new EmbeddedChannel(new HttpRequestDecoder(), new BoundedAggregator(10));
        List<ByteBuf> fed = EmbeddedHttp.feed(ch, EmbeddedHttp.ascii(in), feed);
        StringBuilder requests = new StringBuilder();
        Object o;
        while ((o = ch.readInbound()) != null) {
            FullHttpRequest r = (FullHttpRequest) o;
            requests.append(r.method()).append(' ').append(r.uri()).append(' ')
                    .append(r.content().toString(StandardCharsets.ISO_8859_1)).append(';');
            r.release();
            assertThat(r.refCnt()).isZero();
        }
        StringBuilder answers = new StringBuilder();
        while ((o = ch.readOutbound()) != null) {
            FullHttpResponse r = (FullHttpResponse) o;
            answers.append(r.status().code()).append(' ').append(r.headers().get("connection")).append(' ')
                    .append(r.content().toString(StandardCharsets.UTF_8));
            boolean empty = r.content().capacity() == 0; // Netty's shared 100 Continue: an empty buffer, never freed
            r.release();
            assertThat(empty || r.refCnt() == 0).as("response released").isTrue();
        }
        boolean open = ch.isOpen();
        boolean half = false;
        try {
            ch.finishAndReleaseAll();
        } catch (PrematureChannelClosureException e) {
            half = true;
        }
        EmbeddedHttp.assertReleased(fed);
        return new Result(requests.toString(), answers.toString(), open, half);
    }

    static Result both(String in) {
        Result whole = run(in, EmbeddedHttp.Feed.WHOLE);
        assertThat(run(in, EmbeddedHttp.Feed.BYTE_BY_BYTE)).as("fed one byte at a time").isEqualTo(whole);
        return whole;
    }

    @Test
    void bodiesUpToTheLimitAreAggregated() {
        assertThat(both("POST /a HTTP/1.1\r\nContent-Length: 10\r\n\r\n0123456789"
                + "PUT /b HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\nGET /c HTTP/1.1\r\n\r\n"))
                .isEqualTo(new Result("POST /a 0123456789;PUT /b x;GET /c ;", "", true));
    }

    @Test
    void aBodyOverTheLimitIs413AndItsRestIsDroppedBeforeClosing() {
        assertThat(both("POST /a HTTP/1.1\r\nContent-Length: 11\r\n\r\n01234567890"))
                .isEqualTo(new Result("", TOO_LARGE, false));
        assertThat(both("POST /a HTTP/1.1\r\nContent-Length: 11\r\n\r\n0123"))
                .as("open until the body ends").isEqualTo(new Result("", TOO_LARGE, true));
        assertThat(both("POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nabcdef\r\n6\r\nghijkl\r\n0\r\n\r\n"))
                .isEqualTo(new Result("", TOO_LARGE, false));
    }

    @Test
    void expectationsItCannotMeetAreAnsweredInJson() {
        assertThat(both("PUT /a HTTP/1.1\r\nContent-Length: 11\r\nExpect: 100-continue\r\n\r\n")).isEqualTo(new Result("",
                "413 null {\"error\":{\"code\":4,\"name\":\"BODY_TOO_LARGE\",\"message\":\"request body of 11 bytes"
                        + " exceeds the limit of 10 bytes\"}}", true, true)); // the body it refused is still awaited
        assertThat(both("PUT /a HTTP/1.1\r\nContent-Length: 1\r\nConnection: close\r\nExpect: x\r\n\r\n")).isEqualTo(
                new Result("", "417 close {\"error\":{\"code\":1,\"name\":\"BAD_REQUEST\",\"message\":"
                        + "\"unsupported expectation: x\"}}", true, true));
        assertThat(both("PUT /a HTTP/1.1\r\nContent-Length: 1\r\nExpect: 100-continue\r\n\r\nz"))
                .isEqualTo(new Result("PUT /a z;", "100 null ", true));
    }

    @Test
    void streamPartsPassByUntouched() {
        EmbeddedChannel ch = new EmbeddedChannel(new BoundedAggregator(10));
        StreamPart head = StreamPart.head(new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.PUT, "/s"));
        ch.writeInbound(head);
        assertThat((Object) ch.readInbound()).isSameAs(head);
        ReferenceCountUtil.release(head);
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }
}
