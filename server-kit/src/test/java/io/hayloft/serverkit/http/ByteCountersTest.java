package io.hayloft.serverkit.http;

import io.netty.handler.codec.http.FullHttpResponse;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.serverkit.metrics.PrometheusEndpoint;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/**
 * Every server counts the bytes on its sockets: a request of N body bytes adds at least N to
 * {@code hayloft_http_received_bytes_total}, a response of M bytes at least M to
 * {@code hayloft_http_sent_bytes_total} (plus the heads), streamed bodies included.
 */
class ByteCountersTest {
    @TempDir
    Path dir;

    private static FullHttpResponse streamed(Path file) throws IOException {
        FileChannel ch = FileChannel.open(file);
        return StreamedResponse.fileRange(HttpResponseStatus.OK, ch, 0, ch.size(), "application/octet-stream", ch);
    }

    @Test
    void bodiesInAndOutAreCountedOnTheMetricsEndpoint() throws Exception {
        PrometheusEndpoint metrics = new PrometheusEndpoint();
        Path file = dir.resolve("body");
        Files.write(file, new byte[500_000]);
        ExecutorService executor = Executors.newFixedThreadPool(2);
        byte[] answer = new byte[300_000];
        HttpServer server = HttpServer.start("127.0.0.1", 0, HttpLimits.defaults(), req -> req.uri().equals("/metrics")
                ? metrics.response()
                : req.uri().equals("/streamed")
                        ? streamed(file)
                        : HttpResponses.bytes(HttpResponseStatus.OK, Unpooled.wrappedBuffer(answer), "application/octet-stream"),
                executor, 1).bindMetrics(metrics.registry());
        try {
            HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            String base = "http://127.0.0.1:" + server.port();
            assertThat(server.receivedBytes()).isZero();
            HttpResponse<byte[]> r = client.send(HttpRequest.newBuilder(URI.create(base + "/up"))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(new byte[1_000_000])).build(), HttpResponse.BodyHandlers.ofByteArray());
            assertThat(r.body()).hasSize(answer.length);
            assertThat(server.receivedBytes()).isBetween(1_000_000L, 1_001_000L);
            assertThat(server.sentBytes()).isBetween((long) answer.length, answer.length + 1_000L);
            long sentBefore = server.sentBytes();
            assertThat(client.send(HttpRequest.newBuilder(URI.create(base + "/streamed")).build(),
                    HttpResponse.BodyHandlers.ofByteArray()).body()).hasSize(500_000);
            assertThat(server.sentBytes() - sentBefore).isBetween(500_000L, 502_000L);
            String text = client.send(HttpRequest.newBuilder(URI.create(base + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertThat(text).containsPattern("(?m)^hayloft_http_received_bytes_total(\\{[^}]*\\})? 1000[0-9]{3}\\.0$")
                    .contains("hayloft_http_sent_bytes_total");
        } finally {
            server.close();
            executor.shutdownNow();
        }
    }
}
