package io.hayloft.serverkit.config;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Ports for servers this process is about to start (or to have another process start): a local
 * cluster's layout, a test's or a benchmark's processes. Each is free on 127.0.0.1 when chosen, in
 * 20000..31999, below Linux's range of ephemeral ports (32768 and up by default). A port the kernel
 * hands out with {@code new ServerSocket(0)} is an ephemeral one, and between choosing it and a
 * server binding it an outgoing connection (a peer's Raft client, an HTTP client of another server
 * starting at the same time) can take it as its local port; a directory replica failed to bind that
 * way in a CI run. Each JVM starts at its own place in the range (by its pid), so processes choosing
 * at once rarely try the same ports. Thread-safe.
 */
public final class Ports {

    static final int LOW = 20_000;
    static final int COUNT = 12_000;
    private static final AtomicInteger NEXT = new AtomicInteger((int) (ProcessHandle.current().pid() % (COUNT / 2)) * 2);

    private Ports() {
    }

    /** A port free now on 127.0.0.1, in 20000..31999; each call gives another until the range wraps. */
    public static int free() throws IOException {
        for (int tries = 0; tries < COUNT; tries++) {
            int port = LOW + Math.floorMod(NEXT.getAndIncrement(), COUNT);
            try (ServerSocket s = new ServerSocket()) {
                s.bind(new InetSocketAddress("127.0.0.1", port));
                return port;
            } catch (IOException taken) {
                // in use: the next one
            }
        }
        throw new IOException("no free port in " + LOW + ".." + (LOW + COUNT - 1) + " on 127.0.0.1");
    }
}
