package io.hayloft.testkit;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;

/**
 * The server the {@link SimulatedHostsTest} runs on its simulated hosts, JDK only:
 * {@code serve PORT} answers {@code GET /ping} with {@code pong}, {@code GET /bytes?n=N} with N bytes,
 * and {@code GET /fetch?to=ADDRESS&port=P} with the outcome of a {@code /ping} it sends itself from
 * its host to {@code ADDRESS:P} ({@code ok pong} or {@code error ...}), so the test can ask one host
 * whether it reaches another. {@code fetch ADDRESS PORT} does that once and prints the outcome;
 * {@code leak exit|hang} makes a {@link SimulatedHosts} with one host, prints its prefix and exits
 * without closing it, or hangs (to be killed).
 * Every GET here is a raw HTTP/1.1 exchange with {@code Connection: close} (no pooled connection
 * survives a cut).
 */
public final class TinyHttpServer {
    static final int CONNECT_TIMEOUT_MILLIS = 500;
    static final int READ_TIMEOUT_MILLIS = 2_000;

    private TinyHttpServer() {
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("fetch")) {
            System.out.println(fetch(args[1], Integer.parseInt(args[2])));
            return;
        }
        if (args[0].equals("leak")) {
            // A fixture never closed: the JVM exits (the shutdown hook cleans up) or hangs until killed.
            SimulatedHosts net = SimulatedHosts.create();
            net.add("a", "r1");
            System.out.println(net.prefix());
            System.out.flush();
            if (args[1].equals("hang")) {
                Thread.sleep(Long.MAX_VALUE);
            }
            return;
        }
        HttpServer server = HttpServer.create(new InetSocketAddress("0.0.0.0", Integer.parseInt(args[1])), 64);
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.createContext("/", TinyHttpServer::handle);
        server.start();
    }

    /** The command that runs this class with {@code args} in a fresh JVM. */
    static List<String> command(String... args) throws URISyntaxException {
        String classpath = Path.of(TinyHttpServer.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                + File.pathSeparator + Path.of(SimulatedHosts.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<String> cmd = new ArrayList<>(List.of(SimulatedHosts.java(), "-Xshare:auto", "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC", "-Xmx64m", "-cp", classpath, TinyHttpServer.class.getName()));
        cmd.addAll(List.of(args));
        return cmd;
    }

    static void handle(HttpExchange ex) throws IOException {
        Map<String, String> q = query(ex.getRequestURI().getRawQuery());
        byte[] body;
        switch (ex.getRequestURI().getPath()) {
            case "/ping" -> body = "pong".getBytes(StandardCharsets.UTF_8);
            case "/bytes" -> body = new byte[Integer.parseInt(q.get("n"))];
            case "/fetch" -> body = fetch(q.get("to"), Integer.parseInt(q.get("port"))).getBytes(StandardCharsets.UTF_8);
            default -> {
                ex.sendResponseHeaders(404, -1);
                ex.close();
                return;
            }
        }
        ex.sendResponseHeaders(200, body.length == 0 ? -1 : body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> q = new HashMap<>();
        if (raw != null) {
            for (String kv : raw.split("&")) {
                int eq = kv.indexOf('=');
                q.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
        }
        return q;
    }

    /** {@code ok <body>} when {@code /ping} at {@code address:port} answers, else {@code error <why>}. */
    static String fetch(String address, int port) {
        try {
            return "ok " + new String(get(address, port, "/ping"), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "error " + e;
        }
    }

    /** The body of {@code GET path} at {@code address:port}; an IOException unless it answers 200. */
    static byte[] get(String address, int port, String path) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(address, port), CONNECT_TIMEOUT_MILLIS);
            s.setSoTimeout(READ_TIMEOUT_MILLIS);
            OutputStream out = s.getOutputStream();
            out.write(("GET " + path + " HTTP/1.1\r\nHost: " + address + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            in.transferTo(all);
            byte[] bytes = all.toByteArray();
            String head = new String(bytes, 0, Math.min(bytes.length, 1000), StandardCharsets.ISO_8859_1);
            int end = head.indexOf("\r\n\r\n");
            if (!head.startsWith("HTTP/1.1 200") || end < 0) {
                throw new IOException("not a 200: " + head);
            }
            return Arrays.copyOfRange(bytes, end + 4, bytes.length);
        }
    }
}
