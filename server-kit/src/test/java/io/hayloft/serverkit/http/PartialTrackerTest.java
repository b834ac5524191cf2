package io.hayloft.serverkit.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.errors.CommonErrors;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.ResourceLeakDetector;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link PartialTracker} behind Netty's request decoder on an {@code EmbeddedChannel}: it passes every
 * message and event on, and on idleness answers 408 only while a request is half received and the
 * server is not busy with it; a half-close in the middle of a request is answered 400.
 */
class PartialTrackerTest {
    @BeforeAll
    static void leaks() {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    }

    /** Collects the user events that pass the tracker. */
    static final class Events extends ChannelInboundHandlerAdapter {
        final List<Object> seen = new ArrayList<>();

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
            seen.add(evt);
        }
    }

    private Events events = new Events();
    private List<ByteBuf> fed;

    private EmbeddedChannel channel(String in, EmbeddedHttp.Feed feed) {
        events = new Events();
        EmbeddedChannel ch = new EmbeddedChannel(new HttpRequestDecoder(), new PartialTracker(), events);
        fed = EmbeddedHttp.feed(ch, EmbeddedHttp.ascii(in), feed);
        return ch;
    }

    /** Reads what passed the tracker: the decoded objects' classes and the body bytes, releasing each. */
    private static String passed(EmbeddedChannel ch) {
        StringBuilder s = new StringBuilder();
        Object o;
        while ((o = ch.readInbound()) != null) {
            assertThat(o).isInstanceOf(HttpObject.class);
            if (o instanceof HttpContent c) {
                s.append(c.content().toString(StandardCharsets.ISO_8859_1));
            } else {
                s.append('[').append(o.getClass().getSimpleName()).append(']');
            }
            ReferenceCountUtil.release(o);
        }
        return s.toString();
    }

    private static String answer(EmbeddedChannel ch) {
        FullHttpResponse r = ch.readOutbound();
        try {
            return r.status().code() + " " + r.headers().get("connection") + " " + r.content().toString(StandardCharsets.UTF_8);
        } finally {
            r.release();
            assertThat(r.refCnt()).isZero();
            assertThat((Object) ch.readOutbound()).isNull();
        }
    }

    @Test
    void idleInTheMiddleOfARequestIs408() {
        for (EmbeddedHttp.Feed feed : EmbeddedHttp.Feed.values()) {
            EmbeddedChannel ch = channel("POST /a HTTP/1.1\r\nContent-Length: 4\r\n\r\nab", feed);
            assertThat(passed(ch)).as("passed on unchanged").isEqualTo("[DefaultHttpRequest]ab");
            ch.pipeline().fireUserEventTriggered(IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT);
            assertThat(answer(ch)).isEqualTo("408 close " + new String(HttpResponses.errorBytes(
                    CommonErrors.REQUEST_TIMEOUT, "request not completed within the idle timeout"), StandardCharsets.UTF_8));
            assertThat(ch.isOpen()).isFalse();
            assertThat(events.seen).as("the idle event is consumed").isEmpty();
            ch.finishAndReleaseAll();
            EmbeddedHttp.assertReleased(fed);
        }
    }

    @Test
    void idleBetweenRequestsClosesWithoutAnAnswer() {
        for (EmbeddedHttp.Feed feed : EmbeddedHttp.Feed.values()) {
            EmbeddedChannel ch = channel("POST /a HTTP/1.1\r\nContent-Length: 2\r\n\r\nab", feed);
            assertThat(passed(ch)).endsWith("ab");
            ch.pipeline().fireUserEventTriggered(IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT);
            assertThat((Object) ch.readOutbound()).isNull();
            assertThat(ch.isOpen()).isFalse();
            ch.finishAndReleaseAll();
            EmbeddedHttp.assertReleased(fed);
        }
    }

    @Test
    void idleWhileTheServerIsBusyIsIgnored() {
        EmbeddedChannel ch = channel("POST /a HTTP/1.1\r\nContent-Length: 4\r\n\r\nab", EmbeddedHttp.Feed.WHOLE);
        passed(ch);
        ch.attr(Dispatcher.BUSY).set(Boolean.TRUE);
        ch.pipeline().fireUserEventTriggered(IdleStateEvent.FIRST_READER_IDLE_STATE_EVENT);
        assertThat(ch.isOpen()).isTrue();
        assertThat((Object) ch.readOutbound()).isNull();
        ch.attr(Dispatcher.BUSY).set(Boolean.FALSE);
        ch.pipeline().fireUserEventTriggered(IdleStateEvent.READER_IDLE_STATE_EVENT);
        assertThat(answer(ch)).startsWith("408 close ");
        ch.finishAndReleaseAll();
        EmbeddedHttp.assertReleased(fed);
    }

    @Test
    void aHalfCloseInTheMiddleOfARequestIs400AndOtherEventsPassOn() {
        for (EmbeddedHttp.Feed feed : EmbeddedHttp.Feed.values()) {
            EmbeddedChannel ch = channel("PUT /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n", feed);
            passed(ch);
            ch.pipeline().fireUserEventTriggered("another event");
            ch.pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);
            assertThat(answer(ch)).isEqualTo("400 close " + new String(HttpResponses.errorBytes(CommonErrors.BAD_REQUEST,
                    "connection closed before the request body was complete"), StandardCharsets.UTF_8));
            assertThat(events.seen).containsExactly("another event");
            ch.finishAndReleaseAll();
            EmbeddedHttp.assertReleased(fed);
        }
        EmbeddedChannel done = channel("GET /a HTTP/1.1\r\n\r\n", EmbeddedHttp.Feed.BYTE_BY_BYTE);
        passed(done);
        done.pipeline().fireUserEventTriggered(ChannelInputShutdownEvent.INSTANCE);
        assertThat(events.seen).as("between requests a half-close is not the tracker's").containsExactly(
                ChannelInputShutdownEvent.INSTANCE);
        assertThat(done.isOpen()).isTrue();
        assertThat(done.finishAndReleaseAll()).isFalse();
        EmbeddedHttp.assertReleased(fed);
    }
}
