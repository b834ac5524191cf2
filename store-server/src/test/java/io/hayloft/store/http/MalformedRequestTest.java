package io.hayloft.store.http;

import java.util.Random;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Hostile clients on raw sockets: each gets a 4xx JSON error and the server keeps serving. */
class MalformedRequestTest {
    @TempDir
    Path dir;

    StoreServer server;

    @BeforeEach
    void start() throws Exception {
        StoreConfig c = StoreServerTest.config(dir);
        c.maxHeaderBytes = 2048;
        c.maxInitialLineBytes = 1024;
        c.idleTimeoutMillis = 1000;
        server = StoreServer.start(c);
        new TestHttp(server.port()).post("/admin/volumes/1", null);
    }

    @AfterEach
    void stop() throws Exception {
        assertThat(new TestHttp(server.port()).get("/health").status()).as("still serving").isEqualTo(200);
        server.close();
    }

    /** Sends bytes, optionally half-closes, and reads everything until the server closes. */
    private String exchange(byte[] request, boolean halfClose) throws Exception {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(request);
            out.flush();
            if (halfClose) {
                s.shutdownOutput();
            }
            InputStream in = s.getInputStream();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            byte[] buf = new byte[4096];
            int n;
            while ((n = in.read(buf)) >= 0) {
                got.write(buf, 0, n);
            }
            return got.toString(StandardCharsets.ISO_8859_1);
        }
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    @Test
    void garbageGets400() throws Exception {
        byte[] junk = new byte[300];
        new Random(3).nextBytes(junk);
        junk[junk.length - 4] = '\r';
        junk[junk.length - 3] = '\n';
        junk[junk.length - 2] = '\r';
        junk[junk.length - 1] = '\n';
        String r = exchange(junk, false);
        assertThat(r).startsWith("HTTP/1.1 4").contains("\"code\":");
    }

    @Test
    void notHttpAtAllGets400() throws Exception {
        String r = exchange(ascii("HELLO THERE\r\n\r\n"), false);
        assertThat(r).startsWith("HTTP/1.1 400").contains("\"name\":\"BAD_REQUEST\"");
    }

    @Test
    void hugeHeaderGets431() throws Exception {
        String r = exchange(ascii("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(5000) + "\r\n\r\n"), false);
        assertThat(r).startsWith("HTTP/1.1 431").contains("\"code\":5");
    }

    @Test
    void hugeRequestLineGets414() throws Exception {
        String r = exchange(ascii("GET /" + "a".repeat(3000) + " HTTP/1.1\r\nHost: x\r\n\r\n"), false);
        assertThat(r).startsWith("HTTP/1.1 414").contains("\"code\":6");
    }

    @Test
    void declaredBodyOverTheLimitGets413BeforeItIsSent() throws Exception {
        String r = exchange(ascii("PUT /1/1/0?cookie=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999\r\n\r\n"), false);
        assertThat(r).startsWith("HTTP/1.1 413").contains("\"code\":4");
    }

    @Test
    void truncatedBodyThenHalfCloseGets400() throws Exception {
        String r = exchange(ascii("PUT /1/1/0?cookie=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nonly-ten!!"), true);
        assertThat(r).startsWith("HTTP/1.1 400").contains("before the request body was complete");
        assertThat(new TestHttp(server.port()).get("/1/1/0?cookie=1").status()).isEqualTo(404); // nothing written
    }

    @Test
    void stalledBodyGets408() throws Exception {
        String r = exchange(ascii("PUT /1/1/0?cookie=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nonly-ten!!"), false);
        assertThat(r).startsWith("HTTP/1.1 408").contains("\"code\":7");
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrder() throws Exception {
        String one = "PUT /1/5/0?cookie=9 HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc";
        String two = "GET /1/5/0?cookie=9 HTTP/1.1\r\nHost: x\r\n\r\n";
        String three = "GET /1/5/0?cookie=9 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        String r = exchange(ascii(one + two + three), false);
        int first = r.indexOf("HTTP/1.1 201");
        int second = r.indexOf("HTTP/1.1 200");
        int third = r.indexOf("HTTP/1.1 200", second + 1);
        assertThat(first).as(r).isZero();
        assertThat(second).isGreaterThan(first);
        assertThat(third).isGreaterThan(second);
        assertThat(r).endsWith("abc");
    }
}
