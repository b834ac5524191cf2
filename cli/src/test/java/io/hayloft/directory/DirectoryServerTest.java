package io.hayloft.directory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.common.wire.Wire;
import io.hayloft.common.wire.WriteToken;
import io.hayloft.directory.meta.StoreInfo.StoreState;
import io.hayloft.directory.meta.VolumeInfo.VolumeState;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import io.hayloft.testkit.Await;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A real directory server with real store servers on loopback, driven over HTTP. */
class DirectoryServerTest extends DirectoryOverHttp {
    static final String SECRET = "test-cluster-secret-0123456789";

    private DirectoryConfig config() {
        DirectoryConfig c = new DirectoryConfig();
        c.dataDir = dir.resolve("directory").toString();
        c.port = 0;
        c.init = true;
        c.volumeLimitBytes = 64 * 1024;
        c.probeIntervalMillis = 60_000;
        c.failureThreshold = 2;
        c.clusterSecret = SECRET;
        c.adminToken = ADMIN;
        return c;
    }

    /** Starts n stores on racks r0..r(racks-1) and registers them by heartbeat. */
    private void startStores(int n, int racks) throws Exception {
        for (int i = 0; i < n; i++) {
            StoreConfig c = new StoreConfig();
            c.dataDirs = List.of(dir.resolve("store" + i).toString());
            c.host = "127.0.0.1";
            c.port = 0;
            c.volumeSizeLimit = 64 * 1024;
            StoreServer s = StoreServer.start(c.validate());
            stores.add(s);
            heartbeat(i, racks, List.of());
        }
    }

    private JsonNode heartbeat(int i, int racks, List<Wire.VolumeReport> volumes) throws Exception {
        Wire.Heartbeat hb = new Wire.Heartbeat("s" + i, "127.0.0.1:" + stores.get(i).port(), "r" + (i % racks),
                1L << 30, (1L << 30) - i, volumes);
        return send("POST", "/v1/heartbeat", JSON.writeValueAsString(hb), 200, ADMIN);
    }

    @Test
    void assignPlacesReplicasOnDistinctRacksAndSignsTokens() throws Exception {
        directory = DirectoryServer.start(config());
        startStores(4, 3);
        JsonNode a = send("POST", "/v1/assign", "{\"count\": 5}", 200, null);
        int volume = a.get("volume").asInt();
        assertThat(a.get("photos")).hasSize(5);
        long first = a.get("photos").get(0).get("key").asLong();
        for (int i = 0; i < 5; i++) {
            assertThat(a.get("photos").get(i).get("key").asLong()).isEqualTo(first + i);
            assertThat(a.get("photos").get(i).get("cookie").asText()).matches("[0-9a-f]{16}");
        }
        WriteToken tokens = new WriteToken(SECRET);
        assertThat(tokens.check(a.get("token").asText(), volume, first + 4, System.currentTimeMillis())).isNull();
        assertThat(tokens.check(a.get("token").asText(), volume, first + 5, System.currentTimeMillis())).contains("not key");

        JsonNode v = send("GET", "/v1/volumes/" + volume, null, 200, null);
        Set<String> racks = new HashSet<>();
        for (JsonNode id : v.get("replicas")) {
            int i = Integer.parseInt(id.asText().substring(1));
            racks.add("r" + (i % 3));
            assertThat(stores.get(i).volume(volume)).as("physical volume %d on store %s", volume, id).isNotNull();
        }
        assertThat(racks).hasSize(3);
        assertThat(v.get("state").asText()).isEqualTo("WRITABLE");
        assertThat(directory.directory().volumes().stream().filter(x -> x.state() == VolumeState.WRITABLE)).hasSize(2);
    }

    @Test
    void commitLookupDeleteAndRestartKeepEverything() throws Exception {
        directory = DirectoryServer.start(config());
        startStores(3, 3);
        JsonNode a = send("POST", "/v1/assign", "{\"count\": 2}", 200, null);
        long key = a.get("photos").get(1).get("key").asLong();
        String cookie = a.get("photos").get(1).get("cookie").asText();
        send("POST", "/v1/commit", "[{\"key\": " + key + ", \"alts\": [0, 2, 1]}]", 204, null);
        JsonNode l = send("GET", "/v1/lookup/" + key, null, 200, null);
        assertThat(l.get("cookie").asText()).isEqualTo(cookie);
        assertThat(l.get("alts").toString()).isEqualTo("[0,1,2]");
        assertThat(l.get("readFrom")).hasSize(3);
        assertThat(l.get("readFrom").get(0).asText()).startsWith("http://127.0.0.1:");
        assertThat(send("DELETE", "/v1/photos/" + key, null, 200, null).get("token").asText()).isNotEmpty();

        directory.close();
        DirectoryConfig again = config();
        again.init = false;
        directory = DirectoryServer.start(again);
        JsonNode after = send("GET", "/v1/lookup/" + key, null, 200, null);
        assertThat(after.get("deleted").asBoolean()).isTrue();
        assertThat(after.get("cookie").asText()).isEqualTo(cookie);
        JsonNode next = send("POST", "/v1/assign", "{}", 200, null);
        assertThat(next.get("photos").get(0).get("key").asLong()).isGreaterThan(key);
        assertThat(send("GET", "/v1/stores", null, 200, null)).hasSize(3);
    }

    @Test
    void aFullVolumeBecomesReadOnlyAndAssignMovesOn() throws Exception {
        directory = DirectoryServer.start(config());
        startStores(3, 3);
        int volume = send("POST", "/v1/assign", "{}", 200, null).get("volume").asInt();
        heartbeat(0, 3, List.of(new Wire.VolumeReport(volume, 63 * 1024, false)));
        JsonNode v = send("GET", "/v1/volumes/" + volume, null, 200, null);
        assertThat(v.get("state").asText()).isEqualTo("READ_ONLY");
        assertThat(v.get("reason").asText()).startsWith("full:");
        for (int i = 0; i < 6; i++) {
            assertThat(send("POST", "/v1/assign", "{}", 200, null).get("volume").asInt()).isNotEqualTo(volume);
        }
    }

    @Test
    void theHealthCheckerFailsAStoppedStoreAndItsVolumes() throws Exception {
        directory = DirectoryServer.start(config());
        startStores(4, 2);
        send("POST", "/v1/assign", "{}", 200, null);
        stores.get(1).close();
        for (int round = 0; round < 2; round++) {
            directory.healthChecker().round();
            int expected = round + 1;
            Await.until("s1 failures counted", () -> directory.directory().stores().stream().anyMatch(s -> s.id().equals("s1") && s.failures() >= expected));
        }
        Await.until("the volumes on s1 READ_ONLY", () -> directory.directory().volumes().stream().filter(v -> v.replicas().contains("s1"))
                .allMatch(v -> v.state() == VolumeState.READ_ONLY));
        assertThat(directory.directory().meta().store("s1").state()).isEqualTo(StoreState.FAILED);
        assertThat(directory.directory().meta().store("s1").lastError()).isNotBlank();
        directory.directory().volumes().stream().filter(v -> v.replicas().contains("s1"))
                .forEach(v -> assertThat(v.state()).isEqualTo(VolumeState.READ_ONLY));
        assertThat(directory.directory().meta().store("s0").state()).isEqualTo(StoreState.UP);
        // Writes go on with the three healthy stores.
        JsonNode a = send("POST", "/v1/assign", "{}", 200, null);
        assertThat(a.get("replicas").toString()).doesNotContain(":" + stores.get(1).port() + "\"");
        send("POST", "/v1/stores/s1/restore", null, 401, null);
        assertThat(send("POST", "/v1/stores/s1/restore", null, 200, ADMIN).get("state").asText()).isEqualTo("UP");
    }

    @Test
    void badInputGetsClearErrors() throws Exception {
        directory = DirectoryServer.start(config());
        assertThat(send("POST", "/v1/assign", "{}", 503, null).get("error").get("code").asInt()).isEqualTo(201);
        startStores(3, 3);
        assertThat(send("GET", "/v1/lookup/123456", null, 404, null).get("error").get("code").asInt()).isEqualTo(202);
        assertThat(send("GET", "/v1/lookup/abc", null, 400, null).get("error").get("message").asText())
                .contains("photo key must be a non-negative integer, was 'abc'");
        assertThat(send("POST", "/v1/assign", "{\"count\": 5000}", 400, null).get("error").get("message").asText())
                .contains("count must be in 1..1000, was 5000");
        assertThat(send("POST", "/v1/heartbeat", "{not json", 400, ADMIN).get("error").get("message").asText())
                .contains("malformed JSON");
        assertThat(send("POST", "/v1/commit", "[{\"key\": 99999, \"alts\": [0]}]", 404, null).get("error").get("code").asInt())
                .isEqualTo(202);
        send("GET", "/v1/volumes/77", null, 404, null);
        send("GET", "/v1/nothing", null, 404, null);
        send("DELETE", "/v1/assign", null, 405, null);
        send("POST", "/v1/volumes", "{\"count\": 1}", 401, "wrong");
        assertThat(send("POST", "/v1/volumes", "{\"count\": 1}", 200, ADMIN)).hasSize(1);
        assertThat(send("GET", "/health", null, 200, null).get("secured").asBoolean()).isTrue();
    }

    @Test
    void tooFewStoresIsAClearError() throws Exception {
        directory = DirectoryServer.start(config());
        startStores(2, 2);
        JsonNode e = send("POST", "/v1/assign", "{}", 503, null).get("error");
        assertThat(e.get("message").asText()).contains("a volume needs 3 healthy stores, 2 are up");
    }

}
