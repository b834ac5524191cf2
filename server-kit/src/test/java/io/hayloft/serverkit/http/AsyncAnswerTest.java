package io.hayloft.serverkit.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.errors.CommonErrors;
import io.hayloft.testkit.RawHttp;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.util.ResourceLeakDetector;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Asynchronous answers ({@link Router.Builder#routeAsync}, {@link RequestHandler#handleAsync}) through
 * a real server on loopback whose blocking executor has <em>one</em> thread: a request waiting on its
 * future holds no thread (fifty wait at once), its answer is written from the thread that completes
 * the future, a failed future is answered as a thrown exception would be, pipelined requests keep
 * their order on their connection while other connections are answered out of order, and the request
 * is released exactly once, also when the client or the server went away before the answer. Every
 * wait is on a queue, a future or a socket read with a timeout: no sleeps.
 */
class AsyncAnswerTest {
    private static final int TIMEOUT_MILLIS = 10_000;

    @BeforeAll
    static void leaks() {
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
    }

    /**
     * A request the async route took: the request (retained once more by the test, so that the
     * server's single release can be seen), the future to complete, and the thread that took it.
     */
    record Pending(String id, FullHttpRequest request, CompletableFuture<FullHttpResponse> answer, String thread) {
    }

    private final BlockingQueue<Pending> arrived = new LinkedBlockingQueue<>();
    private final List<Pending> all = Collections.synchronizedList(new ArrayList<>());
    /** The routes' calls, in order: the id of each request a route's code saw. */
    private final List<String> calls = Collections.synchronizedList(new ArrayList<>());
    private final List<String> observed = Collections.synchronizedList(new ArrayList<>());
    private ExecutorService executor;
    private ExecutorService completer;
    private HttpServer server;

    @BeforeEach
    void start() throws Exception {
        executor = Executors.newFixedThreadPool(1, r -> new Thread(r, "blocking"));
        completer = Executors.newSingleThreadExecutor(r -> new Thread(r, "completer"));
        Router router = Router.builder(CommonErrors.BAD_REQUEST)
                .routeAsync("later", "POST /later/{id}", (req, p) -> {
                    String id = p.string("id");
                    calls.add(id);
                    Pending pending = new Pending(id, req.retain(), new CompletableFuture<>(), Thread.currentThread().getName());
                    all.add(pending);
                    arrived.add(pending);
                    return pending.answer();
                })
                .route("now", "GET /now/{id}", (req, p) -> {
                    calls.add(p.string("id"));
                    return text("now " + p.string("id"));
                })
                .translate(e -> e instanceof IllegalArgumentException ? CommonErrors.FORBIDDEN.exception(e.getMessage()) : null)
                .observe((route, m, status, nanos) -> observed.add((route == null ? "-" : route.name()) + " " + status))
                .build();
        server = HttpServer.start("127.0.0.1", 0, new HttpLimits(4096, 8192, 1 << 16, 64, 30_000), router, executor, 1);
    }

    @AfterEach
    void stop() {
        synchronized (all) {
            for (Pending p : all) { // a test that failed midway: let the server release its part, then ours
                p.answer().completeExceptionally(new IllegalStateException("test over"));
                if (p.request().refCnt() > 0) {
                    p.request().release();
                }
            }
        }
        server.close();
        executor.shutdownNow();
        completer.shutdownNow();
    }

    @Test
    void anAsyncRouteIsAnsweredFromTheThreadThatCompletesItsFuture() throws Exception {
        try (Client c = new Client()) {
            c.send(post("/later/a", "hello"));
            Pending p = next();
            assertThat(p.thread()).isEqualTo("blocking");
            assertThat(executor.submit(() -> Thread.currentThread().getName()).get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS))
                    .as("the executor's one thread is free while the answer is pending").isEqualTo("blocking");
            assertThat(server.inFlight()).isEqualTo(1);
            complete(p);
            RawHttp.Response r = c.read();
            assertThat(r.status()).isEqualTo(200);
            assertThat(r.text()).isEqualTo("a hello (answered on completer)");
            assertThat(server.inFlight()).isZero();
            c.send(get("/now/b"));
            assertThat(c.read().text()).as("the connection goes on").isEqualTo("now b");
        }
        assertThat(observed).containsExactly("later 200", "now 200");
    }

    @Test
    void fiftyRequestsWaitOnTheirFuturesWithoutHoldingTheExecutorsOneThread() throws Exception {
        int n = 50;
        List<Client> clients = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                Client c = new Client();
                clients.add(c);
                c.send(post("/later/" + i, "body" + i));
            }
            Map<String, Pending> pending = new HashMap<>();
            for (int i = 0; i < n; i++) { // each reaches the route on the one thread, while the others wait
                Pending p = next();
                assertThat(p.thread()).isEqualTo("blocking");
                pending.put(p.id(), p);
            }
            assertThat(pending).hasSize(n);
            assertThat(server.inFlight()).isEqualTo(n);
            for (int i = n - 1; i >= 0; i--) { // completed only now that all arrived, in reverse order
                complete(pending.get(Integer.toString(i)));
            }
            for (int i = 0; i < n; i++) {
                RawHttp.Response r = clients.get(i).read();
                assertThat(r.status()).isEqualTo(200);
                assertThat(r.text()).isEqualTo(i + " body" + i + " (answered on completer)");
            }
            assertThat(server.inFlight()).isZero();
        } finally {
            for (Client c : clients) {
                c.close();
            }
        }
    }

    @Test
    void aFailedFutureIsAnsweredAsAThrownExceptionWouldBe() throws Exception {
        try (Client c = new Client()) {
            c.send(post("/later/x", ""));
            fail(next(), CommonErrors.NOT_FOUND.exception("no such thing"));
            RawHttp.Response r = c.read();
            assertThat(r.status()).isEqualTo(404);
            assertThat(r.headers().get("content-type")).isEqualTo("application/json");
            assertThat(r.text()).isEqualTo("{\"error\":{\"code\":2,\"name\":\"NOT_FOUND\",\"message\":\"no such thing\"}}");

            c.send(post("/later/y", ""));
            fail(next(), new CompletionException(CommonErrors.FORBIDDEN.exception("not yours")));
            r = c.read();
            assertThat(r.status()).as("unwrapped").isEqualTo(403);
            assertThat(r.text()).contains("\"name\":\"FORBIDDEN\"", "not yours");

            c.send(post("/later/z", ""));
            fail(next(), new IllegalArgumentException("fenced"));
            assertThat(c.read().status()).as("translated by the router").isEqualTo(403);

            c.send(post("/later/w", ""));
            fail(next(), new IllegalStateException("a bug"));
            r = c.read();
            assertThat(r.status()).isEqualTo(500);
            assertThat(r.text()).contains("\"name\":\"INTERNAL\"");

            c.send(get("/now/v"));
            assertThat(c.read().text()).as("the connection goes on after each failure").isEqualTo("now v");
        }
        assertThat(server.inFlight()).isZero();
    }

    @Test
    void pipelinedRequestsKeepTheirOrderWhileAnotherConnectionIsAnsweredFirst() throws Exception {
        try (Client a = new Client(); Client b = new Client()) {
            a.send(post("/later/a1", "") + get("/now/a2") + post("/later/a3", ""));
            Pending a1 = next();
            assertThat(a1.id()).isEqualTo("a1");
            b.send(post("/later/b1", ""));
            Pending b1 = next();
            assertThat(b1.id()).isEqualTo("b1");
            complete(b1);
            assertThat(b.read().text()).isEqualTo("b1  (answered on completer)");
            assertThat(calls).as("a2 waits for a1's answer: its connection is busy").containsExactly("a1", "b1");

            complete(a1);
            assertThat(a.read().text()).isEqualTo("a1  (answered on completer)");
            assertThat(a.read().text()).isEqualTo("now a2");
            Pending a3 = next();
            assertThat(a3.id()).isEqualTo("a3");
            complete(a3);
            assertThat(a.read().text()).isEqualTo("a3  (answered on completer)");
            assertThat(calls).containsExactly("a1", "b1", "a2", "a3");
        }
    }

    @Test
    void aClientOrServerGoneBeforeTheAnswerBreaksNothing() throws Exception {
        Client c = new Client();
        c.send(post("/later/gone", "x"));
        Pending p = next();
        c.abort(); // a reset, while the server waits on the future
        complete(p); // written into the reset connection, or discarded: either way released once
        assertThat(server.inFlight()).isZero();
        try (Client d = new Client()) {
            d.send(get("/now/after"));
            assertThat(d.read().text()).as("the server goes on").isEqualTo("now after");
            d.send(post("/later/closing", "y"));
            Pending q = next();
            server.close(); // the connection closes under the pending answer
            FullHttpResponse late = text("late");
            hooked();
            completer.submit(() -> q.answer().complete(late)).get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
            assertThat(late.refCnt()).as("discarded: the channel is gone").isZero();
            assertThat(q.request().refCnt()).as("released once by the server").isEqualTo(1);
            q.request().release();
            assertThat(d.closedWithoutAnswer()).isTrue();
        }
        assertThat(server.inFlight()).isZero();
    }

    /** The next request the async route took. */
    private Pending next() throws InterruptedException {
        Pending p = arrived.poll(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
        assertThat(p).as("a request reached the async route").isNotNull();
        return p;
    }

    /**
     * Completes {@code p} on the completer thread with an answer read from the request there (still
     * readable: the server has not released it), then checks the server released it exactly once.
     */
    private void complete(Pending p) throws Exception {
        hooked();
        completer.submit(() -> {
            assertThat(p.request().refCnt()).as("not released before its answer").isEqualTo(2);
            String body = p.request().content().toString(StandardCharsets.UTF_8);
            p.answer().complete(text(p.id() + " " + body + " (answered on " + Thread.currentThread().getName() + ")"));
            return null;
        }).get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
        assertReleasedOnce(p);
    }

    /** Fails {@code p}'s future with {@code failure} on the completer thread; the request is released exactly once. */
    private void fail(Pending p, Throwable failure) throws Exception {
        hooked();
        completer.submit(() -> p.answer().completeExceptionally(failure)).get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
        assertReleasedOnce(p);
    }

    /**
     * Waits until the blocking thread that ran the route has handed the future back to the server,
     * which hooks its answer on it: the route queued the request before returning, so without this a
     * completion could run before the hook, and the release would happen later on the blocking thread.
     * A task on the one-thread executor runs after the route's call has returned.
     */
    private void hooked() throws Exception {
        executor.submit(() -> null).get(TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
    }

    private static void assertReleasedOnce(Pending p) {
        assertThat(p.request().refCnt()).as("the server released %s once", p.id()).isEqualTo(1);
        p.request().release();
    }

    private static FullHttpResponse text(String s) {
        return HttpResponses.text(HttpResponseStatus.OK, s, "text/plain");
    }

    private static String post(String path, String body) {
        return "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Length: " + body.length() + "\r\n\r\n" + body;
    }

    private static String get(String path) {
        return "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
    }

    /** One kept-alive connection to the server; every read times out rather than hang. */
    private final class Client implements AutoCloseable {
        private final Socket socket = new Socket();
        private final InputStream in;

        Client() throws IOException {
            socket.connect(new InetSocketAddress("127.0.0.1", server.port()), TIMEOUT_MILLIS);
            socket.setSoTimeout(TIMEOUT_MILLIS);
            in = socket.getInputStream();
        }

        void send(String request) throws IOException {
            socket.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            socket.getOutputStream().flush();
        }

        RawHttp.Response read() throws IOException {
            return RawHttp.read(in, false);
        }

        /** Whether the server closed the connection (end of stream or a reset) without answering. */
        boolean closedWithoutAnswer() {
            try {
                return read().status() == -1;
            } catch (SocketException e) {
                return true;
            } catch (IOException e) {
                return false;
            }
        }

        /** Closes with a reset (linger 0), as a client that gives up does. */
        void abort() throws IOException {
            socket.setSoLinger(true, 0);
            socket.close();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
