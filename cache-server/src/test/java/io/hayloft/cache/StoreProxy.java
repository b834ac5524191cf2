package io.hayloft.cache;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A real HTTP proxy in front of a real store, for tests: it counts the GETs it forwards, can hold
 * the store's answers to the first {@code n} of them until {@link #release()}, and can flip a byte of the data (keeping the
 * store's CRC header) to play a store that returns corrupt bytes. One request per connection.
 */
final class StoreProxy implements AutoCloseable {
    private final ServerSocket server;
    private final String target;
    private final HttpClient client = HttpClient.newHttpClient();
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "store-proxy");
        t.setDaemon(true);
        return t;
    });
    final AtomicInteger requests = new AtomicInteger();
    final Semaphore arrived = new Semaphore(0);
    private final AtomicInteger toHold = new AtomicInteger();
    private volatile CountDownLatch gate = new CountDownLatch(0);
    volatile boolean corrupt;

    StoreProxy(String target) throws IOException {
        this.target = target;
        this.server = new ServerSocket(0, 2048, InetAddress.getLoopbackAddress());
        threads.execute(this::acceptLoop);
    }

    String address() {
        return "127.0.0.1:" + server.getLocalPort();
    }

    /** Holds the next {@code n} requests until {@link #release()}. */
    void holdNext(int n) {
        gate = new CountDownLatch(1);
        toHold.set(n);
    }

    void release() {
        gate.countDown();
    }

    /** Waits until {@code n} more requests have arrived. */
    boolean awaitArrivals(int n, long millis) throws InterruptedException {
        return arrived.tryAcquire(n, millis, TimeUnit.MILLISECONDS);
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                threads.execute(() -> serve(s));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(Socket s) {
        try (s) {
            BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.ISO_8859_1));
            String line = in.readLine();
            if (line == null) {
                return;
            }
            for (String h = in.readLine(); h != null && !h.isEmpty(); h = in.readLine()) {
                // headers are not forwarded
            }
            String path = line.split(" ")[1];
            requests.incrementAndGet();
            CountDownLatch g = gate;
            // Ask the store first, then hold its answer: the fill is "in flight" with the store's bytes of that moment.
            HttpResponse<byte[]> r = client.send(HttpRequest.newBuilder(URI.create("http://" + target + path)).GET().build(),
                    HttpResponse.BodyHandlers.ofByteArray());
            arrived.release();
            if (toHold.getAndDecrement() > 0) {
                g.await(30, TimeUnit.SECONDS);
            }
            byte[] body = r.body();
            if (corrupt && r.statusCode() == 200 && body.length > 0) {
                body = body.clone();
                body[body.length / 2] ^= 0x01;
            }
            StringBuilder head = new StringBuilder("HTTP/1.1 " + r.statusCode() + " X\r\n");
            for (String name : new String[] {"content-type", StoreFetcher.CRC_HEADER, StoreFetcher.VOLUME_STATE_HEADER}) {
                r.headers().firstValue(name).ifPresent(v -> head.append(name).append(": ").append(v).append("\r\n"));
            }
            head.append("content-length: ").append(body.length).append("\r\nconnection: close\r\n\r\n");
            OutputStream out = s.getOutputStream();
            out.write(head.toString().getBytes(StandardCharsets.ISO_8859_1));
            out.write(body);
            out.flush();
        } catch (IOException | InterruptedException e) {
            // the cache gave up on us (timeout) or the test is over
        }
    }

    @Override
    public void close() throws IOException {
        gate.countDown();
        server.close();
        threads.shutdownNow();
    }
}
