package io.hayloft.serverkit.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.stream.ChunkedStream;
import io.netty.util.ResourceLeakDetector;
import java.io.ByteArrayInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link ResponseWriter} on an {@code EmbeddedChannel} with Netty's response encoder: a
 * {@link StreamedResponse} goes out as its head and its body a chunk at a time, each read by an
 * executor task; its body is closed when written, when reading it fails (the connection is then
 * closed: a short body, never a wrong one) and when the connection is gone; every buffer is released.
 */
class ResponseWriterTest {
    @BeforeAll
    static void leaks() {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    }

    private final EmbeddedHttp.Tasks tasks = new EmbeddedHttp.Tasks();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final ChannelInboundHandlerAdapter last = new ChannelInboundHandlerAdapter();
    private final EmbeddedChannel ch = new EmbeddedChannel(new HttpResponseEncoder(), last);

    private ChannelHandlerContext ctx() {
        return ch.pipeline().context(last);
    }

    /** A 10-byte body read 4 bytes at a time; fails on its {@code failAt}-th read (from 1), or never (0). */
    private StreamedResponse body(int failAt) {
        int[] reads = {0};
        FilterInputStream in = new FilterInputStream(new ByteArrayInputStream("0123456789".getBytes(StandardCharsets.US_ASCII))) {
            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                if (++reads[0] == failAt) {
                    throw new IOException("disk gone");
                }
                return super.read(b, off, len);
            }

            @Override
            public void close() throws IOException {
                closed.set(true);
                super.close();
            }
        };
        return new StreamedResponse(HttpResponseStatus.OK, new ChunkedStream(in, 4), 10, "application/octet-stream");
    }

    private String output() {
        StringBuilder s = new StringBuilder();
        Object o;
        while ((o = ch.readOutbound()) != null) {
            ByteBuf b = (ByteBuf) o;
            s.append(b.toString(StandardCharsets.ISO_8859_1));
            boolean empty = b.capacity() == 0; // the encoded empty last content: Netty's shared empty buffer
            b.release();
            assertThat(empty || b.refCnt() == 0).as("an outbound buffer is held elsewhere").isTrue();
        }
        return s.toString();
    }

    @Test
    void aStreamedBodyIsWrittenAChunkPerTaskAndClosed() {
        ChannelFuture done = ResponseWriter.write(ctx(), body(0), tasks);
        assertThat(output()).as("the head goes out with the first chunk, in one flush").isEmpty();
        int tasksRun = 0;
        while (!tasks.isEmpty()) {
            tasks.runOne();
            tasksRun++;
        }
        assertThat(tasksRun).as("three chunks and the end").isEqualTo(4);
        assertThat(output()).isEqualTo("HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\n"
                + "content-length: 10\r\n\r\n0123456789");
        assertThat(done.isSuccess()).isTrue();
        assertThat(closed).isTrue();
        assertThat(ch.isOpen()).isTrue();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void aBodyFailingToReadClosesTheConnectionAfterAShortBody() {
        ChannelFuture done = ResponseWriter.write(ctx(), body(2), tasks);
        tasks.runAll();
        assertThat(output()).endsWith("\r\n\r\n0123");
        assertThat(done.isDone() && !done.isSuccess()).isTrue();
        assertThat(done.cause()).hasMessage("disk gone");
        assertThat(closed).isTrue();
        assertThat(ch.isOpen()).isFalse();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void aConnectionGoneBeforeTheBodyClosesIt() {
        ChannelFuture done = ResponseWriter.write(ctx(), body(0), tasks);
        output();
        ch.close();
        tasks.runAll();
        assertThat(done.isSuccess()).isFalse();
        assertThat(closed).isTrue();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void anExecutorRefusingTheBodyClosesIt() {
        tasks.shutdown();
        ChannelFuture done = ResponseWriter.write(ctx(), body(0), tasks);
        output();
        assertThat(done.isSuccess()).isFalse();
        assertThat(closed).isTrue();
        assertThat(ch.isOpen()).isFalse();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }

    @Test
    void sendAndCloseMarksTheAnswerAndClosesAndDiscardReleases() {
        ResponseWriter.sendAndClose(ctx(), HttpResponses.text(HttpResponseStatus.OK, "bye", "text/plain"));
        assertThat(output()).isEqualTo("HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 3\r\n"
                + "connection: close\r\n\r\nbye");
        assertThat(ch.isOpen()).isFalse();
        StreamedResponse dropped = body(0);
        ResponseWriter.discard(dropped);
        assertThat(closed).isTrue();
        var plain = HttpResponses.text(HttpResponseStatus.OK, "x", "text/plain");
        ResponseWriter.discard(plain);
        assertThat(plain.refCnt()).isZero();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }
}
