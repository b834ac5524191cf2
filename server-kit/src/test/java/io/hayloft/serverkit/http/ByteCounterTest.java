package io.hayloft.serverkit.http;

import io.netty.util.ReferenceCountUtil;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.DefaultFileRegion;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.ResourceLeakDetector;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ByteCounter} on an {@code EmbeddedChannel}: counts what passes, passes it on untouched, owns nothing. */
class ByteCounterTest {
    @TempDir
    Path dir;

    @BeforeAll
    static void leaks() {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    }

    @Test
    void bytesReadAreCountedWholeOrOneAtATimeAndPassedOnAsTheyCame() {
        byte[] bytes = EmbeddedHttp.ascii("GET / HTTP/1.1\r\n\r\n");
        for (EmbeddedHttp.Feed feed : EmbeddedHttp.Feed.values()) {
            LongAdder in = new LongAdder();
            LongAdder out = new LongAdder();
            EmbeddedChannel ch = new EmbeddedChannel(new ByteCounter(in, out));
            List<ByteBuf> fed = EmbeddedHttp.feed(ch, bytes, feed);
            assertThat(in.sum()).isEqualTo(bytes.length);
            for (ByteBuf b : fed) {
                ByteBuf got = ch.readInbound();
                assertThat(got).as("the same buffer, not a copy").isSameAs(b);
                assertThat(got.refCnt()).as("neither retained nor released").isEqualTo(1);
                got.release();
            }
            assertThat((Object) ch.readInbound()).isNull();
            ch.writeInbound("not bytes");
            assertThat((Object) ch.readInbound()).isEqualTo("not bytes");
            assertThat(in.sum()).isEqualTo(bytes.length);
            assertThat(out.sum()).isZero();
            assertThat(ch.finishAndReleaseAll()).isFalse();
            EmbeddedHttp.assertReleased(fed);
        }
    }

    @Test
    void bytesWrittenAreCountedForBuffersHoldersAndFileRegions() throws IOException {
        LongAdder in = new LongAdder();
        LongAdder out = new LongAdder();
        EmbeddedChannel ch = new EmbeddedChannel(new ByteCounter(in, out));
        ByteBuf raw = ByteBufAllocator.DEFAULT.buffer().writeBytes(new byte[7]);
        FullHttpResponse response = HttpResponses.bytes(HttpResponseStatus.OK,
                ByteBufAllocator.DEFAULT.buffer().writeBytes(new byte[11]), "application/octet-stream");
        Path file = Files.write(dir.resolve("f"), new byte[100]);
        FileChannel fc = FileChannel.open(file);
        DefaultFileRegion region = new DefaultFileRegion(fc, 10, 40);
        ch.writeOutbound(raw, response, region, ByteBufAllocator.DEFAULT.buffer(0));
        assertThat(out.sum()).isEqualTo(7 + 11 + 40);
        assertThat(in.sum()).isZero();
        Object o;
        int n = 0;
        while ((o = ch.readOutbound()) != null) {
            ReferenceCountUtil.release(o);
            n++;
        }
        assertThat(n).isEqualTo(4);
        assertThat(raw.refCnt()).isZero();
        assertThat(response.refCnt()).isZero();
        assertThat(region.refCnt()).isZero();
        assertThat(fc.isOpen()).as("the region closed its file when released").isFalse();
        assertThat(ch.finishAndReleaseAll()).isFalse();
    }
}
