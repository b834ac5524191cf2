package io.hayloft.directory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.format.wire.Wire;
import io.hayloft.format.wire.WriteToken;
import io.hayloft.format.directory.StoreState;
import io.hayloft.format.directory.VolumeState;
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
    void leasesPlaceReplicasOnDistinctRacksAndSignTokens() throws Exception {
        directory = DirectoryServer.start(config());
        startStores(4, 3);
        JsonNode a = send("POST", "/v1/leases", "{\"keys\": 5}", 200, null);
        int volume = a.get("volume").asInt();
        assertThat(a.get("count").asInt()).isEqualTo(5);
        assertThat(a.get("replicas")).hasSize(3);
        long first = a.get("first").asLong();
        WriteToken tokens = new WriteToken(SECRET);
        assertThat(tokens.check(a.get("token").asText(), volume, first, System.currentTimeMillis())).isNull();
        assertThat(tokens.check(a.get("token").asText(), volume, first + 4, System.currentTimeMillis())).isNull();
        assertThat(tokens.check(a.get("token").asText(), volume, first + 5, System.currentTimeMillis())).contains("not key");
        assertThat(send("POST", "/v1/leases", "{\"keys\": 1}", 200, null).get("first").asLong()).isEqualTo(first + 5);

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
    void deleteLogsTheVolumeMapAndKeysSurviveARestart() throws Exception {
        directory = DirectoryServer.start(config());
        startStores(3, 3);
        JsonNode a = send("POST", "/v1/leases", "{\"keys\": 2}", 200, null);
        int volume = a.get("volume").asInt();
        long key = a.get("first").asLong() + 1;
        JsonNode log = send("POST", "/v1/volumes/" + volume + "/deletes",
                "{\"deletes\": [{\"seq\": 0, \"key\": " + key + ", \"cookie\": \"c0ffee\", \"needles\": 3}]}", 200, null);
        assertThat(log.get("head").asLong()).isEqualTo(1);
        assertThat(log.get("token").asText()).isNotEmpty();
        JsonNode map = send("GET", "/v1/volume-map", null, 200, null);
        JsonNode location = null;
        for (JsonNode v : map.get("volumes")) {
            if (v.get("id").asInt() == volume) {
                location = v;
            }
        }
        assertThat(location).isNotNull();
        assertThat(location.get("deleteHead").asLong()).isEqualTo(1);
        assertThat(location.get("replicas")).hasSize(3);
        assertThat(location.get("replicas").get(0).asText()).startsWith("127.0.0.1:");

        directory.close();
        DirectoryConfig again = config();
        again.init = false;
        directory = DirectoryServer.start(again);
        JsonNode after = send("GET", "/v1/volumes/" + volume + "/deletes?after=0", null, 200, null);
        assertThat(after.get("head").asLong()).isEqualTo(1);
        assertThat(after.get("entries")).hasSize(1);
        assertThat(after.get("entries").get(0).get("key").asLong()).isEqualTo(key);
        assertThat(after.get("entries").get(0).get("cookie").asText()).isEqualTo("0000000000c0ffee");
        assertThat(after.get("entries").get(0).get("needles").asInt()).isEqualTo(3);
        JsonNode next = send("POST", "/v1/leases", "{\"keys\": 1}", 200, null);
        assertThat(next.get("first").asLong()).isGreaterThan(key);
        assertThat(send("GET", "/v1/stores", null, 200, null)).hasSize(3);
    }

    @Test
    void aFullVolumeBecomesReadOnlyAndLeasesMoveOn() throws Exception {
        directory = DirectoryServer.start(config());
        startStores(3, 3);
        int volume = send("POST", "/v1/leases", "{\"keys\": 1}", 200, null).get("volume").asInt();
        heartbeat(0, 3, List.of(new Wire.VolumeReport(volume, 63 * 1024, false)));
        JsonNode v = send("GET", "/v1/volumes/" + volume, null, 200, null);
        assertThat(v.get("state").asText()).isEqualTo("READ_ONLY");
        assertThat(v.get("reason").asText()).startsWith("full:");
        for (int i = 0; i < 6; i++) {
            assertThat(send("POST", "/v1/leases", "{\"keys\": 1}", 200, null).get("volume").asInt()).isNotEqualTo(volume);
        }
    }

    @Test
    void theHealthCheckerFailsAStoppedStoreAndItsVolumes() throws Exception {
        directory = DirectoryServer.start(config());
        startStores(4, 2);
        send("POST", "/v1/leases", "{\"keys\": 1}", 200, null);
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
        JsonNode a = send("POST", "/v1/leases", "{\"keys\": 1}", 200, null);
        assertThat(a.get("replicas").toString()).doesNotContain(":" + stores.get(1).port() + "\"");
        send("POST", "/v1/stores/s1/restore", null, 401, null);
        assertThat(send("POST", "/v1/stores/s1/restore", null, 200, ADMIN).get("state").asText()).isEqualTo("UP");
    }

    @Test
    void badInputGetsClearErrors() throws Exception {
        directory = DirectoryServer.start(config());
        assertThat(send("POST", "/v1/leases", "{\"keys\": 1}", 503, null).get("error").get("code").asInt()).isEqualTo(201);
        startStores(3, 3);
        // The removed per-photo endpoints answer like any unknown path: the directory keeps no per-photo state.
        for (String[] removed : new String[][] {{"POST", "/v1/assign", "{\"count\": 1}"}, {"POST", "/v1/commit", "[]"},
                {"GET", "/v1/lookup/123456", null}, {"DELETE", "/v1/photos/123456", null}}) {
            assertThat(send(removed[0], removed[1], removed[2], 404, null).get("error").get("name").asText())
                    .as("%s %s", removed[0], removed[1]).isEqualTo("NOT_FOUND");
        }
        assertThat(send("POST", "/v1/leases", "{\"keys\": 100001}", 400, null).get("error").get("message").asText())
                .contains("keys must be in 1..100000, was 100001");
        assertThat(send("POST", "/v1/heartbeat", "{not json", 400, ADMIN).get("error").get("message").asText())
                .contains("malformed JSON");
        assertThat(send("POST", "/v1/volumes/99999/deletes", "{\"deletes\": [{\"seq\": 0, \"key\": 1, \"cookie\": \"1\", "
                + "\"needles\": 0}]}", 404, null).get("error").get("code").asInt()).isEqualTo(203);
        send("GET", "/v1/volumes/77", null, 404, null);
        send("GET", "/v1/nothing", null, 404, null);
        send("DELETE", "/v1/leases", null, 405, null);
        send("POST", "/v1/volumes", "{\"count\": 1}", 401, "wrong");
        assertThat(send("POST", "/v1/volumes", "{\"count\": 1}", 200, ADMIN)).hasSize(1);
        assertThat(send("GET", "/health", null, 200, null).get("secured").asBoolean()).isTrue();
    }

    @Test
    void tooFewStoresIsAClearError() throws Exception {
        directory = DirectoryServer.start(config());
        startStores(2, 2);
        JsonNode e = send("POST", "/v1/leases", "{\"keys\": 1}", 503, null).get("error");
        assertThat(e.get("message").asText()).contains("a volume needs 3 healthy stores, 2 are up");
    }

}
