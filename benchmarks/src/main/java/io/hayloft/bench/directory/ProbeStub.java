package io.hayloft.bench.directory;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The address every simulated store of {@code hayloft bench directory} registers with: an HTTP server
 * on loopback that answers every {@code GET} (the health checker's {@code /health}) 200 with an empty
 * body and anything else 404. The directory's health checker probes every registered store every
 * {@code probeIntervalMillis}; a store that nothing answers fails each probe, and each failure is a
 * change of the directory (its failure count, then FAILED), a Raft commit in a group, so without this
 * the simulated stores would load the directory with probe verdicts while their heartbeats are being
 * measured (1,000 simulated stores: a failure per store every few seconds, hundreds of changes a
 * second). A probe that passes changes nothing. The 404 keeps a volume from ever being made on a
 * simulated store (the directory wants 201 to a create).
 *
 * <p>Thread-safe; {@link #close()} stops it.
 */
final class ProbeStub implements AutoCloseable {
    private final HttpServer server;
    private final AtomicLong answered = new AtomicLong();

    ProbeStub() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 256);
        server.createContext("/", ex -> {
            try (ex) {
                ex.getRequestBody().readAllBytes();
                boolean get = "GET".equals(ex.getRequestMethod());
                if (get) {
                    answered.incrementAndGet();
                }
                ex.sendResponseHeaders(get ? 200 : 404, -1);
            }
        });
        server.start(); // the dispatcher thread answers: each answer is a header
    }

    /** host:port, for the simulated stores' heartbeats. */
    String address() {
        return server.getAddress().getAddress().getHostAddress() + ":" + server.getAddress().getPort();
    }

    /** GETs answered 200 so far. */
    long answered() {
        return answered.get();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
