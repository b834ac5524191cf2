package io.hayloft.serverkit.http;

import io.netty.handler.codec.http.FullHttpRequest;
import static io.hayloft.serverkit.http.EmbeddedHttp.Feed.BYTE_BY_BYTE;
import static io.hayloft.serverkit.http.EmbeddedHttp.Feed.WHOLE;
import static io.hayloft.serverkit.http.HttpPipelineTest.error;
import static io.hayloft.serverkit.http.HttpPipelineTest.ok;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.errors.CommonErrors;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.ResourceLeakDetector;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The pipeline with a {@link StreamedRequestHandler} ({@link StreamRouter}, {@link Dispatcher} and
 * {@link BodyStream} behind the codec) on an {@code EmbeddedChannel}: streamed bodies fed in one
 * piece and one byte at a time give the same answers; refusals, malformed bodies and early closes
 * abort the body and release every buffer.
 */
class StreamedPipelineTest {
    @BeforeAll
    static void leaks() {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    }

    /**
     * Streams {@code /s/...}: answers {@code streamed N: BODY}; {@code /s/refuse} is refused at
     * {@code openBody}, {@code /s/fail} fails on its first piece. Counts opens and aborts.
     */
    static final class Collector implements StreamedRequestHandler {
        final AtomicInteger opened = new AtomicInteger();
        final AtomicInteger aborted = new AtomicInteger();
        final AtomicInteger aggregated = new AtomicInteger();

        @Override
        public boolean streamsBody(HttpRequest head) {
            return head.uri().startsWith("/s/");
        }

        @Override
        public RequestBody openBody(HttpRequest head) {
            if (head.uri().equals("/s/refuse")) {
                throw CommonErrors.FORBIDDEN.exception("not you");
            }
            opened.incrementAndGet();
            boolean fail = head.uri().equals("/s/fail");
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            return new RequestBody() {
                @Override
                public void content(ByteBuf chunk) {
                    if (fail) {
                        throw new IllegalStateException("cannot store");
                    }
                    byte[] b = new byte[chunk.readableBytes()];
                    chunk.getBytes(chunk.readerIndex(), b);
                    got.writeBytes(b);
                }

                @Override
                public FullHttpResponse end(HttpHeaders trailers) {
                    String t = trailers.contains("T") ? " T=" + trailers.get("T") : "";
                    return HttpResponses.text(HttpResponseStatus.OK, "streamed " + got.size() + ": "
                            + got.toString(StandardCharsets.ISO_8859_1) + t, "text/plain");
                }

                @Override
                public void abort() {
                    aborted.incrementAndGet();
                }
            };
        }

        @Override
        public FullHttpResponse handle(FullHttpRequest request) {
            aggregated.incrementAndGet();
            return HttpResponses.text(HttpResponseStatus.OK, "whole " + request.content().toString(StandardCharsets.ISO_8859_1),
                    "text/plain");
        }
    }

    /** What one input gave. */
    record Result(String out, boolean open, int opened, int aborted, int aggregated) {
    }

    static Result run(String in, EmbeddedHttp.Feed feed) {
        Collector c = new Collector();
        EmbeddedHttp h = new EmbeddedHttp(EmbeddedHttp.smallLimits(), c);
        String out = h.exchange(in, feed);
        boolean open = h.channel.isOpen();
        h.assertAllReleased();
        return new Result(out, open, c.opened.get(), c.aborted.get(), c.aggregated.get());
    }

    static Result both(String in) {
        Result whole = run(in, WHOLE);
        assertThat(run(in, BYTE_BY_BYTE)).as("fed one byte at a time").isEqualTo(whole);
        return whole;
    }

    @Test
    void aStreamedBodyArrivesInOrderPastTheAggregatorsLimit() {
        String body = "0123456789".repeat(30); // 300 bytes, over the 100-byte aggregation limit
        assertThat(both("PUT /s/a HTTP/1.1\r\nContent-Length: 300\r\n\r\n" + body))
                .isEqualTo(new Result(ok("streamed 300: " + body), true, 1, 0, 0));
        assertThat(both("PUT /s/a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n1\r\nd\r\n0\r\nT: 7\r\n\r\n"))
                .isEqualTo(new Result(ok("streamed 4: abcd T=7"), true, 1, 0, 0));
        assertThat(both("PUT /s/empty HTTP/1.1\r\nContent-Length: 0\r\n\r\n"))
                .isEqualTo(new Result(ok("streamed 0: "), true, 1, 0, 0));
    }

    @Test
    void streamedAndAggregatedRequestsPipelinedAreAnsweredInOrder() {
        String in = "PUT /s/1 HTTP/1.1\r\nContent-Length: 2\r\n\r\nab"
                + "POST /whole HTTP/1.1\r\nContent-Length: 3\r\n\r\ncde"
                + "PUT /s/2 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nf\r\n0\r\n\r\n";
        assertThat(both(in)).isEqualTo(new Result(ok("streamed 2: ab") + ok("whole cde") + ok("streamed 1: f"),
                true, 2, 0, 1));
    }

    @Test
    void anExpectationIsAnsweredOnceTheBodyIsOpen() {
        assertThat(both("PUT /s/a HTTP/1.1\r\nContent-Length: 1\r\nExpect: 100-continue\r\n\r\nz"))
                .isEqualTo(new Result("HTTP/1.1 100 Continue\r\n\r\n" + ok("streamed 1: z"), true, 1, 0, 0));
        Result odd = both("PUT /s/a HTTP/1.1\r\nContent-Length: 1\r\nExpect: other\r\n\r\n");
        assertThat(odd.out()).startsWith("HTTP/1.1 417 Expectation Failed\r\n")
                .endsWith("\"message\":\"unsupported expectation: other\"}}");
        assertThat(odd.opened()).isZero();
    }

    @Test
    void aRefusedBodyIsAnsweredAtOnceAndItsRestDroppedBeforeClosing() {
        String refused = error(HttpResponseStatus.FORBIDDEN, CommonErrors.FORBIDDEN, "not you");
        // refused before the body came: the answer closes the connection, once the rest of the body was read
        assertThat(run("PUT /s/refuse HTTP/1.1\r\nContent-Length: 5\r\n\r\nabcde", BYTE_BY_BYTE))
                .isEqualTo(new Result(refused, false, 0, 0, 0));
        assertThat(both("PUT /s/refuse HTTP/1.1\r\nContent-Length: 500\r\n\r\nabcde"))
                .as("open while the body is still coming").isEqualTo(new Result(refused, true, 0, 0, 0));
        // refused when the whole body had been read already: the connection goes on
        String keptOpen = refused.replace("connection: close\r\n", "");
        assertThat(run("PUT /s/refuse HTTP/1.1\r\nContent-Length: 5\r\n\r\nabcde" + "GET /next HTTP/1.1\r\n\r\n", WHOLE))
                .isEqualTo(new Result(keptOpen + ok("whole "), true, 0, 0, 1));
        assertThat(run("PUT /s/fail HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", BYTE_BY_BYTE)).isEqualTo(new Result(error(
                HttpResponseStatus.INTERNAL_SERVER_ERROR, CommonErrors.INTERNAL,
                "internal error: java.lang.IllegalStateException: cannot store"), false, 1, 1, 0));
    }

    @Test
    void aMalformedStreamedBodyIs400AndAborted() {
        Result r = both("PUT /s/a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\nXY\r\n");
        assertThat(r).isEqualTo(new Result(error(HttpResponseStatus.BAD_REQUEST, CommonErrors.BAD_REQUEST,
                "malformed request body: java.lang.NumberFormatException: Invalid character in chunk size"),
                false, 1, 1, 0));
    }

    @Test
    void anEarlyCloseAbortsTheBody() {
        assertThat(both("PUT /s/a HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc"))
                .isEqualTo(new Result("", true, 1, 1, 0)); // assertAllReleased closes the channel
    }

    @Test
    void overTheConcurrencyLimitAStreamedRequestIs503() {
        Collector c = new Collector();
        AtomicInteger inFlight = new AtomicInteger(4);
        EmbeddedHttp h = new EmbeddedHttp(EmbeddedHttp.smallLimits(), c, null, inFlight);
        assertThat(h.exchange("PUT /s/a HTTP/1.1\r\nContent-Length: 2\r\n\r\nab", WHOLE)).isEqualTo(error(
                HttpResponseStatus.SERVICE_UNAVAILABLE, CommonErrors.OVERLOADED, "more than 4 requests in flight; retry later"));
        assertThat(c.opened.get()).isZero();
        assertThat(inFlight.get()).isEqualTo(4);
        inFlight.set(0);
        h.assertAllReleased();
    }
}
