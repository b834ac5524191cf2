package io.hayloft.store.http;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Arrays;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.errors.ApiException;
import io.hayloft.format.errors.CommonErrors;
import io.hayloft.format.wire.BatchBody;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import io.hayloft.store.WriteAuthorizer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StoreServerTest {
    @TempDir
    Path dir;

    StoreServer server;
    TestHttp http;

    static StoreConfig config(Path dir) {
        StoreConfig c = new StoreConfig();
        c.dataDirs = List.of(dir.toString());
        c.host = "127.0.0.1";
        c.port = 0;
        c.maxBodyBytes = 1 << 20;
        c.volumeSizeLimit = 8 << 20;
        c.diskThreads = 8;
        c.ioThreads = 2;
        return c;
    }

    @BeforeEach
    void start() throws Exception {
        server = StoreServer.start(config(dir));
        http = new TestHttp(server.port());
        assertThat(http.post("/admin/volumes/1", null).status()).isEqualTo(201);
    }

    @AfterEach
    void stop() throws Exception {
        server.close();
    }

    static byte[] data(int n, int seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void needleLifecycle() throws Exception {
        byte[] photo = data(5000, 1);
        TestHttp.Reply put = http.put("/1/42/0?cookie=abcdef0123", photo);
        assertThat(put.status()).isEqualTo(201);
        assertThat(put.json().get("size").asInt()).isEqualTo(5000);
        TestHttp.Reply get = http.get("/1/42/0?cookie=abcdef0123");
        assertThat(get.status()).isEqualTo(200);
        assertThat(get.body()).isEqualTo(photo);
        TestHttp.Reply head = http.send("HEAD", "/1/42/0?cookie=abcdef0123", null);
        assertThat(head.status()).isEqualTo(200);
        assertThat(head.raw().headers().firstValue("content-length")).hasValue("5000");
        assertThat(head.body()).isEmpty();

        TestHttp.Reply wrongCookie = http.get("/1/42/0?cookie=abcdef0124");
        TestHttp.Reply missing = http.get("/1/43/0?cookie=abcdef0123");
        assertThat(wrongCookie.status()).isEqualTo(404).isEqualTo(missing.status());
        assertThat(wrongCookie.errorCode()).isEqualTo(100).isEqualTo(missing.errorCode());
        assertThat(new String(wrongCookie.body())).isEqualTo(new String(missing.body()).replace("43/", "42/"));

        assertThat(http.delete("/1/42/0?cookie=abcdef0124").status()).isEqualTo(404);
        assertThat(http.delete("/1/42/0?cookie=abcdef0123").status()).isEqualTo(204);
        assertThat(http.get("/1/42/0?cookie=abcdef0123").errorCode()).isEqualTo(100);
        assertThat(http.delete("/1/42/0?cookie=abcdef0123").status()).isEqualTo(404);

        assertThat(http.put("/1/42/0?cookie=1", data(10, 2)).status()).isEqualTo(201); // overwrite after delete
        assertThat(http.get("/1/42/0?cookie=1").body()).isEqualTo(data(10, 2));
    }

    @Test
    void badArgumentsNameTheProblem() throws Exception {
        TestHttp.Reply noCookie = http.put("/1/42/0", data(10, 1));
        assertThat(noCookie.status()).isEqualTo(400);
        assertThat(noCookie.errorCode()).isEqualTo(106);
        assertThat(noCookie.json().at("/error/message").asText()).contains("cookie");
        assertThat(http.get("/1/42/0?cookie=xyz").json().at("/error/message").asText()).contains("'xyz'");
        assertThat(http.get("/1/42/99999999999?cookie=1").json().at("/error/message").asText()).contains("alt");
        TestHttp.Reply noVolume = http.get("/9/42/0?cookie=1");
        assertThat(noVolume.status()).isEqualTo(404);
        assertThat(noVolume.errorCode()).isEqualTo(101);
        assertThat(http.get("/nope").errorCode()).isEqualTo(2);
        TestHttp.Reply method = http.post("/1/42/0?cookie=1", new byte[1]);
        assertThat(method.status()).isEqualTo(405);
        assertThat(method.errorCode()).isEqualTo(3);
        TestHttp.Reply tooBig = http.put("/1/1/0?cookie=1", new byte[(1 << 20) + 1]);
        assertThat(tooBig.status()).isEqualTo(413);
        assertThat(tooBig.errorCode()).isEqualTo(4);
        assertThat(http.get("/health").status()).isEqualTo(200); // still serving
    }

    @Test
    void batchWritesEveryNeedleWithOneRequest() throws Exception {
        List<Needle> batch = new ArrayList<>();
        for (int alt = 0; alt < 4; alt++) {
            batch.add(new Needle(7, 0xfeedL, alt, data(1000 * (alt + 1), alt)));
        }
        byte[] bytes = BatchBody.encode(batch);
        TestHttp.Reply r = http.post("/1/batch", bytes);
        assertThat(r.status()).isEqualTo(201);
        assertThat(r.json().get("written").asInt()).isEqualTo(4);
        for (int alt = 0; alt < 4; alt++) {
            assertThat(http.get("/1/7/" + alt + "?cookie=feed").body()).isEqualTo(data(1000 * (alt + 1), alt));
        }
        TestHttp.Reply truncated = http.post("/1/batch", Arrays.copyOf(bytes, 30));
        assertThat(truncated.status()).isEqualTo(400);
        assertThat(truncated.json().at("/error/message").asText()).contains("record 0");
    }

    @Test
    void volumeAdminSealCompactStatusAndRawReads() throws Exception {
        assertThat(http.post("/admin/volumes/1", null).errorCode()).isEqualTo(103);
        for (int i = 0; i < 20; i++) {
            http.put("/1/" + i + "/0?cookie=5", data(3000, i));
        }
        for (int i = 0; i < 10; i++) {
            http.delete("/1/" + i + "/0?cookie=5");
        }
        TestHttp.Reply status = http.get("/admin/volumes/1");
        assertThat(status.json().get("needles").asInt()).isEqualTo(10);
        assertThat(status.json().get("deleted").asInt()).isEqualTo(10);
        TestHttp.Reply compact = http.post("/admin/volumes/1/compact", null);
        assertThat(compact.status()).isEqualTo(200);
        assertThat(compact.json().get("needlesCopied").asInt()).isEqualTo(10);
        for (int i = 10; i < 20; i++) {
            assertThat(http.get("/1/" + i + "/0?cookie=5").body()).isEqualTo(data(3000, i));
        }
        TestHttp.Reply raw = http.get("/volumes/1/raw?offset=0&length=4");
        assertThat(raw.body()).isEqualTo(new byte[] {'H', 'L', 'V', 'S'});
        TestHttp.Reply badRange = http.get("/volumes/1/raw?offset=0&length=999999999");
        assertThat(badRange.status()).isEqualTo(416);
        assertThat(badRange.errorCode()).isEqualTo(110);
        assertThat(http.post("/admin/volumes/1/seal", null).json().get("readOnly").asBoolean()).isTrue();
        TestHttp.Reply ro = http.put("/1/99/0?cookie=5", data(10, 1));
        assertThat(ro.status()).isEqualTo(409);
        assertThat(ro.errorCode()).isEqualTo(102);
        assertThat(http.get("/admin/volumes").json().get("volumes").size()).isEqualTo(1);
        String metrics = new String(http.get("/metrics").body());
        assertThat(metrics).contains("hayloft_store_requests_seconds_count").contains("hayloft_store_volumes");
    }

    @Test
    void aSealedVolumeCanBeDroppedAndAWritableOneCannot() throws Exception {
        http.put("/1/1/0?cookie=5", data(100, 1));
        TestHttp.Reply writable = http.delete("/admin/volumes/1");
        assertThat(writable.status()).isEqualTo(409);
        assertThat(writable.errorCode()).isEqualTo(102);
        assertThat(http.get("/1/1/0?cookie=5").status()).isEqualTo(200);
        http.post("/admin/volumes/1/seal", null);
        assertThat(http.delete("/admin/volumes/1").status()).isEqualTo(204);
        assertThat(http.get("/admin/volumes/1").errorCode()).isEqualTo(101);
        assertThat(http.delete("/admin/volumes/1").errorCode()).isEqualTo(101);
        assertThat(http.get("/admin/volumes").json().get("volumes").size()).isZero();
    }

    @Test
    void blockFilesForTheRaidNode() throws Exception {
        assertThat(http.post("/blocks/s1.b0?op=create", null).status()).isEqualTo(201);
        assertThat(http.post("/blocks/s1.b0?op=create", null).errorCode()).isEqualTo(109);
        byte[] a = data(1000, 1);
        byte[] b = data(500, 2);
        assertThat(http.post("/blocks/s1.b0?op=append", a).json().get("length").asLong()).isEqualTo(1000);
        assertThat(http.post("/blocks/s1.b0?op=append", b).json().get("length").asLong()).isEqualTo(1500);
        byte[] whole = new byte[1500];
        System.arraycopy(a, 0, whole, 0, 1000);
        System.arraycopy(b, 0, whole, 1000, 500);
        assertThat(http.get("/blocks/s1.b0").body()).isEqualTo(whole);
        assertThat(http.get("/blocks/s1.b0?offset=990&length=20").body())
                .isEqualTo(Arrays.copyOfRange(whole, 990, 1010));
        assertThat(http.get("/blocks/s1.b0?offset=1490&length=20").errorCode()).isEqualTo(110);
        assertThat(http.put("/blocks/s1.b1", b).status()).isEqualTo(201);
        CRC32C crc = new CRC32C();
        crc.update(whole);
        TestHttp.Reply list = http.get("/blocks");
        assertThat(list.json().get("blocks").size()).isEqualTo(2);
        assertThat(list.json().at("/blocks/0/name").asText()).isEqualTo("s1.b0");
        assertThat(list.json().at("/blocks/0/crc32c").asLong()).isEqualTo(crc.getValue());
        assertThat(list.json().at("/blocks/0/length").asLong()).isEqualTo(1500);
        assertThat(http.delete("/blocks/s1.b0").status()).isEqualTo(204);
        assertThat(http.get("/blocks/s1.b0").errorCode()).isEqualTo(108);
        assertThat(http.post("/blocks/s1.b0?op=append", a).errorCode()).isEqualTo(108);
        assertThat(http.put("/blocks/..evil", a).errorCode()).isEqualTo(106);
        assertThat(http.post("/blocks/x?op=frobnicate", a).errorCode()).isEqualTo(106);
    }

    @Test
    void concurrentWritersAndReaders() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        List<Future<?>> fs = new ArrayList<>();
        for (int t = 0; t < 8; t++) {
            final int thread = t;
            fs.add(pool.submit(() -> {
                TestHttp c = new TestHttp(server.port());
                for (int i = 0; i < 40; i++) {
                    long key = thread * 1000L + i;
                    assertThat(c.put("/1/" + key + "/1?cookie=" + Long.toHexString(key + 1), data(700 + i, (int) key)).status())
                            .isEqualTo(201);
                    assertThat(c.get("/1/" + key + "/1?cookie=" + Long.toHexString(key + 1)).body()).isEqualTo(data(700 + i, (int) key));
                }
                return null;
            }));
        }
        for (Future<?> f : fs) {
            f.get(60, TimeUnit.SECONDS);
        }
        pool.shutdown();
        assertThat(http.get("/admin/volumes/1").json().get("needles").asInt()).isEqualTo(320);
    }

    @Test
    void refusedWritesAndTheConcurrencyLimit() throws Exception {
        server.close();
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        WriteAuthorizer auth = (req, op, vol) -> {
            if (req.headers().contains("x-block")) {
                entered.countDown();
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (req.headers().contains("x-deny")) {
                throw new ApiException(CommonErrors.FORBIDDEN, "write token missing");
            }
        };
        StoreConfig c = config(dir);
        c.maxConcurrentRequests = 1;
        server = StoreServer.start(c, auth);
        http = new TestHttp(server.port());
        HttpClient client = HttpClient.newHttpClient();
        URI base = URI.create("http://127.0.0.1:" + server.port());
        CompletableFuture<HttpResponse<String>> blocked = client.sendAsync(
                HttpRequest.newBuilder(base.resolve("/1/1/0?cookie=1")).header("x-block", "1")
                        .PUT(HttpRequest.BodyPublishers.ofByteArray(new byte[10])).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
        TestHttp.Reply overloaded = http.get("/health");
        assertThat(overloaded.status()).isEqualTo(503);
        assertThat(overloaded.errorCode()).isEqualTo(8);
        release.countDown();
        assertThat(blocked.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
        HttpResponse<String> denied = client.send(HttpRequest.newBuilder(base.resolve("/1/2/0?cookie=1"))
                .header("x-deny", "1").PUT(HttpRequest.BodyPublishers.ofByteArray(new byte[10])).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(denied.statusCode()).isEqualTo(403);
        assertThat(denied.body()).contains("\"code\":11").contains("write token missing");
    }

    private record Needle(long key, long cookie, int alt, byte[] data) implements BatchBody.Record {
    }
}
