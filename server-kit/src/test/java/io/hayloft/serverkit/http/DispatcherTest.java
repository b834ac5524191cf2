package io.hayloft.serverkit.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.errors.CommonErrors;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ResourceLeakDetector;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link Dispatcher} alone on an {@code EmbeddedChannel}, fed aggregated requests, with an executor
 * whose tasks the test runs: one request per connection at a time, the rest queued in order, reads
 * paused and the channel marked busy meanwhile; refusals on the event loop; every request and every
 * response released, also when the connection closes with requests queued or a response on its way;
 * asynchronous answers (a future the test completes) free the executor, keep the connection busy,
 * release the request when they complete and are discarded when the connection is gone.
 */
class DispatcherTest {
    @BeforeAll
    static void leaks() {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    }

    private final EmbeddedHttp.Tasks tasks = new EmbeddedHttp.Tasks();
    private final AtomicInteger inFlight = new AtomicInteger();
    private final List<FullHttpRequest> sent = new ArrayList<>();
    private final List<FullHttpResponse> answered = new ArrayList<>();

    private EmbeddedChannel channel(int maxConcurrent) {
        RequestHandler handler = req -> {
            FullHttpResponse r = HttpResponses.text(HttpResponseStatus.OK, "done " + req.uri() + " "
                    + req.content().toString(StandardCharsets.ISO_8859_1), "text/plain");
            answered.add(r);
            return r;
        };
        return new EmbeddedChannel(new Dispatcher(handler, tasks, maxConcurrent, null, inFlight));
    }

    /** Futures of the requests to {@code /async/...} that {@link #asyncChannel} gave, oldest first. */
    private final ArrayDeque<CompletableFuture<FullHttpResponse>> futures = new ArrayDeque<>();

    /** As {@link #channel}, but a request to {@code /async/...} is answered by a future the test completes. */
    private EmbeddedChannel asyncChannel(int maxConcurrent) {
        RequestHandler handler = new RequestHandler() {
            @Override
            public FullHttpResponse handle(FullHttpRequest req) {
                return answer(req);
            }

            @Override
            public CompletableFuture<FullHttpResponse> handleAsync(FullHttpRequest req) {
                if (!req.uri().startsWith("/async/")) {
                    return RequestHandler.super.handleAsync(req);
                }
                CompletableFuture<FullHttpResponse> f = new CompletableFuture<>();
                futures.add(f);
                return f;
            }
        };
        return new EmbeddedChannel(new Dispatcher(handler, tasks, maxConcurrent, null, inFlight));
    }

    /** The echo answer, read from the request when called (it must still be readable). */
    private FullHttpResponse answer(FullHttpRequest req) {
        FullHttpResponse r = HttpResponses.text(HttpResponseStatus.OK, "done " + req.uri() + " "
                + req.content().toString(StandardCharsets.ISO_8859_1), "text/plain");
        answered.add(r);
        return r;
    }

    private FullHttpRequest request(String uri, String body) {
        FullHttpRequest r = new DefaultFullHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, uri,
                ByteBufAllocator.DEFAULT.buffer().writeBytes(body.getBytes(StandardCharsets.ISO_8859_1)));
        sent.add(r);
        return r;
    }

    private static String read(EmbeddedChannel ch) {
        FullHttpResponse r = ch.readOutbound();
        if (r == null) {
            return null;
        }
        String s = r.status().code() + (HttpUtil.isKeepAlive(r) ? " " : " close ") + r.content().toString(StandardCharsets.UTF_8);
        r.release();
        assertThat(r.refCnt()).isZero();
        return s;
    }

    private void assertAllReleased(EmbeddedChannel ch) {
        assertThat(ch.finishAndReleaseAll()).isFalse();
        for (FullHttpRequest r : sent) {
            assertThat(r.refCnt()).as("request %s", r.uri()).isZero();
        }
        for (FullHttpResponse r : answered) {
            assertThat(r.refCnt()).as("a response").isZero();
        }
        assertThat(inFlight.get()).isZero();
    }

    @Test
    void oneRequestAtATimeInTheOrderTheyCame() {
        EmbeddedChannel ch = channel(10);
        ch.writeInbound(request("/1", "a"), request("/2", "b"), request("/3", "c"));
        assertThat(tasks.isEmpty()).isFalse();
        assertThat(ch.config().isAutoRead()).as("reads paused while a request is processed").isFalse();
        assertThat(ch.attr(Dispatcher.BUSY).get()).isTrue();
        assertThat(inFlight.get()).isEqualTo(1);
        assertThat(read(ch)).isNull();
        for (String expected : new String[] {"200 done /1 a", "200 done /2 b", "200 done /3 c"}) {
            assertThat(tasks.size()).as("one task at a time").isEqualTo(1);
            tasks.runOne();
            assertThat(read(ch)).isEqualTo(expected);
            assertThat(read(ch)).as("one answer per task").isNull();
        }
        assertThat(tasks.isEmpty()).isTrue();
        assertThat(ch.config().isAutoRead()).isTrue();
        assertThat(ch.attr(Dispatcher.BUSY).get()).isFalse();
        assertAllReleased(ch);
    }

    @Test
    void aClosedConnectionReleasesWhatIsQueuedAndWhatIsAnsweredLate() {
        EmbeddedChannel ch = channel(10);
        ch.writeInbound(request("/1", "a"), request("/2", "b"));
        ch.close();
        tasks.runAll(); // the handler answers after the connection closed: the answer is released
        assertThat(answered).hasSize(1);
        assertThat(read(ch)).isNull();
        assertAllReleased(ch);
    }

    @Test
    void refusalsAreAnsweredOnTheEventLoopAndClose() {
        EmbeddedChannel ch = channel(10);
        FullHttpRequest bad = request("/x", "");
        bad.setDecoderResult(DecoderResult.failure(new TooLongHttpLineException("An HTTP line is larger than 64 bytes.")));
        ch.writeInbound(bad);
        assertThat(read(ch)).isEqualTo("414 close {\"error\":{\"code\":6,\"name\":\"URI_TOO_LONG\",\"message\":"
                + "\"request line too long: An HTTP line is larger than 64 bytes.\"}}");
        assertThat(ch.isOpen()).isFalse();
        assertThat(tasks.isEmpty()).isTrue();
        assertAllReleased(ch);

        EmbeddedChannel full = channel(1);
        inFlight.set(1);
        full.writeInbound(request("/y", "z"));
        assertThat(read(full)).isEqualTo("503 close {\"error\":{\"code\":8,\"name\":\"OVERLOADED\",\"message\":"
                + "\"more than 1 requests in flight; retry later\"}}");
        assertThat(inFlight.get()).isEqualTo(1);
        inFlight.set(0);
        assertAllReleased(full);
    }

    @Test
    void anAsyncAnswerFreesTheExecutorAndKeepsTheConnectionBusyUntilItIsWritten() {
        EmbeddedChannel ch = asyncChannel(10);
        FullHttpRequest first = request("/async/1", "a");
        ch.writeInbound(first, request("/2", "b"));
        tasks.runOne();
        assertThat(tasks.isEmpty()).as("the executor's task ended with the answer pending").isTrue();
        assertThat(read(ch)).isNull();
        assertThat(ch.config().isAutoRead()).as("reads paused until the answer is written").isFalse();
        assertThat(ch.attr(Dispatcher.BUSY).get()).isTrue();
        assertThat(inFlight.get()).isEqualTo(1);
        assertThat(first.refCnt()).as("the handler may read the request until its future completes").isEqualTo(1);

        futures.remove().complete(answer(first));
        assertThat(first.refCnt()).as("released when the future completed").isZero();
        assertThat(read(ch)).isEqualTo("200 done /async/1 a");
        assertThat(tasks.size()).as("the next request, once the answer was written").isEqualTo(1);
        tasks.runOne();
        assertThat(read(ch)).isEqualTo("200 done /2 b");
        assertThat(ch.config().isAutoRead()).isTrue();
        assertAllReleased(ch);
    }

    @Test
    void aFailedAsyncAnswerIsAnsweredAsAThrowWouldBeUnwrapped() {
        EmbeddedChannel ch = asyncChannel(10);
        ch.writeInbound(request("/async/1", ""), request("/async/2", ""), request("/async/3", ""));
        tasks.runOne();
        futures.remove().completeExceptionally(new ExecutionException(new CompletionException(
                CommonErrors.NOT_FOUND.exception("no such thing"))));
        assertThat(read(ch)).isEqualTo("404 {\"error\":{\"code\":2,\"name\":\"NOT_FOUND\",\"message\":\"no such thing\"}}");
        tasks.runOne();
        futures.remove().completeExceptionally(new CompletionException(new IOException("disk gone")));
        assertThat(read(ch)).isEqualTo("500 {\"error\":{\"code\":10,\"name\":\"IO_ERROR\",\"message\":\"I/O error: disk gone\"}}");
        tasks.runOne();
        futures.remove().complete(null);
        assertThat(read(ch)).startsWith("500 {\"error\":{\"code\":9,\"name\":\"INTERNAL\"");
        assertThat(ch.isOpen()).as("a failure answer keeps the connection").isTrue();
        assertAllReleased(ch);
    }

    @Test
    void anAsyncAnswerToAClosedConnectionIsDiscarded() {
        EmbeddedChannel ch = asyncChannel(10);
        FullHttpRequest r = request("/async/1", "a");
        FullHttpRequest queued = request("/2", "b");
        ch.writeInbound(r, queued);
        tasks.runOne();
        ch.close();
        assertThat(queued.refCnt()).as("a queued request is released when the connection closes").isZero();
        assertThat(r.refCnt()).as("the pending one stays the handler's").isEqualTo(1);
        assertThat(inFlight.get()).isEqualTo(1);
        FullHttpResponse late = answer(r);
        futures.remove().complete(late);
        assertThat(late.refCnt()).as("discarded").isZero();
        assertThat(r.refCnt()).isZero();
        assertThat(read(ch)).isNull();
        assertThat(tasks.isEmpty()).isTrue();
        assertAllReleased(ch);
    }

    @Test
    void otherMessagesPassOn() {
        EmbeddedChannel ch = channel(10);
        ch.writeInbound("not a request");
        assertThat((Object) ch.readInbound()).isEqualTo("not a request");
        assertAllReleased(ch);
    }
}
