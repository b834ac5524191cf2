package io.hayloft.client.http;

import io.hayloft.client.Futures;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.hayloft.client.RawServer;
import io.hayloft.client.RemoteException;
import io.hayloft.client.RemoteException.Kind;
import io.hayloft.client.store.NotFoundException;
import io.hayloft.client.store.StoreClient;
import io.hayloft.client.store.StoreException;
import io.hayloft.format.wire.PhotoId;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The transport's data engine (Apache HttpClient 5 classic, {@link HttpTransport#exchange}) against
 * raw loopback servers: each way a call fails gives the same typed error as the java.net.http path,
 * the calling thread does the I/O, and URL prefixes with a path part (a cache's {@code /store}) work.
 */
class DataEngineTest {
    private static final PhotoId ID = new PhotoId(3, 0xFFFF_FFFF_FFFF_FFFFL >>> 1, 0xFFFF_FFFF, 0x8f3a1b2c3d4e5f60L);

    private static final class Calls implements HttpTransport.Listener {
        final List<String> threads = new CopyOnWriteArrayList<>();
        final List<Integer> statuses = new CopyOnWriteArrayList<>();
        final List<RemoteException> failures = new CopyOnWriteArrayList<>();

        @Override
        public void onRequest(String target, String method, int status, RemoteException failure, long nanos) {
            threads.add(Thread.currentThread().getName());
            statuses.add(status);
            if (failure != null) {
                failures.add(failure);
            }
        }
    }

    private final Calls calls = new Calls();
    private final HttpTransport http = HttpTransport.builder().connectTimeout(Duration.ofSeconds(2))
            .requestTimeout(Duration.ofMillis(400)).listener(calls).build();
    private final StoreClient stores = new StoreClient(http);

    private static StoreException thrown(Runnable r) {
        Throwable t = catchThrowable(r::run);
        assertThat(t).isInstanceOf(StoreException.class);
        return (StoreException) t;
    }

    @Test
    void blockingReadRunsOnTheCallingThreadAndTakesAUrlPrefixWithAPath() throws IOException {
        byte[] photo = new byte[1024];
        photo[0] = 7;
        photo[1023] = (byte) 0xFF;
        try (RawServer s = new RawServer(r -> RawServer.response(200, "application/octet-stream", photo))) {
            String me = Thread.currentThread().getName();
            assertThat(stores.readNow("http://" + s.address() + "/store/", ID)).isEqualTo(photo);
            assertThat(s.requests().get(0).line())
                    .isEqualTo("GET /store" + ID.needlePath() + " HTTP/1.1");
            assertThat(calls.threads).containsExactly(me);
            assertThat(calls.statuses).containsExactly(200);
        }
    }

    @Test
    void asyncReadRunsOnAnIoThread() throws IOException {
        try (RawServer s = new RawServer(r -> RawServer.response(200, "application/octet-stream", new byte[0]))) {
            assertThat(Futures.await(stores.read(s.address(), ID))).isEmpty();
            assertThat(calls.threads).hasSize(1);
            assertThat(calls.threads.get(0)).startsWith("hayloft-http-");
        }
    }

    /** Writes (PUT, POST, DELETE) go through the asynchronous engine: no thread per request, reported on a reactor thread. */
    @Test
    void asyncWriteRunsOnAReactorThreadAndSendsTheBodyAndToken() throws IOException {
        byte[] photo = new byte[3000];
        photo[2999] = 9;
        try (RawServer s = new RawServer(r -> RawServer.response(201, "application/json", "{\"volume\":3,\"size\":3000}"))) {
            Futures.await(stores.write(s.address(), ID, photo, "tok-1"));
            Futures.await(stores.write(s.address(), ID, new byte[0], "tok-2").exceptionally(t -> null));
            assertThat(s.requests().get(0).line()).isEqualTo("PUT " + ID.needlePath() + " HTTP/1.1");
            assertThat(s.requests().get(0).header("X-Hayloft-Token")).isEqualTo("tok-1");
            assertThat(s.requests().get(0).body()).isEqualTo(photo);
            assertThat(s.requests().get(1).body()).isEmpty();
            assertThat(calls.threads).hasSize(2).allSatisfy(t -> assertThat(t).startsWith("hayloft-http-io-"));
            assertThat(calls.statuses).containsExactly(201, 201);
        }
    }

    @Test
    void connectionRefusedIsUnreachable() throws IOException {
        int port;
        try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = ss.getLocalPort();
        }
        String addr = "127.0.0.1:" + port;
        StoreException e = thrown(() -> stores.readNow(addr, ID));
        assertThat(e.kind()).isEqualTo(Kind.UNREACHABLE);
        assertThat(e.isRetryable()).isTrue();
        assertThat(e.getMessage()).contains(addr).contains("GET " + ID.needlePath());
        assertThat(calls.failures).hasSize(1);
        assertThat(calls.statuses).containsExactly(0);
    }

    @Test
    void aServerThatNeverAnswersTimesOutWithinTheRequestTimeout() throws IOException {
        try (RawServer s = new RawServer(r -> null)) {
            long t0 = System.nanoTime();
            StoreException e = thrown(() -> stores.readNow(s.address(), ID));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertThat(e.kind()).isEqualTo(Kind.TIMEOUT);
            assertThat(ms).isGreaterThanOrEqualTo(350).isLessThan(5_000);
            assertThat(s.requests()).hasSize(1); // not retried
        }
    }

    @Test
    void notFoundJsonIsNotFoundException() throws IOException {
        try (RawServer s = new RawServer(r -> RawServer.response(404, "application/json",
                "{\"error\":{\"code\":100,\"name\":\"NEEDLE_NOT_FOUND\",\"message\":\"no needle\"}}"))) {
            StoreException e = thrown(() -> stores.readNow(s.address(), ID));
            assertThat(e).isInstanceOf(NotFoundException.class);
            assertThat(e.kind()).isEqualTo(Kind.ERROR);
            assertThat(e.httpStatus()).isEqualTo(404);
            assertThat(e.code()).isEqualTo(StoreException.NEEDLE_NOT_FOUND);
            assertThat(calls.statuses).containsExactly(404);
        }
    }

    @Test
    void garbageStatusLineIsBadResponse() throws IOException {
        try (RawServer s = new RawServer(r -> "HTTQ/9 banana\r\n\r\n".getBytes(StandardCharsets.US_ASCII))) {
            StoreException e = thrown(() -> stores.readNow(s.address(), ID));
            assertThat(e.kind()).as(e.getMessage()).isEqualTo(Kind.BAD_RESPONSE);
            assertThat(e.getMessage()).contains(s.address());
        }
    }

    @Test
    void truncatedBodyIsBadResponse() throws IOException {
        try (RawServer s = new RawServer(r -> ("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\nshort")
                .getBytes(StandardCharsets.US_ASCII))) {
            StoreException e = thrown(() -> stores.readNow(s.address(), ID));
            assertThat(e.kind()).isEqualTo(Kind.BAD_RESPONSE);
        }
    }

    @Test
    void nonJsonErrorBodyIsBadResponseWithItsStatus() throws IOException {
        try (RawServer s = new RawServer(r -> RawServer.response(500, "text/html", "<html>oops</html>"))) {
            StoreException e = thrown(() -> stores.readNow(s.address(), ID));
            assertThat(e.kind()).isEqualTo(Kind.BAD_RESPONSE);
            assertThat(e.httpStatus()).isEqualTo(500);
            assertThat(e.getMessage()).contains("<html>oops");
        }
    }

    @Test
    void exchangeSendsHeadersAndBodyAndReturnsHeaders() throws IOException {
        try (RawServer s = new RawServer(r -> ("HTTP/1.1 201 Created\r\nX-Hayloft-Crc: 1234\r\nContent-Length: 2\r\n"
                + "Connection: close\r\n\r\nok").getBytes(StandardCharsets.US_ASCII))) {
            HttpTransport.Response r = http.exchange(s.address(), "PUT x", "PUT", "/1/0/0?cookie=00", Map.of("X-Hayloft-Token", "t"),
                    new byte[] {0, 1, 2}, st -> st == 201, HttpTransport.TYPED);
            assertThat(r.status()).isEqualTo(201);
            assertThat(r.header("x-hayloft-crc")).isEqualTo("1234");
            assertThat(r.body()).containsExactly('o', 'k');
            RawServer.Request req = s.requests().get(0);
            assertThat(req.header("X-Hayloft-Token")).isEqualTo("t");
            assertThat(req.header("Content-Length")).isEqualTo("3");
            assertThat(req.body()).containsExactly(0, 1, 2);
        }
    }

    @Test
    void streamReadGivesTheBodyAndErrorsAreTyped() throws IOException {
        byte[] big = new byte[200_000];
        for (int i = 0; i < big.length; i++) {
            big[i] = (byte) i;
        }
        try (RawServer s = new RawServer(r -> RawServer.response(200, "application/octet-stream", big))) {
            try (InputStream in = stores.readStreamNow(s.address(), ID)) {
                assertThat(in.readAllBytes()).isEqualTo(big);
            }
        }
        try (RawServer s = new RawServer(r -> RawServer.response(404, "application/json",
                "{\"error\":{\"code\":100,\"name\":\"NEEDLE_NOT_FOUND\",\"message\":\"no needle\"}}"))) {
            assertThat(catchThrowable(() -> stores.readStreamNow(s.address(), ID))).isInstanceOf(NotFoundException.class);
        }
    }

    @Test
    void badAddressIsIllegalArgument() {
        assertThat(catchThrowable(() -> stores.readNow("no-port", ID))).isInstanceOf(IllegalArgumentException.class);
        assertThat(catchThrowable(() -> stores.read("no-port", ID))).isInstanceOf(IllegalArgumentException.class);
    }
}
