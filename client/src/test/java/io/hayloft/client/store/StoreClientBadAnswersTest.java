package io.hayloft.client.store;

import org.assertj.core.api.Assertions;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.client.Futures;
import io.hayloft.client.RawServer;
import io.hayloft.client.RemoteException;
import io.hayloft.client.RemoteException.Kind;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.format.wire.PhotoId;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The store client against stores that answer badly: error bodies with and without the Hayloft
 * shape, garbage, truncated bodies, wrong acknowledgements, silence and closed ports. Each must
 * give a typed {@link StoreException} of the right kind that names the store and the call.
 */
class StoreClientBadAnswersTest {
    private static final PhotoId ID = new PhotoId(3, 42, 1, 0x8f3a1b2c3d4e5f60L);
    private final StoreClient client = new StoreClient(HttpTransport.builder()
            .connectTimeout(Duration.ofSeconds(2)).requestTimeout(Duration.ofMillis(500)).build());

    private static StoreException failure(CompletableFuture<?> f) {
        Throwable t = Assertions.catchThrowable(() -> Futures.await(f));
        assertThat(t).isInstanceOf(StoreException.class);
        return (StoreException) t;
    }

    @Test
    void hayloftErrorBodyGivesStatusCodeNameAndMessage() throws IOException {
        try (RawServer s = new RawServer(r -> RawServer.response(409, "application/json",
                "{\"error\":{\"code\":102,\"name\":\"VOLUME_READ_ONLY\",\"message\":\"volume 3 is read-only\"}}"))) {
            StoreException e = failure(client.write(s.address(), ID, new byte[] {1, 2}, "tok"));
            assertThat(e.kind()).isEqualTo(Kind.ERROR);
            assertThat(e.httpStatus()).isEqualTo(409);
            assertThat(e.code()).isEqualTo(StoreException.VOLUME_READ_ONLY);
            assertThat(e.errorName()).isEqualTo("VOLUME_READ_ONLY");
            assertThat(e.serverMessage()).isEqualTo("volume 3 is read-only");
            assertThat(e.isRetryable()).isFalse();
            assertThat(e.getMessage()).contains(s.address()).contains("PUT /3/42/1?cookie=8f3a1b2c3d4e5f60");
            RawServer.Request req = s.requests().get(0);
            assertThat(req.line()).startsWith("PUT /3/42/1?cookie=8f3a1b2c3d4e5f60 ");
            assertThat(req.header("X-Hayloft-Token")).isEqualTo("tok");
            assertThat(req.body()).containsExactly(1, 2);
        }
    }

    @Test
    void notFoundIsTyped() throws IOException {
        try (RawServer s = new RawServer(r -> RawServer.response(404, "application/json",
                "{\"error\":{\"code\":100,\"name\":\"NEEDLE_NOT_FOUND\",\"message\":\"no needle 42/1\"}}"))) {
            StoreException e = failure(client.read(s.address(), ID));
            assertThat(e).isInstanceOf(NotFoundException.class);
            assertThat(e.code()).isEqualTo(StoreException.NEEDLE_NOT_FOUND);
        }
    }

    @Test
    void nonJsonErrorBodyIsABadResponseQuotingTheBody() throws IOException {
        try (RawServer s = new RawServer(r -> RawServer.response(500, "text/html", "<html>proxy error\u0001</html>"))) {
            StoreException e = failure(client.read(s.address(), ID));
            assertThat(e.kind()).isEqualTo(Kind.BAD_RESPONSE);
            assertThat(e.httpStatus()).isEqualTo(500);
            assertThat(e.isRetryable()).isTrue();
            assertThat(e.getMessage()).contains("without a Hayloft error body").contains("<html>proxy error.</html>");
        }
    }

    @Test
    void truncatedBodyIsABadResponse() throws IOException {
        byte[] head = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 1000\r\n\r\nshort"
                .getBytes(StandardCharsets.US_ASCII);
        try (RawServer s = new RawServer(r -> head)) {
            StoreException e = failure(client.read(s.address(), ID));
            assertThat(e.kind()).isIn(Kind.BAD_RESPONSE, Kind.UNREACHABLE);
            assertThat(e.isRetryable()).isTrue();
            assertThat(e.getMessage()).contains(s.address());
        }
    }

    @Test
    void garbageStatusLineIsABadResponse() throws IOException {
        try (RawServer s = new RawServer(r -> "SSH-2.0-OpenSSH\r\n\r\n".getBytes(StandardCharsets.US_ASCII))) {
            StoreException e = failure(client.health(s.address()));
            assertThat(e.kind()).isEqualTo(Kind.BAD_RESPONSE);
        }
    }

    @Test
    void successBodyThatIsNotJsonIsABadResponse() throws IOException {
        try (RawServer s = new RawServer(r -> RawServer.response(201, "application/json", "written!"))) {
            StoreException e = failure(client.write(s.address(), ID, new byte[10], null));
            assertThat(e.kind()).isEqualTo(Kind.BAD_RESPONSE);
            assertThat(e.getMessage()).contains("not the expected JSON").contains("written!");
            assertThat(s.requests().get(0).header("X-Hayloft-Token")).isNull();
        }
    }

    @Test
    void acknowledgementOfTheWrongSizeIsABadResponse() throws IOException {
        try (RawServer s = new RawServer(r -> r.line().contains("/batch")
                ? RawServer.response(201, "application/json", "{\"volume\":3,\"written\":1}")
                : RawServer.response(201, "application/json", "{\"volume\":3,\"size\":9}"))) {
            StoreException single = failure(client.write(s.address(), ID, new byte[10], "t"));
            assertThat(single.kind()).isEqualTo(Kind.BAD_RESPONSE);
            assertThat(single.getMessage()).contains("acknowledged 9 bytes, sent 10");
            StoreException batch = failure(client.writeBatch(s.address(), 3,
                    List.of(new NeedleData(1, 0, 5, new byte[3]), new NeedleData(2, 0, 6, new byte[4])), "t"));
            assertThat(batch.getMessage()).contains("acknowledged 1 needles written, sent 2");
        }
    }

    @Test
    void silentServerTimesOut() throws IOException {
        try (RawServer s = new RawServer(r -> null)) {
            StoreException e = failure(client.read(s.address(), ID));
            assertThat(e.kind()).isEqualTo(Kind.TIMEOUT);
            assertThat(e.isRetryable()).isTrue();
        }
    }

    @Test
    void closedPortIsUnreachable() throws IOException {
        int port;
        try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = ss.getLocalPort();
        }
        StoreException e = failure(client.read("127.0.0.1:" + port, ID));
        assertThat(e.kind()).isEqualTo(Kind.UNREACHABLE);
        assertThat(e.httpStatus()).isZero();
        assertThat(e.server()).isEqualTo("127.0.0.1:" + port);
    }

    /**
     * Writes and deletes go through the asynchronous engine (reads do not): the same hostile answers
     * must give the same kinds there.
     */
    @Test
    void writesAndDeletesClassifyFailuresAsReadsDo() throws IOException {
        byte[] truncated = "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"vol"
                .getBytes(StandardCharsets.US_ASCII);
        try (RawServer s = new RawServer(r -> truncated)) {
            StoreException e = failure(client.write(s.address(), ID, new byte[10], "t"));
            assertThat(e.kind()).isIn(Kind.BAD_RESPONSE, Kind.UNREACHABLE);
            assertThat(e.isRetryable()).isTrue();
            assertThat(e.getMessage()).contains(s.address()).contains("PUT");
        }
        try (RawServer s = new RawServer(r -> "SSH-2.0-OpenSSH\r\n\r\n".getBytes(StandardCharsets.US_ASCII))) {
            StoreException e = failure(client.write(s.address(), ID, new byte[0], "t"));
            assertThat(e.kind()).isIn(Kind.BAD_RESPONSE, Kind.UNREACHABLE);
            assertThat(e.getMessage()).contains(s.address());
        }
        try (RawServer s = new RawServer(r -> null)) {
            StoreException put = failure(client.write(s.address(), ID, new byte[10], "t"));
            assertThat(put.kind()).isEqualTo(Kind.TIMEOUT);
            assertThat(put.isRetryable()).isTrue();
            StoreException del = failure(client.delete(s.address(), ID, "t"));
            assertThat(del.kind()).isEqualTo(Kind.TIMEOUT);
        }
        try (RawServer s = new RawServer(r -> RawServer.response(404, "application/json",
                "{\"error\":{\"code\":101,\"name\":\"NEEDLE_NOT_FOUND\",\"message\":\"no needle\"}}"))) {
            StoreException e = failure(client.delete(s.address(), ID, "t"));
            assertThat(e.httpStatus()).isEqualTo(404);
            assertThat(e.code()).isEqualTo(101);
        }
        int port;
        try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = ss.getLocalPort();
        }
        StoreException e = failure(client.write("127.0.0.1:" + port, ID, new byte[10], "t"));
        assertThat(e.kind()).isEqualTo(Kind.UNREACHABLE);
        assertThat(e.httpStatus()).isZero();
        assertThat(e.server()).isEqualTo("127.0.0.1:" + port);
    }

    @Test
    void existingVolumeCountsAsCreated() throws IOException {
        try (RawServer s = new RawServer(r -> RawServer.response(409, "application/json",
                "{\"error\":{\"code\":103,\"name\":\"VOLUME_EXISTS\",\"message\":\"volume 7 exists\"}}"))) {
            assertThat(Futures.await(client.createVolume(s.address(), 7))).isNull();
            assertThat(s.requests().get(0).line()).startsWith("POST /admin/volumes/7 ");
        }
    }

    @Test
    void badAddressesAreRefusedNamingThem() {
        assertThatThrownBy(() -> client.read("localhost", ID)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'localhost'").hasMessageContaining("host:port");
        assertThatThrownBy(() -> client.read("localhost:99999", ID)).hasMessageContaining("1..65535");
        assertThatThrownBy(() -> client.createVolume("localhost:80", 0)).hasMessageContaining("volume must be >= 1, was 0");
        assertThatThrownBy(() -> client.writeBatch("localhost:80", 1, List.of(), null)).hasMessageContaining("at least one needle");
    }

    @Test
    void retryableOnlyForTransientErrors() {
        RemoteException bad = new StoreException("s", Kind.ERROR, 400, 106, "BAD_ARGUMENT", "x", "x", null);
        RemoteException busy = new StoreException("s", Kind.ERROR, 503, 8, "OVERLOADED", "x", "x", null);
        assertThat(bad.isRetryable()).isFalse();
        assertThat(busy.isRetryable()).isTrue();
    }
}
