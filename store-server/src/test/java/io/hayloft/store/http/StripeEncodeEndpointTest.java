package io.hayloft.store.http;

import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code POST /admin/volumes/{id}/encode-stripe} refuses what it cannot do with a JSON error naming
 * the problem, never a 500: a writable volume (409 VOLUME_NOT_SEALED), an unknown volume (404), a
 * size other than the replica's (409), hostile or malformed bodies (400 naming the field), and a
 * store configured without the endpoint answers 404 as an older store would. (The encode itself:
 * raid-node's LocalEncodeTest.)
 */
class StripeEncodeEndpointTest extends OneVolumeStoreTest {
    @BeforeEach
    void putANeedle() throws Exception {
        assertThat(http.put("/1/42/0?cookie=abcdef0123", StoreServerTest.data(1000, 1)).status()).isEqualTo(201);
    }

    /** A valid request for volume 1 of {@code size} bytes: k=2, r=1, blocks of 4096 on this store. */
    private String request(long size) {
        String self = "127.0.0.1:" + server.port();
        return "{\"job\":\"j1\",\"codec\":\"rs\",\"k\":2,\"r\":1,\"blockSize\":4096,\"volumeSize\":" + size
                + ",\"stripe\":0,\"transferBytes\":4096,\"holder\":\"" + self + "\",\"targets\":["
                + "{\"store\":\"a\",\"address\":\"" + self + "\",\"name\":\"v1-j1-s0-u0\"},"
                + "{\"store\":\"a\",\"address\":\"" + self + "\",\"name\":\"v1-j1-s0-u1\"},"
                + "{\"store\":\"a\",\"address\":\"" + self + "\",\"name\":\"v1-j1-s0-u2\"}]}";
    }

    private TestHttp.Reply encode(long volume, String body) throws Exception {
        return http.post("/admin/volumes/" + volume + "/encode-stripe", body.getBytes(StandardCharsets.UTF_8));
    }

    private long size() throws Exception {
        return http.get("/admin/volumes/1").json().get("sizeBytes").asLong();
    }

    @Test
    void aWritableVolumeIsRefusedWith409NamingIt() throws Exception {
        TestHttp.Reply r = encode(1, request(size()));
        assertThat(r.status()).isEqualTo(409);
        assertThat(r.json().path("error").path("name").asText()).isEqualTo("VOLUME_NOT_SEALED");
        assertThat(new String(r.body(), StandardCharsets.UTF_8)).contains("volume 1 is writable");
        assertThat(server.store().blocks().list()).isEmpty();
    }

    @Test
    void anUnknownVolumeIs404AndAnotherSizeIs409() throws Exception {
        assertThat(encode(7, request(size())).status()).isEqualTo(404);
        assertThat(http.post("/admin/volumes/1/seal", null).status()).isEqualTo(200);
        TestHttp.Reply r = encode(1, request(size() + 8));
        assertThat(r.status()).isEqualTo(409);
        assertThat(r.json().path("error").path("name").asText()).isEqualTo("VOLUME_SIZE_MISMATCH");
    }

    @Test
    void aSealedVolumeEncodesIntoItsOwnBlocksAndAgainIdempotently() throws Exception {
        assertThat(http.post("/admin/volumes/1/seal", null).status()).isEqualTo(200);
        for (int attempt = 0; attempt < 2; attempt++) {
            TestHttp.Reply r = encode(1, request(size()));
            assertThat(r.status()).as(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo(200);
            assertThat(r.json().get("crc32c")).hasSize(3);
            assertThat(r.json().get("candidates")).hasSize(1);
            assertThat(r.json().get("bytesRead").asLong()).isGreaterThanOrEqualTo(size());
            assertThat(r.json().get("bytesSent").asLong()).isZero();
            assertThat(server.store().blocks().list()).extracting(b -> b.name() + "/" + b.length())
                    .containsExactly("v1-j1-s0-u0/4096", "v1-j1-s0-u1/4096", "v1-j1-s0-u2/4096");
            for (int u = 0; u < 3; u++) {
                assertThat(server.store().blocks().list().get(u).crc32c()).isEqualTo(r.json().get("crc32c").get(u).asLong());
            }
        }
        // the block files hold the volume: unit 0 is its first 4096 bytes (zero-padded)
        byte[] volume = http.get("/volumes/1/raw?offset=0&length=" + size()).body();
        byte[] unit0 = http.get("/blocks/v1-j1-s0-u0").body();
        assertThat(Arrays.copyOf(unit0, volume.length)).isEqualTo(volume);
        assertThat(http.get("/metrics").body()).asString(StandardCharsets.UTF_8)
                .contains("hayloft_encode_stripes_total 2.0").contains("hayloft_encode_read_bytes_total");
    }

    /**
     * A delete landing between the pass that reads the data units and the one that computes the
     * parity would leave parity that does not match the data: the store answers 409 VOLUME_CHANGED and
     * commits no block; encoded again, the blocks hold the deleted flag and match.
     */
    @Test
    void aDeleteBetweenTheDataAndParityPassesIs409AndCommitsNothing() throws Exception {
        assertThat(http.put("/1/43/7?cookie=abcdef0124", StoreServerTest.data(700, 2)).status()).isEqualTo(201);
        assertThat(http.post("/admin/volumes/1/seal", null).status()).isEqualTo(200);
        long size = size();
        try {
            StripeEncodeEndpoint.betweenPasses = () -> {
                try {
                    server.store().volume(1).delete(43, 7, Long.parseUnsignedLong("abcdef0124", 16));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            };
            TestHttp.Reply r = encode(1, request(size));
            assertThat(r.status()).as(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo(409);
            assertThat(r.json().path("error").path("name").asText()).isEqualTo("VOLUME_CHANGED");
            assertThat(new String(r.body(), StandardCharsets.UTF_8)).contains("volume 1 changed on this store while stripe 0");
            assertThat(server.store().blocks().list()).as("blocks committed").isEmpty();
        } finally {
            StripeEncodeEndpoint.betweenPasses = () -> { };
        }
        TestHttp.Reply again = encode(1, request(size));
        assertThat(again.status()).as(new String(again.body(), StandardCharsets.UTF_8)).isEqualTo(200);
        assertThat(again.json().get("candidates")).hasSize(2);
        assertThat(again.json().get("candidates").get(1).get("flags").asInt() & 1).as("the deleted flag in the data").isEqualTo(1);
        byte[] volume = http.get("/volumes/1/raw?offset=0&length=" + size).body();
        byte[] unit0 = http.get("/blocks/v1-j1-s0-u0").body();
        byte[] unit1 = http.get("/blocks/v1-j1-s0-u1").body();
        byte[] parity = http.get("/blocks/v1-j1-s0-u2").body();
        byte[] data = Arrays.copyOf(volume, 8192);
        assertThat(Arrays.copyOfRange(data, 0, 4096)).isEqualTo(unit0);
        assertThat(Arrays.copyOfRange(data, 4096, 8192)).isEqualTo(unit1);
        ByteBuffer expected = ByteBuffer.allocate(4096);
        try (ErasureCodec codec = ErasureCodec.create(CodecKind.RS, 2, 1)) {
            codec.encode(new ByteBuffer[] {ByteBuffer.wrap(unit0), ByteBuffer.wrap(unit1)},
                    new ByteBuffer[] {expected});
        }
        assertThat(parity).as("parity of the data blocks").isEqualTo(expected.array());
    }

    @Test
    void hostileBodiesAre400NamingTheField() throws Exception {
        assertThat(http.post("/admin/volumes/1/seal", null).status()).isEqualTo(200);
        long size = size();
        String ok = request(size);
        List<String[]> cases = List.of(
                new String[] {"", "body"},
                new String[] {"null", "body is empty"},
                new String[] {"{\"codec\":", "body is not an encode-stripe request"},
                new String[] {"[1,2,3]", "body is not an encode-stripe request"},
                new String[] {ok.replace("\"rs\"", "\"lrc\""), "codec must be"},
                new String[] {ok.replace("\"k\":2", "\"k\":0"), "k and r must be"},
                new String[] {ok.replace("\"r\":1", "\"r\":70"), "k and r must be"},
                new String[] {ok.replace("\"blockSize\":4096", "\"blockSize\":4095"), "blockSize must be"},
                new String[] {ok.replace("\"blockSize\":4096", "\"blockSize\":-8"), "blockSize must be"},
                new String[] {ok.replace("\"volumeSize\":" + size, "\"volumeSize\":-1"), "volumeSize must be"},
                new String[] {ok.replace("\"stripe\":0", "\"stripe\":1"), "stripe must be in 0..0"},
                new String[] {ok.replace("\"stripe\":0", "\"stripe\":-2147483648"), "stripe must be"},
                new String[] {ok.replace("\"transferBytes\":4096", "\"transferBytes\":1"), "transferBytes must be"},
                new String[] {ok.replace("\"transferBytes\":4096", "\"transferBytes\":2147483647"), "transferBytes must be"},
                new String[] {ok.replace(",{\"store\":\"a\",\"address\":\"127.0.0.1:" + server.port() + "\",\"name\":\"v1-j1-s0-u2\"}", ""),
                        "targets must list k + r = 3"},
                new String[] {ok.replace("v1-j1-s0-u1", "../../etc/passwd"), "targets[1].name"},
                new String[] {ok.replace("v1-j1-s0-u1", "v1-j1-s0-u0"), "targets[1] repeats block"},
                new String[] {ok.replaceFirst("\"address\":\"127.0.0.1:[0-9]+\"", "\"address\":\"evil host/x\""), "targets[0].address"},
                new String[] {ok.replaceFirst("\"address\":\"127.0.0.1:[0-9]+\",", ""), "targets[0].address"},
                new String[] {ok.replace("\"targets\":[", "\"targets\":[null,"), "targets must list"},
                new String[] {"{\"k\":\"many\"}", "body is not an encode-stripe request"});
        for (String[] c : cases) {
            TestHttp.Reply r = encode(1, c[0]);
            assertThat(r.status()).as("status for %s", c[0]).isEqualTo(400);
            assertThat(new String(r.body(), StandardCharsets.UTF_8)).as("error for %s", c[0]).contains(c[1]);
        }
        assertThat(server.store().blocks().list()).isEmpty();
    }

    @Test
    void aStoreWithoutTheEndpointAnswers404() throws Exception {
        server.close();
        StoreConfig c = StoreServerTest.config(dir);
        c.encodeStripes = false;
        server = StoreServer.start(c);
        http = new TestHttp(server.port());
        assertThat(http.post("/admin/volumes/1/seal", null).status()).isEqualTo(200);
        TestHttp.Reply r = encode(1, request(size()));
        assertThat(r.status()).isEqualTo(404);
        assertThat(r.json().path("error").path("name").asText()).isEqualTo("NOT_FOUND");
    }
}
