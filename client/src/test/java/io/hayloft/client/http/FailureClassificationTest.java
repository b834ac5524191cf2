package io.hayloft.client.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.hayloft.client.Futures;
import io.hayloft.client.RawServer;
import io.hayloft.client.RemoteException;
import io.hayloft.client.RemoteException.Kind;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Failures classified by exception type (and by whether the answer had begun), for each engine of
 * the transport, against real servers that misbehave on a raw socket: one that closes mid-body, one
 * that sends fewer bytes than its {@code Content-Length}, one that closes before answering, one that
 * answers garbage, and a port that refuses connections. Each engine must give the same kind for the
 * same misbehaviour, and the retry policy must take a refused connection to the next address.
 */
class FailureClassificationTest {
    private static final byte[] SHORT_LENGTH = ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n"
            + "Connection: close\r\n\r\n{\"a\":").getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CHUNK_CUT = ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
            + "Connection: close\r\n\r\n20\r\n{\"a\":1").getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NOTHING = new byte[0];
    private static final byte[] GARBAGE = "SMTP READY\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    private static HttpTransport transport;
    private static String refused;

    @BeforeAll
    static void start() throws IOException {
        transport = HttpTransport.builder().connectTimeout(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(5))
                .retries(2, Duration.ofMillis(1), Duration.ofMillis(5)).build();
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            refused = "127.0.0.1:" + s.getLocalPort();
        }
    }

    @AfterAll
    static void stop() {
        transport = null;
    }

    /** The four ways to call: the RPC engine (java.net.http), HC5 classic, HC5 async, and a stream. */
    private enum Engine {
        RPC, CLASSIC, ASYNC, STREAM
    }

    private static RemoteException fail(Engine engine, String server) {
        Throwable t = catchThrowable(() -> {
            switch (engine) {
                case RPC -> Futures.await(transport.send(server, "GET /x", transport.request(transport.uri(server, "/x")).GET().build(),
                        s -> s == 200, HttpTransport.TYPED)).body();
                case CLASSIC -> transport.exchange(server, "GET /x", "GET", "/x", null, (byte[]) null, s -> s == 200, HttpTransport.TYPED);
                case ASYNC -> Futures.await(transport.exchangeAsync(server, "PUT /x", "PUT", "/x", Map.of(), new byte[] {1, 2, 3},
                        s -> s == 200, HttpTransport.TYPED));
                case STREAM -> transport.openStream(server, "GET /x", "/x", HttpTransport.TYPED).readAllBytes();
            }
        });
        assertThat(t).as("%s on %s", engine, server).isInstanceOf(RemoteException.class);
        return (RemoteException) t;
    }

    private static void expect(byte[] answer, Kind kind, Engine... engines) throws IOException {
        try (RawServer server = new RawServer(r -> answer)) {
            for (Engine e : engines) {
                RemoteException r = fail(e, server.address());
                assertThat(r.kind()).as("%s: %s", e, r.getMessage()).isEqualTo(kind);
                assertThat(r.server()).isEqualTo(server.address());
                assertThat(r.httpStatus()).isZero();
            }
        }
    }

    @Test
    void aBodyShorterThanItsContentLengthIsABadResponseOnEveryEngine() throws IOException {
        expect(SHORT_LENGTH, Kind.BAD_RESPONSE, Engine.RPC, Engine.CLASSIC, Engine.ASYNC);
    }

    @Test
    void aChunkedBodyCutMidChunkIsABadResponseOnEveryEngine() throws IOException {
        expect(CHUNK_CUT, Kind.BAD_RESPONSE, Engine.RPC, Engine.CLASSIC, Engine.ASYNC);
    }

    @Test
    void aConnectionClosedBeforeAnyAnswerIsUnreachableOnEveryEngine() throws IOException {
        expect(NOTHING, Kind.UNREACHABLE, Engine.RPC, Engine.CLASSIC, Engine.ASYNC, Engine.STREAM);
    }

    @Test
    void aGarbageStatusLineIsABadResponseOnEveryEngine() throws IOException {
        expect(GARBAGE, Kind.BAD_RESPONSE, Engine.RPC, Engine.CLASSIC, Engine.ASYNC, Engine.STREAM);
    }

    @Test
    void aRefusedConnectionIsUnreachableAndNeverSentOnEveryEngine() {
        for (Engine e : Engine.values()) {
            RemoteException r = fail(e, refused);
            assertThat(r.kind()).as("%s: %s", e, r.getMessage()).isEqualTo(Kind.UNREACHABLE);
            assertThat(r.getMessage()).contains("cannot connect");
            assertThat(Failures.neverSent(r)).as("%s: %s", e, r.getCause()).isTrue();
            assertThat(RetryPolicy.standard(r, false)).isEqualTo(RetryPolicy.Action.NEXT_ADDRESS);
        }
    }

    @Test
    void aTruncatedAnswerIsNotRetriedButARefusedConnectionMovesAPostToTheNextAddress() throws IOException {
        try (RawServer truncated = new RawServer(r -> SHORT_LENGTH);
             RawServer good = new RawServer(r -> RawServer.response(200, "application/json", "{\"ok\":true}"))) {
            Function<String, HttpRequest> post = a -> transport.request(transport.uri(a, "/v1/x"))
                    .POST(HttpRequest.BodyPublishers.ofString("{}")).build();
            // refused, then answered: the POST was never sent to the first address, so it goes to the second
            AddressList list = AddressList.of(List.of(refused, good.address()));
            String body = new String(Futures.await(transport.call(list, "POST /v1/x", post, false, Duration.ofSeconds(5),
                    s -> s == 200, HttpTransport.TYPED)).body(), StandardCharsets.UTF_8);
            assertThat(body).isEqualTo("{\"ok\":true}");
            assertThat(good.requests()).hasSize(1);
            assertThat(list.preferred()).isEqualTo(1);

            // a truncated answer to a GET is a bad response: not retried, not failed over
            AddressList two = AddressList.of(List.of(truncated.address(), good.address()));
            Throwable t = catchThrowable(() -> Futures.await(transport.call(two, "GET /v1/x",
                    a -> transport.request(transport.uri(a, "/v1/x")).GET().build(), false, Duration.ofSeconds(5),
                    s -> s == 200, HttpTransport.TYPED)));
            assertThat(((RemoteException) t).kind()).isEqualTo(Kind.BAD_RESPONSE);
            assertThat(truncated.requests()).hasSize(1);
            assertThat(good.requests()).hasSize(1);
        }
    }

    @Test
    void aConnectionBrokenAfterSendingMovesAGetButNotAPost() throws IOException {
        try (RawServer closing = new RawServer(r -> NOTHING);
             RawServer good = new RawServer(r -> RawServer.response(200, "application/json", "{}"))) {
            AddressList list = AddressList.of(List.of(closing.address(), good.address()));
            assertThat(Futures.await(transport.call(list, "GET /v1/x",
                    a -> transport.request(transport.uri(a, "/v1/x")).GET().build(), false, Duration.ofSeconds(5),
                    s -> s == 200, HttpTransport.TYPED)).statusCode()).isEqualTo(200);
            assertThat(closing.requests()).isNotEmpty();
            int before = closing.requests().size();

            AddressList again = AddressList.of(List.of(closing.address(), good.address()));
            Throwable t = catchThrowable(() -> Futures.await(transport.call(again, "POST /v1/x",
                    a -> transport.request(transport.uri(a, "/v1/x")).POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
                    false, Duration.ofSeconds(5), s -> s == 200, HttpTransport.TYPED)));
            assertThat(((RemoteException) t).kind()).isEqualTo(Kind.UNREACHABLE);
            assertThat(closing.requests()).hasSize(before + 1);
            assertThat(good.requests()).hasSize(1); // the POST may have been taken: not sent elsewhere
        }
    }
}
