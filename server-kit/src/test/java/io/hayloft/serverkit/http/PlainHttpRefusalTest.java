package io.hayloft.serverkit.http;

import java.util.List;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ResourceLeakDetector;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The first-bytes check of a TLS listener ({@link PlainHttpRefusal}), fed whole and one byte at a time. */
class PlainHttpRefusalTest {
    @BeforeAll
    static void leaks() {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    }

    @Test
    void plainHttpIsAnsweredWithA400JsonErrorAndClosed() {
        EmbeddedChannel ch = new EmbeddedChannel(new PlainHttpRefusal());
        byte[] request = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < 4; i++) {
            ch.writeInbound(Unpooled.wrappedBuffer(request, i, 1));
            assertThat((Object) ch.readOutbound()).isNull();
        }
        ch.writeInbound(Unpooled.wrappedBuffer(request, 4, 1));
        ByteBuf out = ch.readOutbound();
        try {
            String text = out.toString(StandardCharsets.UTF_8);
            String body = "{\"error\":{\"code\":12,\"name\":\"TLS_REQUIRED\","
                    + "\"message\":\"this listener speaks HTTPS (TLS): use https://host:port\"}}";
            assertThat(text).isEqualTo("HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: "
                    + body.length() + "\r\nConnection: close\r\n\r\n" + body);
        } finally {
            out.release();
        }
        assertThat(ch.isOpen()).isFalse();
        assertThat((Object) ch.readInbound()).isNull();
        ch.finishAndReleaseAll();
    }

    @Test
    void aTlsRecordPassesOnUntouchedAndTheCheckRemovesItself() {
        EmbeddedChannel ch = new EmbeddedChannel(new PlainHttpRefusal());
        byte[] hello = {0x16, 0x03, 0x01, 0x00, 0x02, 0x01, 0x00}; // handshake record, TLS 1.0 header, 2 bytes
        for (int i = 0; i < 4; i++) {
            ch.writeInbound(Unpooled.wrappedBuffer(hello, i, 1));
            assertThat((Object) ch.readInbound()).isNull();
        }
        ch.writeInbound(Unpooled.wrappedBuffer(hello, 4, 1));
        ByteBuf first = ch.readInbound();
        assertThat(ByteBufUtilBytes.of(first)).containsExactly(0x16, 0x03, 0x01, 0x00, 0x02);
        first.release();
        assertThat(ch.pipeline().get(PlainHttpRefusal.class)).isNull();
        ch.writeInbound(Unpooled.wrappedBuffer(hello, 5, 2));
        ByteBuf rest = ch.readInbound();
        assertThat(ByteBufUtilBytes.of(rest)).containsExactly(0x01, 0x00);
        rest.release();
        assertThat((Object) ch.readOutbound()).isNull();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void wholeOrOneByteAtATimeTheAnswerIsTheSameAndEveryBufferIsReleased() {
        String answer = null;
        for (EmbeddedHttp.Feed feed : EmbeddedHttp.Feed.values()) {
            EmbeddedChannel ch = new EmbeddedChannel(new PlainHttpRefusal());
            List<ByteBuf> fed = EmbeddedHttp.feed(ch,
                    EmbeddedHttp.ascii("POST /x HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"), feed);
            ByteBuf out = ch.readOutbound();
            String text = out.toString(StandardCharsets.UTF_8);
            out.release();
            assertThat(out.refCnt()).isZero();
            assertThat(answer == null || answer.equals(text)).as(feed.name()).isTrue();
            answer = text;
            assertThat(ch.isOpen()).isFalse();
            assertThat(ch.finishAndReleaseAll()).isFalse();
            EmbeddedHttp.assertReleased(fed);
        }
        assertThat(answer).startsWith("HTTP/1.1 400 Bad Request\r\n").contains("TLS_REQUIRED");
        for (EmbeddedHttp.Feed feed : EmbeddedHttp.Feed.values()) {
            EmbeddedChannel ch = new EmbeddedChannel(new PlainHttpRefusal());
            byte[] record = {0x16, 0x03, 0x03, 0x00, 0x03, 0x01, 0x02, 0x03};
            List<ByteBuf> fed = EmbeddedHttp.feed(ch, record, feed);
            StringBuilder passed = new StringBuilder();
            ByteBuf in;
            while ((in = ch.readInbound()) != null) {
                for (int b : ByteBufUtilBytes.of(in)) {
                    passed.append(b).append(',');
                }
                in.release();
            }
            assertThat(passed.toString()).as(feed.name()).isEqualTo("22,3,3,0,3,1,2,3,");
            assertThat((Object) ch.readOutbound()).isNull();
            assertThat(ch.finishAndReleaseAll()).isFalse();
            EmbeddedHttp.assertReleased(fed);
        }
    }

    private static final class ByteBufUtilBytes {
        static int[] of(ByteBuf b) {
            int[] out = new int[b.readableBytes()];
            for (int i = 0; i < out.length; i++) {
                out[i] = b.getUnsignedByte(b.readerIndex() + i);
            }
            return out;
        }
    }
}
