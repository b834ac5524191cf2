package io.hayloft.store.http;

import io.hayloft.serverkit.io.Disk;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Arrays;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.client.http.HttpTransport;
import io.hayloft.cold.ClusterReads;
import io.hayloft.cold.StripeEncoder;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import io.hayloft.testkit.Await;
import io.hayloft.testkit.PrometheusText;
import io.hayloft.testkit.RawHttp;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code PUT /blocks/<name>} with a streamed body, on a real store over loopback: any size up to
 * {@code maxBlockBytes} (far past {@code maxBodyBytes}, 1 MiB here) in one request, the CRC32C checked
 * against the header or trailer and recorded for the listing, atomic replace, and nothing left behind
 * by a refused or abandoned body.
 */
class StreamedBlockPutTest {
    static final String TOKEN = "streamed-put-admin-token";
    static final long MAX_BLOCK = 30L << 20;

    @TempDir
    Path dir;

    StoreServer server;
    TestHttp http;
    String address;
    ClusterReads client;
    ClusterReads noToken;

    @BeforeEach
    void start() throws Exception {
        StoreConfig c = StoreServerTest.config(dir);
        c.adminToken = TOKEN;
        c.maxBlockBytes = MAX_BLOCK;
        server = StoreServer.start(c);
        http = new TestHttp(server.port());
        address = "127.0.0.1:" + server.port();
        HttpTransport t = HttpTransport.builder().requestTimeout(Duration.ofSeconds(30)).build();
        client = new ClusterReads("127.0.0.1:1", TOKEN, Duration.ofSeconds(30), t.clusterRpc());
        noToken = new ClusterReads("127.0.0.1:1", null, Duration.ofSeconds(30), t.clusterRpc());
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    static byte[] data(int n, int seed) {
        byte[] b = new byte[n];
        long x = seed * 0x9E3779B97F4A7C15L + 1;
        for (int i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            b[i] = (byte) x;
        }
        return b;
    }

    static long crc(byte[] b) {
        CRC32C c = new CRC32C();
        c.update(b);
        return c.getValue();
    }

    /** Sends {@code b} through the sender's streamed put in pieces of {@code piece} bytes; returns the CRC. */
    long put(ClusterReads via, String name, byte[] b, int piece) throws Exception {
        try (StripeEncoder.BlockUpload up = via.putBlockStream(address, name, b.length)) {
            for (int off = 0; off < b.length; off += piece) {
                up.write(ByteBuffer.wrap(b, off, Math.min(piece, b.length - off)).slice());
            }
            up.finish(crc(b));
        }
        return crc(b);
    }

    private List<String> files() throws Exception {
        try (Stream<Path> s = Files.list(dir.resolve("blocks"))) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private TestHttp.Reply send(String method, String path, byte[] body, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + address + path))
                .timeout(Duration.ofSeconds(30)).method(method, HttpRequest.BodyPublishers.ofByteArray(body));
        for (int i = 0; i < headers.length; i += 2) {
            b.header(headers[i], headers[i + 1]);
        }
        HttpResponse<byte[]> r = HttpClient.newHttpClient().send(b.build(),
                HttpResponse.BodyHandlers.ofByteArray());
        return new TestHttp.Reply(r.statusCode(), r.body(), r);
    }

    private byte[] get(String name) throws Exception {
        TestHttp.Reply r = send("GET", "/blocks/" + name, new byte[0], "Authorization", "Bearer " + TOKEN);
        assertThat(r.status()).as(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo(200);
        return r.body();
    }

    @Test
    void everySizeFromNothingToPastTheBodyLimitGoesInOneRequestAndListsItsCrc() throws Exception {
        int[] sizes = {0, 1, 65535, 65536, 65537, 24 << 20};
        for (int i = 0; i < sizes.length; i++) {
            byte[] b = data(sizes[i], i);
            String name = "v1-0000000" + i + "-s0-u0";
            put(client, name, b, 8 << 20);
            assertThat(get(name)).as("block of %d bytes", sizes[i]).isEqualTo(b);
        }
        // with Content-Length and the CRC in the header, as a plain HTTP client sends it
        byte[] plain = data(3 << 20, 99);
        TestHttp.Reply r = send("PUT", "/blocks/w-plain", plain, "Authorization", "Bearer " + TOKEN,
                "X-Hayloft-Crc32c", String.format("%08X", crc(plain)));
        assertThat(r.status()).isEqualTo(201);
        assertThat(r.json().get("length").asLong()).isEqualTo(plain.length);
        assertThat(r.json().get("crc32c").asLong()).isEqualTo(crc(plain));
        TestHttp.Reply list = http.get("/blocks");
        assertThat(list.json().get("blocks").size()).isEqualTo(sizes.length + 1);
        for (int i = 0; i < sizes.length; i++) {
            assertThat(list.json().at("/blocks/" + i + "/length").asLong()).isEqualTo(sizes[i]);
            assertThat(list.json().at("/blocks/" + i + "/crc32c").asLong()).isEqualTo(crc(data(sizes[i], i)));
        }
        assertThat(files()).allMatch(f -> f.endsWith(".blk"));
        // every byte committed, around the page cache where this file system allows it (directBlockWrites: true)
        long total = Arrays.stream(sizes).asLongStream().sum() + plain.length;
        Disk.Direct probe = Disk.REAL.openDirect(dir.resolve("probe"));
        if (probe != null) {
            probe.channel().close();
        }
        String metrics = new String(http.get("/metrics").body(), StandardCharsets.UTF_8);
        String counter = "hayloft_store_block_committed_bytes_total";
        assertThat(PrometheusText.sum(metrics, counter, "writes", "direct")).isEqualTo(probe != null ? total : 0);
        assertThat(PrometheusText.sum(metrics, counter, "writes", "page_cache")).isEqualTo(probe != null ? 0 : total);
    }

    @Test
    void aCrcMismatchInTheHeaderOrTheTrailerLeavesTheOldBlock() throws Exception {
        byte[] old = data(100_000, 1);
        put(client, "b", old, 4096);
        byte[] next = data(200_000, 2);
        TestHttp.Reply r = send("PUT", "/blocks/b", next, "Authorization", "Bearer " + TOKEN,
                "X-Hayloft-Crc32c", String.format("%08x", crc(next) ^ 1));
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.json().at("/error/name").asText()).isEqualTo("BLOCK_CRC_MISMATCH");
        assertThat(r.json().at("/error/message").asText()).contains("block b").contains(String.format("%08x", crc(next)))
                .contains(String.format("%08x", crc(next) ^ 1));
        // chunked, the CRC in the trailer
        String body = "5\r\nhello\r\n0\r\nX-Hayloft-Crc32c: 12345678\r\n\r\n";
        RawHttp.Response raw = RawHttp.exchange(address, ("PUT /blocks/b HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN
                + "\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + body).getBytes(StandardCharsets.US_ASCII), 10_000);
        assertThat(raw.status()).isEqualTo(400);
        assertThat(raw.text()).contains("BLOCK_CRC_MISMATCH").contains("12345678");
        assertThat(get("b")).isEqualTo(old);
        assertThat(http.get("/blocks").json().at("/blocks/0/crc32c").asLong()).isEqualTo(crc(old));
        Await.until("no temporary file", () -> noTemp());
        // a bad CRC value is a 400 naming the header
        TestHttp.Reply bad = send("PUT", "/blocks/b", next, "Authorization", "Bearer " + TOKEN, "X-Hayloft-Crc32c", "xyz");
        assertThat(bad.status()).isEqualTo(400);
        assertThat(bad.json().at("/error/message").asText()).contains("X-Hayloft-Crc32c");
        // the sender's put compares the CRC32C the store answers with its own
        assertThatThrownBy(() -> {
            try (StripeEncoder.BlockUpload up = client.putBlockStream(address, "b", next.length)) {
                up.write(ByteBuffer.wrap(next));
                up.finish(crc(next) + 1);
            }
        }).isInstanceOf(IOException.class).hasMessageContaining("CRC32C");
    }

    private boolean noTemp() {
        try {
            return files().stream().allMatch(f -> f.endsWith(".blk"));
        } catch (Exception e) {
            return false;
        }
    }

    @Test
    void aClientThatGoesAwayMidBodyLeavesNothingAndTheServerServesOn() throws Exception {
        byte[] old = data(5000, 3);
        put(client, "kept", old, 5000);
        for (String name : new String[] {"kept", "fresh"}) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", server.port()), 5000);
                OutputStream out = s.getOutputStream();
                out.write(("PUT /blocks/" + name + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN
                        + "\r\nContent-Length: " + (8 << 20) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(data(3 << 20, 4));
                out.flush();
                Await.until("the body is being written", () -> server.store().blocks() != null && hasTemp());
            }
            Await.until("the temporary file of " + name + " is gone", this::noTemp);
        }
        assertThat(get("kept")).isEqualTo(old);
        assertThat(http.get("/blocks").json().get("blocks").size()).isEqualTo(1);
        // the sender abandoning its put (close without finish) is the same
        try (StripeEncoder.BlockUpload up = client.putBlockStream(address, "kept", 1 << 20)) {
            up.write(ByteBuffer.wrap(data(1 << 19, 5)));
            // the store has opened the block's writer: what follows checks that the abandon removes it
            Await.until("the abandoned put is being written", this::hasTemp);
        }
        Await.until("no temporary file after an abandoned put", this::noTemp);
        assertThat(get("kept")).isEqualTo(old);
        assertThat(http.get("/health").status()).isEqualTo(200);
    }

    private boolean hasTemp() {
        try {
            return files().stream().anyMatch(f -> f.endsWith(".tmp"));
        } catch (Exception e) {
            return false;
        }
    }

    @Test
    void concurrentPutsOfDifferentBlocksEachLandWhole() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(6);
        try {
            List<Future<Long>> done = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                int n = i;
                done.add(pool.submit(() -> put(client, "c" + n, data((3 << 20) + n * 4099, 100 + n), 1 << 20)));
            }
            for (Future<Long> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        for (int i = 0; i < 12; i++) {
            assertThat(get("c" + i)).isEqualTo(data((3 << 20) + i * 4099, 100 + i));
        }
        assertThat(files()).hasSize(12).allMatch(f -> f.endsWith(".blk"));
    }

    @Test
    void refusalsAreJsonErrorsNamingTheProblem() throws Exception {
        byte[] b = data(1000, 6);
        // a bad name: 400 BAD_ARGUMENT, as for the other block endpoints
        TestHttp.Reply bad = send("PUT", "/blocks/..evil", b, "Authorization", "Bearer " + TOKEN);
        assertThat(bad.status()).isEqualTo(400);
        assertThat(bad.errorCode()).isEqualTo(106);
        assertThat(bad.json().at("/error/message").asText()).contains("bad block name");
        // no admin token: the same refusal as a create
        TestHttp.Reply none = send("PUT", "/blocks/x", b);
        TestHttp.Reply create = send("POST", "/blocks/x?op=create", new byte[0]);
        assertThat(none.status()).isEqualTo(create.status()).isBetween(401, 403);
        assertThat(none.errorCode()).isEqualTo(create.errorCode());
        assertThatThrownBy(() -> put(noToken, "x", b, 100)).isInstanceOf(ClusterReads.HttpStatusException.class);
        // over maxBlockBytes: declared (at once), or found while streaming (chunked)
        RawHttp.Response big = RawHttp.exchange(address, ("PUT /blocks/x HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN
                + "\r\nContent-Length: " + (MAX_BLOCK + 1) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII), 10_000);
        assertThat(big.status()).isEqualTo(413);
        assertThat(big.text()).contains("BODY_TOO_LARGE").contains("maxBlockBytes");
        assertThatThrownBy(() -> put(client, "x", new byte[(int) MAX_BLOCK + 1], 1 << 20))
                .hasMessageContaining("413");
        Await.until("no temporary file", this::noTemp);
        assertThat(http.get("/blocks").json().get("blocks").size()).isZero();
        // exactly the maximum is fine
        byte[] max = data((int) MAX_BLOCK, 7);
        put(client, "max", max, 8 << 20);
        assertThat(get("max")).isEqualTo(max);
        // the old endpoints still work beside it
        assertThat(send("POST", "/blocks/y?op=create", new byte[0], "Authorization", "Bearer " + TOKEN).status()).isEqualTo(201);
        assertThat(send("POST", "/blocks/y?op=append", b, "Authorization", "Bearer " + TOKEN).status()).isEqualTo(200);
        assertThat(get("y")).isEqualTo(b);
    }
}
