package io.hayloft.serverkit.http;

import io.netty.buffer.Unpooled;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import java.util.concurrent.TimeUnit;
import static io.hayloft.serverkit.http.EmbeddedHttp.Feed.BYTE_BY_BYTE;
import static io.hayloft.serverkit.http.EmbeddedHttp.Feed.WHOLE;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.errors.ApiError;
import io.hayloft.format.errors.CommonErrors;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.ResourceLeakDetector;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The server's whole pipeline ({@link HttpServer#assemble}: codec, {@link PartialTracker},
 * {@link BoundedAggregator}, {@link Dispatcher}) on an {@code EmbeddedChannel}, the way Netty tests
 * its codecs: every input is fed in one piece and one byte at a time, and both must give the same
 * bytes out and leave the connection in the same state; every buffer fed and every request the
 * handler saw is released at the end, on the error paths too.
 */
class HttpPipelineTest {
    @BeforeAll
    static void leaks() {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    }

    /** What one input gave: the bytes written out, whether the connection stayed open, how many requests the handler saw. */
    record Result(String out, boolean open, int handled) {
    }

    /** Answers {@code METHOD URI BODY} as text, failing as the URI asks; remembers each request to check it released. */
    static RequestHandler echo(EmbeddedHttp[] h, AtomicInteger handled) {
        return req -> {
            h[0].track(req);
            handled.incrementAndGet();
            switch (req.uri()) {
                case "/api-error" -> throw CommonErrors.NOT_FOUND.exception("no such thing");
                case "/io-error" -> throw new IOException("disk gone");
                case "/bug" -> throw new IllegalStateException("bug");
                default -> {
                    return HttpResponses.text(HttpResponseStatus.OK, req.method() + " " + req.uri() + " "
                            + req.content().toString(StandardCharsets.ISO_8859_1), "text/plain");
                }
            }
        };
    }

    static Result run(String in, EmbeddedHttp.Feed feed, HttpLimits limits) {
        EmbeddedHttp[] h = new EmbeddedHttp[1];
        AtomicInteger handled = new AtomicInteger();
        h[0] = new EmbeddedHttp(limits, echo(h, handled));
        String out = h[0].exchange(in, feed);
        boolean open = h[0].channel.isOpen();
        assertThat(h[0].received.sum()).as("bytes counted in").isLessThanOrEqualTo(in.length());
        assertThat(h[0].sent.sum()).as("bytes counted out").isEqualTo(out.length());
        h[0].assertAllReleased();
        return new Result(out, open, handled.get());
    }

    /** Runs {@code in} fed whole and fed a byte at a time; both must give the same result, which is returned. */
    static Result both(String in) {
        return both(in, EmbeddedHttp.smallLimits());
    }

    static Result both(String in, HttpLimits limits) {
        Result whole = run(in, WHOLE, limits);
        Result bytes = run(in, BYTE_BY_BYTE, limits);
        assertThat(bytes).as("fed one byte at a time").isEqualTo(whole);
        return whole;
    }

    static String ok(String body) {
        return "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: " + body.length() + "\r\n\r\n" + body;
    }

    /** A JSON error answer closing the connection, exactly as the server writes it. */
    static String error(HttpResponseStatus status, ApiError error, String message) {
        String json = "{\"error\":{\"code\":" + error.code() + ",\"name\":\"" + error.name() + "\",\"message\":\""
                + message.replace("\\", "\\\\").replace("\"", "\\\"") + "\"}}";
        return "HTTP/1.1 " + status + "\r\ncontent-type: application/json\r\ncontent-length: " + json.length()
                + "\r\nconnection: close\r\n\r\n" + json;
    }

    @Test
    void aRequestIsAnsweredAndTheConnectionStaysOpen() {
        assertThat(both("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")).isEqualTo(new Result(ok("GET /a "), true, 1));
        assertThat(both("HEAD /a?b=c%20d HTTP/1.1\r\n\r\n")).isEqualTo(new Result(
                "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 16\r\n\r\n", true, 1));
    }

    @Test
    void bodiesOfEverySizeUpToTheLimitArriveWhole() {
        for (int n : new int[] {0, 1, 99, 100}) {
            String body = "x".repeat(n);
            assertThat(both("POST /b HTTP/1.1\r\nContent-Length: " + n + "\r\n\r\n" + body))
                    .as("%d bytes by Content-Length", n).isEqualTo(new Result(ok("POST /b " + body), true, 1));
            String chunked = (n == 0 ? "" : Integer.toHexString(n) + "\r\n" + body + "\r\n") + "0\r\nTrailer-A: 1\r\n\r\n";
            assertThat(both("PUT /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked))
                    .as("%d bytes chunked", n).isEqualTo(new Result(ok("PUT /c " + body), true, 1));
        }
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrder() {
        String in = "GET /1 HTTP/1.1\r\n\r\n"
                + "POST /2 HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
                + "POST /3 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n"
                + "GET /4 HTTP/1.1\r\nConnection: close\r\n\r\n"
                + "GET /5 HTTP/1.1\r\n\r\n";
        Result r = both(in);
        assertThat(r.out()).isEqualTo(ok("GET /1 ") + ok("POST /2 abc") + ok("POST /3 z")
                + "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 7\r\nconnection: close\r\n\r\nGET /4 ");
        assertThat(r.open()).as("closed after the request that asked so").isFalse();
        assertThat(r.handled()).as("the request after Connection: close is never handled").isEqualTo(4);
    }

    @Test
    void aBadRequestLineIs400AndCloses() {
        assertThat(both("HELLO THERE\r\n\r\n")).isEqualTo(new Result(error(HttpResponseStatus.BAD_REQUEST,
                CommonErrors.BAD_REQUEST, "malformed HTTP request: java.lang.IllegalArgumentException: text is empty"
                        + " (possibly HTTP/0.9)"), false, 0));
        Result noVersion = both("GET /a HTTP/9.x\r\n\r\n");
        assertThat(noVersion.out()).startsWith("HTTP/1.1 400 Bad Request\r\n").contains("\"name\":\"BAD_REQUEST\"");
        assertThat(noVersion.open()).isFalse();
        assertThat(noVersion.handled()).isZero();
    }

    @Test
    void aBadHeaderIs400AndCloses() {
        assertThat(both("GET /a HTTP/1.1\r\nHost x\r\n\r\n")).isEqualTo(new Result(error(HttpResponseStatus.BAD_REQUEST,
                CommonErrors.BAD_REQUEST, "malformed HTTP request: java.lang.IllegalArgumentException: No colon found"),
                false, 0));
        for (String header : new String[] {"Host : x", "Ho\u0001st: x", "Content-Length: 12x", "Content-Length: -1"}) {
            Result r = both("POST /a HTTP/1.1\r\n" + header + "\r\n\r\n");
            assertThat(r.out()).as(header).startsWith("HTTP/1.1 400 Bad Request\r\n")
                    .contains("\"name\":\"BAD_REQUEST\",\"message\":\"malformed HTTP request: ");
            assertThat(r.open()).isFalse();
            assertThat(r.handled()).isZero();
        }
    }

    @Test
    void aBadChunkedEncodingIs400AndCloses() {
        assertThat(both("POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nabc\r\n0\r\n\r\n"))
                .isEqualTo(new Result(error(HttpResponseStatus.BAD_REQUEST, CommonErrors.BAD_REQUEST,
                        "malformed HTTP request: java.lang.NumberFormatException: Invalid character in chunk size"),
                        false, 0));
        Result afterAPiece = both("POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n-1\r\n\r\n");
        assertThat(afterAPiece.out()).startsWith("HTTP/1.1 400 Bad Request\r\n").contains("chunk size");
        assertThat(afterAPiece.open()).isFalse();
        assertThat(afterAPiece.handled()).isZero();
    }

    @Test
    void aRequestLineOverTheLimitIs414() {
        assertThat(both("GET /" + "a".repeat(100) + " HTTP/1.1\r\n\r\n")).isEqualTo(new Result(error(
                HttpResponseStatus.REQUEST_URI_TOO_LONG, CommonErrors.URI_TOO_LONG,
                "request line too long: An HTTP line is larger than 64 bytes."), false, 0));
        assertThat(both("GET /" + "a".repeat(49) + " HTTP/1.1\r\n\r\n").out()).as("64 bytes with its CRLF")
                .isEqualTo(ok("GET /" + "a".repeat(49) + " "));
    }

    @Test
    void headersOverTheLimitAre431() {
        assertThat(both("GET /a HTTP/1.1\r\nX: " + "a".repeat(300) + "\r\n\r\n")).isEqualTo(new Result(error(
                HttpResponseStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, CommonErrors.HEADER_TOO_LARGE,
                "header block too large: HTTP header is larger than 256 bytes."), false, 0));
        assertThat(both("GET /a HTTP/1.1\r\n" + "X: abcdefgh\r\n".repeat(30) + "\r\n").out())
                .as("many small headers").startsWith("HTTP/1.1 431 ");
    }

    @Test
    void aBodyOverTheLimitIs413AndTheRestIsReadBeforeClosing() {
        String tooLarge = error(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, CommonErrors.BODY_TOO_LARGE,
                "request body exceeds the limit of 100 bytes");
        assertThat(both("POST /a HTTP/1.1\r\nContent-Length: 101\r\n\r\n" + "b".repeat(101)))
                .isEqualTo(new Result(tooLarge, false, 0));
        assertThat(both("POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n" + "c".repeat(64) + "\r\n40\r\n"
                + "c".repeat(64) + "\r\n0\r\n\r\n")).isEqualTo(new Result(tooLarge, false, 0));
        // the Content-Length alone is enough to answer; the connection stays open to read the body the client sends
        assertThat(both("POST /a HTTP/1.1\r\nContent-Length: 5000\r\n\r\n" + "d".repeat(200)))
                .isEqualTo(new Result(tooLarge, true, 0));
        // a pipelined request behind the oversized one is not read as a request
        assertThat(both("POST /a HTTP/1.1\r\nContent-Length: 101\r\n\r\n" + "b".repeat(101) + "GET /next HTTP/1.1\r\n\r\n"))
                .isEqualTo(new Result(tooLarge, false, 0));
    }

    @Test
    void anExpectationOverTheLimitOrUnknownIsAnsweredInJson() {
        Result big = both("PUT /a HTTP/1.1\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n");
        assertThat(big.out()).startsWith("HTTP/1.1 413 Request Entity Too Large\r\n")
                .endsWith("{\"error\":{\"code\":4,\"name\":\"BODY_TOO_LARGE\",\"message\":"
                        + "\"request body of 1000 bytes exceeds the limit of 100 bytes\"}}");
        assertThat(big.handled()).isZero();
        Result odd = both("PUT /a HTTP/1.1\r\nContent-Length: 1\r\nExpect: something\r\n\r\n");
        assertThat(odd.out()).startsWith("HTTP/1.1 417 Expectation Failed\r\n")
                .endsWith("\"message\":\"unsupported expectation: something\"}}");
        assertThat(odd.handled()).isZero();
        assertThat(both("PUT /a HTTP/1.1\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\nab").out())
                .isEqualTo("HTTP/1.1 100 Continue\r\n\r\n" + ok("PUT /a ab"));
    }

    @Test
    void aMalformedPercentEscapeIs400BeforeAnyHandler() {
        assertThat(both("GET /a%zz HTTP/1.1\r\n\r\n")).isEqualTo(new Result(error(HttpResponseStatus.BAD_REQUEST,
                CommonErrors.BAD_REQUEST, "malformed percent-escape in the request URI: invalid hex byte 'zz' at index 3"
                        + " of '/a%zz'"), false, 0));
    }

    @Test
    void whatTheHandlerThrowsIsItsJsonErrorAndTheConnectionGoesOn() {
        Result r = both("GET /api-error HTTP/1.1\r\n\r\nGET /io-error HTTP/1.1\r\n\r\nGET /bug HTTP/1.1\r\n\r\n"
                + "GET /fine HTTP/1.1\r\n\r\n");
        assertThat(r.handled()).isEqualTo(4);
        assertThat(r.open()).isTrue();
        assertThat(r.out()).contains("HTTP/1.1 404 Not Found\r\n", "\"message\":\"no such thing\"",
                "HTTP/1.1 500 Internal Server Error\r\n", "\"name\":\"IO_ERROR\",\"message\":\"I/O error: disk gone\"",
                "\"name\":\"INTERNAL\",\"message\":\"internal error: java.lang.IllegalStateException: bug\"")
                .endsWith(ok("GET /fine "));
    }

    @Test
    void anEarlyCloseAnswersNothingAndReleasesEverything() {
        for (String half : new String[] {"GE", "GET /a HTTP/1.1\r\nHo", "POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nab",
                "POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"}) {
            assertThat(both(half)).as(half).isEqualTo(new Result("", true, 0)); // assertAllReleased closes it
        }
    }

    @Test
    void aClientHalfClosingInTheMiddleOfARequestGets400() {
        for (EmbeddedHttp.Feed feed : EmbeddedHttp.Feed.values()) {
            EmbeddedHttp h = new EmbeddedHttp(EmbeddedHttp.smallLimits(), echo(new EmbeddedHttp[1], new AtomicInteger()));
            assertThat(h.exchange("POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nab", feed)).isEmpty();
            h.channel.pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);
            h.settle();
            assertThat(h.output()).isEqualTo(error(HttpResponseStatus.BAD_REQUEST, CommonErrors.BAD_REQUEST,
                    "connection closed before the request body was complete"));
            assertThat(h.channel.isOpen()).isFalse();
            h.assertAllReleased();
        }
    }

    @Test
    void aStalledRequestGets408AndAnIdleConnectionIsClosed() {
        for (EmbeddedHttp.Feed feed : EmbeddedHttp.Feed.values()) {
            EmbeddedHttp stalled = new EmbeddedHttp(EmbeddedHttp.smallLimits(), echo(new EmbeddedHttp[1], new AtomicInteger()));
            assertThat(stalled.exchange("POST /a HTTP/1.1\r\nContent-Length: 5\r\n\r\nab", feed)).isEmpty();
            stalled.advance(999);
            assertThat(stalled.channel.isOpen()).isTrue();
            stalled.advance(1);
            assertThat(stalled.output()).isEqualTo(error(HttpResponseStatus.REQUEST_TIMEOUT, CommonErrors.REQUEST_TIMEOUT,
                    "request not completed within the idle timeout"));
            assertThat(stalled.channel.isOpen()).isFalse();
            stalled.assertAllReleased();

            // a head not yet complete is not a request yet: the connection is closed without an answer
            EmbeddedHttp inHead = new EmbeddedHttp(EmbeddedHttp.smallLimits(), echo(new EmbeddedHttp[1], new AtomicInteger()));
            assertThat(inHead.exchange("GET /a HTTP/1.1\r\nHost:", feed)).isEmpty();
            inHead.advance(1000);
            assertThat(inHead.output()).isEmpty();
            assertThat(inHead.channel.isOpen()).isFalse();
            inHead.assertAllReleased();

            EmbeddedHttp[] h = new EmbeddedHttp[1];
            h[0] = new EmbeddedHttp(EmbeddedHttp.smallLimits(), echo(h, new AtomicInteger()));
            assertThat(h[0].exchange("GET /a HTTP/1.1\r\n\r\n", feed)).isEqualTo(ok("GET /a "));
            h[0].advance(1000);
            assertThat(h[0].output()).as("nothing to answer between requests").isEmpty();
            assertThat(h[0].channel.isOpen()).isFalse();
            h[0].assertAllReleased();
        }
    }

    @Test
    void theIdleTimeoutDoesNotCountTheServersOwnTime() {
        EmbeddedHttp[] h = new EmbeddedHttp[1];
        h[0] = new EmbeddedHttp(EmbeddedHttp.smallLimits(), echo(h, new AtomicInteger()));
        h[0].channel.writeInbound(Unpooled.copiedBuffer("GET /slow HTTP/1.1\r\n\r\n", StandardCharsets.US_ASCII));
        assertThat(h[0].executor.isEmpty()).as("the request waits for the executor").isFalse();
        h[0].channel.advanceTimeBy(5000, TimeUnit.MILLISECONDS);
        h[0].channel.runScheduledPendingTasks();
        assertThat(h[0].channel.isOpen()).as("still open while the server works").isTrue();
        h[0].settle();
        assertThat(h[0].output()).isEqualTo(ok("GET /slow "));
        h[0].assertAllReleased();
    }

    @Test
    void overTheConcurrencyLimitIs503() {
        AtomicInteger inFlight = new AtomicInteger(4); // four requests of other connections in flight
        EmbeddedHttp h = new EmbeddedHttp(EmbeddedHttp.smallLimits(), echo(new EmbeddedHttp[1], new AtomicInteger()),
                null, inFlight);
        assertThat(h.exchange("GET /a HTTP/1.1\r\n\r\n", WHOLE)).isEqualTo(error(HttpResponseStatus.SERVICE_UNAVAILABLE,
                CommonErrors.OVERLOADED, "more than 4 requests in flight; retry later"));
        assertThat(inFlight.get()).isEqualTo(4);
        inFlight.set(0);
        h.assertAllReleased();
    }

    @Test
    void anExecutorRefusingWorkIs503() {
        EmbeddedHttp h = new EmbeddedHttp(EmbeddedHttp.smallLimits(), echo(new EmbeddedHttp[1], new AtomicInteger()));
        h.executor.shutdown();
        assertThat(h.exchange("POST /a HTTP/1.1\r\nContent-Length: 1\r\n\r\nz", BYTE_BY_BYTE)).isEqualTo(error(
                HttpResponseStatus.SERVICE_UNAVAILABLE, CommonErrors.OVERLOADED, "server is shutting down"));
        h.assertAllReleased();
    }

    @Test
    void theFastPathAnswersInTheRequestsTurn() {
        Function<EmbeddedHttp.Feed, String> run = feed -> {
            EmbeddedHttp[] h = new EmbeddedHttp[1];
            RequestHandler fast = req -> req.uri().startsWith("/fast")
                    ? HttpResponses.text(HttpResponseStatus.OK, "fast " + req.uri(), "text/plain") : null;
            h[0] = new EmbeddedHttp(EmbeddedHttp.smallLimits(), echo(h, new AtomicInteger()), fast, new AtomicInteger());
            String out = h[0].exchange("GET /slow1 HTTP/1.1\r\n\r\nGET /fast1 HTTP/1.1\r\n\r\nGET /slow2 HTTP/1.1\r\n\r\n"
                    + "GET /fast2 HTTP/1.1\r\n\r\n", feed);
            h[0].assertAllReleased();
            return out;
        };
        String whole = run.apply(WHOLE);
        assertThat(whole).isEqualTo(ok("GET /slow1 ") + ok("fast /fast1") + ok("GET /slow2 ") + ok("fast /fast2"));
        assertThat(run.apply(BYTE_BY_BYTE)).isEqualTo(whole);
    }

    @Test
    void theRequestsCarryThePeerHeaderOnlyAsTheServerSetsIt() {
        AtomicInteger sawPeer = new AtomicInteger();
        EmbeddedHttp h = new EmbeddedHttp(EmbeddedHttp.smallLimits(), req -> {
            if (req.headers().contains(HttpServer.PEER_HEADER)) {
                sawPeer.incrementAndGet();
            }
            return HttpResponses.empty(HttpResponseStatus.NO_CONTENT);
        });
        // an EmbeddedChannel has no IP peer: a header the client forged is removed
        assertThat(h.exchange("GET /a HTTP/1.1\r\n" + HttpServer.PEER_HEADER + ": 10.0.0.1\r\n\r\n", WHOLE))
                .isEqualTo("HTTP/1.1 204 No Content\r\n\r\n"); // the encoder drops a 204's content-length
        assertThat(sawPeer.get()).isZero();
        h.assertAllReleased();
    }
}
