package io.hayloft.serverkit.http;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link Dispatcher} alone on an {@code EmbeddedChannel}, fed aggregated requests, with an executor
 * whose tasks the test runs: one request per connection at a time, the rest queued in order, reads
 * paused and the channel marked busy meanwhile; refusals on the event loop; every request and every
 * response released, also when the connection closes with requests queued or a response on its way.
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
    void otherMessagesPassOn() {
        EmbeddedChannel ch = channel(10);
        ch.writeInbound("not a request");
        assertThat((Object) ch.readInbound()).isEqualTo("not a request");
        assertAllReleased(ch);
    }
}
