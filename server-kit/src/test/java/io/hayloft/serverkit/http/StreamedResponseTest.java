package io.hayloft.serverkit.http;

import io.hayloft.testkit.Await;
import io.netty.channel.ChannelHandlerContext;
import java.io.IOException;
import java.util.Locale;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.stream.ChunkedInput;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/** A streamed body is read on the server's blocking executor, chunk by chunk, never on an event loop. */
class StreamedResponseTest {

    /** A body of {@code chunks} chunks of {@code size} bytes of a known pattern, recording the threads that read it. */
    static final class Recording implements ChunkedInput<ByteBuf> {
        final Set<String> threads = ConcurrentHashMap.newKeySet();
        final int chunks;
        final int size;
        int done;
        volatile boolean closed;

        Recording(int chunks, int size) {
            this.chunks = chunks;
            this.size = size;
        }

        @Override
        public boolean isEndOfInput() {
            return done == chunks;
        }

        @Override
        public void close() {
            closed = true;
        }

        @Deprecated
        @Override
        public ByteBuf readChunk(ChannelHandlerContext ctx) {
            return readChunk(ctx.alloc());
        }

        @Override
        public ByteBuf readChunk(ByteBufAllocator allocator) {
            if (done == chunks) {
                return null;
            }
            threads.add(Thread.currentThread().getName());
            ByteBuf b = allocator.buffer(size);
            for (int i = 0; i < size; i++) {
                b.writeByte((done * 31 + i) & 0xFF);
            }
            done++;
            return b;
        }

        @Override
        public long length() {
            return (long) chunks * size;
        }

        @Override
        public long progress() {
            return (long) done * size;
        }
    }

    @Test
    void theBodyIsReadOnTheExecutorAndArrivesWhole() throws Exception {
        int chunks = 40;
        int size = 64 * 1024;
        Recording[] bodies = new Recording[2];
        int[] served = {0};
        ExecutorService disk = Executors.newFixedThreadPool(2, r -> new Thread(r, "test-disk"));
        HttpServer server = HttpServer.start("127.0.0.1", 0, HttpLimits.defaults(), req -> {
            Recording body = new Recording(chunks, size);
            bodies[served[0]++] = body;
            return new StreamedResponse(HttpResponseStatus.OK, body, body.length(), "application/octet-stream");
        }, disk, 1);
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            // two requests on one keep-alive connection: the second is answered after the first body
            for (int r = 0; r < 2; r++) {
                s.getOutputStream().write("GET /x HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                InputStream in = s.getInputStream();
                String head = readHead(in);
                assertThat(head).startsWith("http/1.1 200").contains("content-length: " + (long) chunks * size);
                CRC32C got = new CRC32C();
                CRC32C want = new CRC32C();
                for (int c = 0; c < chunks; c++) {
                    for (int i = 0; i < size; i++) {
                        want.update((c * 31 + i) & 0xFF);
                    }
                }
                byte[] buf = new byte[8192];
                long left = (long) chunks * size;
                while (left > 0) {
                    int n = in.read(buf, 0, (int) Math.min(buf.length, left));
                    assertThat(n).as("the body ended early").isPositive();
                    got.update(buf, 0, n);
                    left -= n;
                }
                assertThat(got.getValue()).isEqualTo(want.getValue());
            }
            // A body is closed on the disk executor after its last chunk was written, which may be after the
            // client read it: wait for that before the executor is shut down (a shut-down executor drops it).
            for (Recording b : bodies) {
                Await.until("every streamed body closed", () -> b != null && b.closed);
            }
        } finally {
            server.close();
            disk.shutdownNow();
        }
        for (Recording b : bodies) {
            assertThat(b.closed).isTrue();
            assertThat(b.threads).containsExactly("test-disk");
        }
    }

    private static String readHead(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        while (!sb.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            assertThat(c).as("the head ended early").isNotNegative();
            sb.append((char) c);
        }
        return sb.toString().toLowerCase(Locale.ROOT);
    }
}
