package io.hayloft.serverkit.http;

import io.hayloft.testkit.RawHttp;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.testkit.Await;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A {@link StreamedRequestHandler}'s chosen requests reach it as a stream on the blocking executor,
 * in order, past {@code maxBodyBytes}, with the connection paused while the handler is behind; every
 * other request is aggregated and bounded by {@code maxBodyBytes}.
 */
class StreamedRequestBodyTest {
    static final int MAX_BODY = 1 << 20;

    /** Streams {@code PUT /stream/...}: answers the bytes and CRC32C it saw; may hold its first piece until released. */
    static final class Recorder implements StreamedRequestHandler {
        final Set<String> threads = ConcurrentHashMap.newKeySet();
        final AtomicLong aborts = new AtomicLong();
        volatile CountDownLatch hold = new CountDownLatch(0);

        @Override
        public boolean streamsBody(HttpRequest head) {
            return head.uri().startsWith("/stream/");
        }

        @Override
        public RequestBody openBody(HttpRequest head) {
            threads.add(Thread.currentThread().getName());
            return new RequestBody() {
                final CRC32C crc = new CRC32C();
                long bytes;

                @Override
                public void content(ByteBuf chunk) throws Exception {
                    threads.add(Thread.currentThread().getName());
                    hold.await();
                    bytes += chunk.readableBytes();
                    crc.update(chunk.nioBuffer());
                }

                @Override
                public FullHttpResponse end(HttpHeaders trailers) {
                    return HttpResponses.json(HttpResponseStatus.CREATED, Map.of("bytes", bytes, "crc", crc.getValue()));
                }

                @Override
                public void abort() {
                    aborts.incrementAndGet();
                }
            };
        }

        @Override
        public FullHttpResponse handle(FullHttpRequest request) {
            return HttpResponses.json(HttpResponseStatus.OK, Map.of("aggregated", request.content().readableBytes()));
        }
    }

    final Recorder handler = new Recorder();
    ExecutorService executor;
    HttpServer server;

    @BeforeEach
    void start() throws Exception {
        executor = Executors.newFixedThreadPool(4, r -> new Thread(r, "blocking-" + r.hashCode()));
        server = HttpServer.start("127.0.0.1", 0, new HttpLimits(4096, 8192, MAX_BODY, 64, 30_000), handler, executor, 1);
    }

    @AfterEach
    void stop() {
        server.close();
        executor.shutdownNow();
    }

    static byte[] pattern(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + (i >>> 11));
        }
        return b;
    }

    static long crc(byte[] b) {
        CRC32C c = new CRC32C();
        c.update(b);
        return c.getValue();
    }

    private HttpResponse<String> send(String method, String path, byte[] body) throws Exception {
        return HttpClient.newHttpClient().send(java.net.http.HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .method(method, java.net.http.HttpRequest.BodyPublishers.ofByteArray(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aChosenBodyStreamsInOrderOnTheExecutorPastTheBodyLimitAndOthersAreAggregatedAsBefore() throws Exception {
        byte[] big = pattern(24 << 20);
        for (int round = 0; round < 2; round++) { // twice: the connection is reused after a streamed request
            HttpResponse<String> r = send("PUT", "/stream/a", big);
            assertThat(r.statusCode()).isEqualTo(201);
            assertThat(r.body()).contains("\"bytes\":" + big.length).contains("\"crc\":" + crc(big));
        }
        assertThat(send("PUT", "/stream/empty", new byte[0]).body()).contains("\"bytes\":0");
        assertThat(handler.threads).isNotEmpty().allMatch(t -> t.startsWith("blocking-"));
        HttpResponse<String> small = send("POST", "/other", pattern(1000));
        assertThat(small.statusCode()).isEqualTo(200);
        assertThat(small.body()).contains("\"aggregated\":1000");
        HttpResponse<String> tooBig = send("POST", "/other", pattern(MAX_BODY + 1));
        assertThat(tooBig.statusCode()).isEqualTo(413);
        assertThat(tooBig.body()).contains("BODY_TOO_LARGE");
        assertThat(handler.aborts.get()).isZero();
    }

    @Test
    void aHandlerThatFallsBehindPausesTheConnectionInsteadOfQueueingTheBody() throws Exception {
        handler.hold = new CountDownLatch(1);
        int total = 64 << 20;
        byte[] piece = pattern(64 << 10);
        AtomicLong sent = new AtomicLong();
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", server.port()), 5000);
            OutputStream out = s.getOutputStream();
            Thread writer = new Thread(() -> {
                try {
                    out.write(("PUT /stream/slow HTTP/1.1\r\nHost: x\r\nContent-Length: " + total + "\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
                    for (int off = 0; off < total; off += piece.length) {
                        out.write(piece);
                        sent.addAndGet(piece.length);
                    }
                    out.flush();
                } catch (Exception e) {
                    // the test fails on what it reads
                }
            });
            writer.start();
            long[] last = {-1, 0};
            // the writer stalls short of the end (no progress over 40 polls): the server stopped reading
            // while the handler is held; without backpressure it would read all 64 MiB into its queue
            Await.until("the writer stalls", () -> {
                long now = sent.get();
                last[1] = now == last[0] && now > 0 && now < total ? last[1] + 1 : 0;
                last[0] = now;
                return last[1] >= 40 && server.receivedBytes() > BodyStream.HIGH_WATER;
            });
            assertThat(server.receivedBytes()).isLessThan(total / 4);
            handler.hold.countDown();
            writer.join(60_000);
            assertThat(sent.get()).isEqualTo(total);
            // The answer, read by its Content-Length: the connection is kept alive, so reading a fixed
            // number of bytes would wait for the server's idle timeout to close it (30 s a run).
            s.setSoTimeout(60_000);
            RawHttp.Response answer = RawHttp.read(s.getInputStream(), false);
            assertThat(answer.status()).isEqualTo(201);
            assertThat(answer.text()).contains("\"bytes\":" + total);
        }
    }

    @Test
    void aClientThatLeavesMidBodyAbortsTheBodyAndAHandlerErrorIsAJsonAnswer() throws Exception {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", server.port()), 5000);
            s.getOutputStream().write(("PUT /stream/cut HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().write(pattern(1000));
            s.getOutputStream().flush();
            Await.until("the body is open", () -> handler.threads.size() > 0);
        }
        Await.until("the body is aborted", () -> handler.aborts.get() == 1);
        Await.until("nothing in flight", () -> server.inFlight() == 0);
        // a malformed chunk: 400 JSON, the body aborted
        RawHttp.Response bad = RawHttp.exchange("127.0.0.1:" + server.port(),
                "PUT /stream/bad HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".getBytes(StandardCharsets.US_ASCII),
                10_000);
        assertThat(bad.status()).isEqualTo(400);
        assertThat(bad.text()).contains("malformed request body");
        Await.until("the malformed body is aborted", () -> handler.aborts.get() == 2);
        assertThat(send("PUT", "/stream/after", pattern(10)).statusCode()).isEqualTo(201);
    }
}
