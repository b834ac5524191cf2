package io.hayloft.store.http;

import io.hayloft.format.errors.StoreErrors;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The key-level endpoints {@code GET|HEAD|DELETE /<vol>/<key>?cookie=C} and the
 * {@code 503 VOLUME_SYNCING} gate of a store that has not applied its volumes' delete logs.
 */
class KeyApiTest extends OneVolumeStoreTest {
    private static List<Long> alts(JsonNode answer) {
        List<Long> out = new ArrayList<>();
        answer.get("alts").forEach(a -> out.add(a.get("alt").asLong()));
        return out;
    }

    @Test
    void listsAndDeletesTheLiveAltsOfAKeyWithItsCookie() throws Exception {
        for (String key : new String[] {"0", "1", "18446744073709551615", "9223372036854775808"}) {
            long[] altValues = {0, 1, 150, 1L << 31, 0xFFFF_FFFFL};
            for (long alt : altValues) {
                int size = alt == 1 ? 0 : (int) (alt % 1000) + 10;
                assertThat(http.put("/1/" + key + "/" + alt + "?cookie=ffffffffffffffff", StoreServerTest.data(size, 1)).status())
                        .isEqualTo(201);
            }
            assertThat(http.put("/1/" + key + "/7?cookie=abc", StoreServerTest.data(9, 2)).status()).isEqualTo(201);

            TestHttp.Reply get = http.get("/1/" + key + "?cookie=ffffffffffffffff");
            assertThat(get.status()).isEqualTo(200);
            assertThat(get.json().get("volume").asLong()).isEqualTo(1);
            assertThat(get.json().get("key").asText()).isEqualTo(key);
            assertThat(alts(get.json())).containsExactly(0L, 1L, 150L, 1L << 31, 0xFFFF_FFFFL);
            assertThat(get.json().get("alts").get(1).get("size").asInt()).isZero();
            assertThat(get.json().get("alts").get(2).get("size").asInt()).isEqualTo(160);
            assertThat(http.send("HEAD", "/1/" + key + "?cookie=ffffffffffffffff", null).status()).isEqualTo(200);
            assertThat(alts(http.get("/1/" + key + "?cookie=abc").json())).containsExactly(7L);

            TestHttp.Reply del = http.delete("/1/" + key + "?cookie=FFFFFFFFFFFFFFFF");
            assertThat(del.status()).isEqualTo(200);
            List<Long> deleted = new ArrayList<>();
            del.json().get("deleted").forEach(a -> deleted.add(a.asLong()));
            assertThat(deleted).containsExactly(0L, 1L, 150L, 1L << 31, 0xFFFF_FFFFL);
            assertThat(http.get("/1/" + key + "?cookie=ffffffffffffffff").status()).isEqualTo(404);
            assertThat(http.get("/1/" + key + "/150?cookie=ffffffffffffffff").status()).isEqualTo(404);
            assertThat(http.delete("/1/" + key + "?cookie=ffffffffffffffff").status()).isEqualTo(404);
            assertThat(http.get("/1/" + key + "/7?cookie=abc").status()).as("another cookie is untouched").isEqualTo(200);
        }
    }

    @Test
    void aWrongCookieLooksExactlyLikeAMissingKey() throws Exception {
        assertThat(http.put("/1/42/0?cookie=abc", StoreServerTest.data(10, 1)).status()).isEqualTo(201);
        for (String method : new String[] {"GET", "DELETE"}) {
            TestHttp.Reply wrong = http.send(method, "/1/42?cookie=abd", null);
            TestHttp.Reply missing = http.send(method, "/1/43?cookie=abc", null);
            assertThat(wrong.status()).isEqualTo(404).isEqualTo(missing.status());
            assertThat(wrong.errorCode()).isEqualTo(missing.errorCode()).isEqualTo(StoreErrors.NEEDLE_NOT_FOUND.code());
            assertThat(new String(wrong.body()).replace("42", "43")).isEqualTo(new String(missing.body()));
        }
        assertThat(http.send("HEAD", "/1/42?cookie=abd", null).status()).isEqualTo(404);
        assertThat(http.get("/1/42/0?cookie=abc").status()).as("a failed delete deletes nothing").isEqualTo(200);
    }

    @Test
    void badInputIsAFourHundredNamingTheProblem() throws Exception {
        assertThat(http.get("/1/18446744073709551616?cookie=abc").errorCode()).isEqualTo(StoreErrors.BAD_ARGUMENT.code());
        assertThat(new String(http.get("/1/12?cookie=xyz").body())).contains("cookie");
        assertThat(http.get("/1/12?cookie=12345678901234567").status()).isEqualTo(400);
        assertThat(new String(http.get("/1/12").body())).contains("cookie");
        assertThat(http.put("/1/12?cookie=abc", new byte[1]).status()).isEqualTo(405);
        assertThat(http.get("/9/12?cookie=abc").errorCode()).isEqualTo(StoreErrors.VOLUME_NOT_FOUND.code());
    }

    @Test
    void aSyncingVolumeAnswersReadsWith503AndTakesWrites() throws Exception {
        assertThat(http.put("/1/5/0?cookie=abc", StoreServerTest.data(10, 1)).status()).isEqualTo(201);
        server.store().requireDeleteSync();
        for (String path : new String[] {"/1/5/0?cookie=abc", "/1/5?cookie=abc", "/1/6/0?cookie=abc", "/1/6?cookie=abc"}) {
            TestHttp.Reply r = http.get(path);
            assertThat(r.status()).as(path).isEqualTo(503);
            assertThat(r.errorCode()).isEqualTo(StoreErrors.VOLUME_SYNCING.code());
            assertThat(http.send("HEAD", path, null).status()).isEqualTo(503);
        }
        assertThat(http.put("/1/6/0?cookie=abc", StoreServerTest.data(10, 2)).status()).isEqualTo(201);
        assertThat(http.post("/admin/volumes/2", null).status()).isEqualTo(201);
        assertThat(http.put("/2/6/0?cookie=abc", StoreServerTest.data(10, 2)).status()).isEqualTo(201);
        assertThat(http.get("/2/6/0?cookie=abc").status()).as("a new volume is synced by construction").isEqualTo(200);
        server.store().markSynced(1);
        assertThat(http.get("/1/5/0?cookie=abc").status()).isEqualTo(200);
        assertThat(http.get("/1/6?cookie=abc").status()).isEqualTo(200);
    }
}
