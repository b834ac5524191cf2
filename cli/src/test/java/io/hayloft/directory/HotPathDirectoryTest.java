package io.hayloft.directory;

import io.hayloft.format.directory.StoreState;
import java.nio.file.Path;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.client.DirectoryClient;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.Wire;
import io.hayloft.format.wire.WriteToken;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The directory's hot path (docs/directory-api.md "Hot path") on a real directory server with real
 * stores and RocksDB on loopback, over HTTP: allocator leases, the volume map with its ETag, the
 * per-volume delete logs, the heartbeat answer's delete-log heads, the op names of the request
 * metric, and a 4xx JSON error naming the problem for each kind of bad input.
 */
class HotPathDirectoryTest extends DirectoryOverHttp {
    static final String SECRET = "hot-path-cluster-secret-0123456789";

    private DirectoryConfig config;

    /** A secured directory (write tokens signed with {@link #SECRET}) and {@code n} stores s0.. on racks r0... */
    private void startSecured(int n) throws Exception {
        config = new DirectoryConfig();
        config.dataDir = dir.resolve("directory").toString();
        config.port = 0;
        config.init = true;
        config.probeIntervalMillis = 60_000;
        config.adminToken = ADMIN;
        config.clusterSecret = SECRET;
        directory = DirectoryServer.start(config);
        for (int i = 0; i < n; i++) {
            StoreConfig sc = new StoreConfig();
            sc.dataDirs = List.of(dir.resolve("store" + i).toString());
            sc.host = "127.0.0.1";
            sc.port = 0;
            sc.clusterSecret = SECRET;
            sc.adminToken = ADMIN;
            stores.add(StoreServer.start(sc.validate()));
            heartbeat(i);
        }
    }

    private JsonNode heartbeat(int i) throws Exception {
        Wire.Heartbeat hb = new Wire.Heartbeat("s" + i, "127.0.0.1:" + stores.get(i).port(), "r" + i, 1L << 30, 1L << 30, List.of());
        return send("POST", "/v1/heartbeat", JSON.writeValueAsString(hb), 200, ADMIN);
    }

    private void restart() throws Exception {
        directory.close();
        config.init = false;
        directory = DirectoryServer.start(config);
    }

    /** Asserts a 4xx JSON error with a message containing {@code says}; returns its code. */
    private int error(String method, String path, String body, int status, String says) throws Exception {
        JsonNode e = send(method, path, body, status, ADMIN).get("error");
        assertThat(e.get("message").asText()).as("%s %s", method, path).contains(says);
        assertThat(e.get("name").asText()).isNotBlank();
        return e.get("code").asInt();
    }

    private JsonNode lease(int keys, String exclude) throws Exception {
        return send("POST", "/v1/leases", "{\"keys\": " + keys + (exclude == null ? "" : ", \"exclude\": " + exclude) + "}", 200,
                null);
    }

    private HttpResponse<String> volumeMap(String ifNoneMatch) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + directory.address() + "/v1/volume-map"))
                .timeout(Duration.ofSeconds(10)).GET();
        if (ifNoneMatch != null) {
            b.header("If-None-Match", ifNoneMatch);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private String version() throws Exception {
        HttpResponse<String> r = volumeMap(null);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        String v = JSON.readTree(r.body()).get("version").asText();
        assertThat(r.headers().firstValue("ETag")).contains("\"" + v + "\"");
        return v;
    }

    private static String deletes(String... entries) {
        return "{\"deletes\": [" + String.join(", ", entries) + "]}";
    }

    private static String entry(long key, String cookie, int needles) {
        return "{\"seq\": 0, \"key\": " + key + ", \"cookie\": \"" + cookie + "\", \"needles\": " + needles + "}";
    }

    private static StripeMap plan(int volume) {
        List<StripeMap.Block> blocks = List.of(new StripeMap.Block("s0", "v" + volume + "-aaaaaaaa-s0-u0", 8, 1),
                new StripeMap.Block("s1", "v" + volume + "-aaaaaaaa-s0-u1", 8, 2),
                new StripeMap.Block("s2", "v" + volume + "-aaaaaaaa-s0-u2", 8, 3));
        return new StripeMap(volume, "aaaaaaaa", "rs", 2, 1, 8, 16, "PLANNED", List.of(new StripeMap.Stripe(0, blocks)),
                new StripeMap.IndexBlock("v" + volume + "-aaaaaaaa-index", List.of("s0"), 16, 4));
    }

    // ------------------------------------------------------------------ leases

    @Test
    void leaseRequestsOutOfRangeAreRefusedNamingTheProblem() throws Exception {
        startSecured(3);
        assertThat(error("POST", "/v1/leases", "{\"keys\": 0}", 400, "keys must be in 1..100000, was 0")).isEqualTo(1);
        assertThat(error("POST", "/v1/leases", "{\"keys\": 100001}", 400, "was 100001")).isEqualTo(1);
        assertThat(error("POST", "/v1/leases", "{\"keys\": -1}", 400, "was -1")).isEqualTo(1);
        assertThat(error("POST", "/v1/leases", "{}", 400, "keys must be")).isEqualTo(1);
        assertThat(error("POST", "/v1/leases", "{\"keys\": 4294967297}", 400, "malformed JSON")).isEqualTo(1);
        assertThat(error("POST", "/v1/leases", "{\"keys\": 5, \"exclude\": [0]}", 400, "volume ids >= 1, got 0")).isEqualTo(1);
        assertThat(error("POST", "/v1/leases", "{\"keys\": 5, \"exclude\": [-3]}", 400, "got -3")).isEqualTo(1);
        assertThat(error("POST", "/v1/leases", "{\"keys\": 5, \"exclude\": [null]}", 400, "malformed JSON")).isEqualTo(1);
        assertThat(error("POST", "/v1/leases", "{\"keys\": 5, \"exclude\": \"x\"}", 400, "malformed JSON")).isEqualTo(1);
        assertThat(error("POST", "/v1/leases", "{not json", 400, "malformed JSON")).isEqualTo(1);
        assertThat(error("POST", "/v1/leases", null, 400, "LeaseRequest")).isEqualTo(1);
        assertThat(error("GET", "/v1/leases", null, 405, "use POST")).isEqualTo(send("GET", "/v1/leases", null, 405, null)
                .get("error").get("code").asInt());
        // The extremes are legal.
        assertThat(lease(1, null).get("count").asInt()).isEqualTo(1);
        assertThat(lease(100_000, "[]").get("count").asInt()).isEqualTo(100_000);
    }

    @Test
    void leasesRotateOverWritableVolumesHonourExcludeAndFailWhenAllAreExcluded() throws Exception {
        startSecured(3);
        JsonNode a = lease(10, null);
        JsonNode b = lease(10, null);
        int va = a.get("volume").asInt();
        int vb = b.get("volume").asInt();
        assertThat(va).isNotEqualTo(vb);
        assertThat(directory.directory().volumes()).hasSize(2); // minWritableVolumes
        Set<String> addresses = new HashSet<>();
        for (StoreServer s : stores) {
            addresses.add("127.0.0.1:" + s.port());
        }
        assertThat(a.get("replicas")).hasSize(3).allSatisfy(r -> assertThat(addresses).contains(r.asText()));
        assertThat(a.get("expiresMillis").asLong()).isGreaterThan(System.currentTimeMillis());
        for (int i = 0; i < 6; i++) {
            assertThat(lease(3, "[" + va + "]").get("volume").asInt()).isEqualTo(vb);
            assertThat(lease(3, "[" + vb + ", 99999]").get("volume").asInt()).isEqualTo(va);
        }
        assertThat(error("POST", "/v1/leases", "{\"keys\": 3, \"exclude\": [" + va + ", " + vb + "]}", 503, "excluded"))
                .isEqualTo(201);
        // A read-only volume is never leased; with one writable volume left, the directory makes another.
        send("POST", "/v1/volumes/" + va + "/read-only", "{\"reason\": \"test\"}", 200, ADMIN);
        for (int i = 0; i < 4; i++) {
            assertThat(lease(3, null).get("volume").asInt()).isNotEqualTo(va);
        }
        assertThat(directory.directory().volumes()).hasSize(3);
    }

    @Test
    void leasedKeysNeverRepeatAcrossLeasesAndRestartsAndTheirTokenCoversExactlyThem() throws Exception {
        startSecured(3);
        WriteToken tokens = new WriteToken(SECRET);
        TreeMap<Long, Long> ranges = new TreeMap<>(); // first -> end (exclusive)
        int[] sizes = {1, 1000, 7, 100_000, 2, 999, 1};
        for (int round = 0; round < 2; round++) {
            for (int size : sizes) {
                JsonNode l = lease(size, null);
                long first = l.get("first").asLong();
                int volume = l.get("volume").asInt();
                assertThat(l.get("count").asInt()).isEqualTo(size);
                assertThat(first).isPositive();
                assertThat(ranges.put(first, first + size)).as("range starting at %d handed out twice", first).isNull();
                String token = l.get("token").asText();
                long now = System.currentTimeMillis();
                for (long k = first; k < first + Math.min(size, 2000); k++) {
                    assertThat(tokens.check(token, volume, k, now)).as("key %d of %d+%d", k, first, size).isNull();
                }
                assertThat(tokens.check(token, volume, first + size - 1, now)).isNull();
                assertThat(tokens.check(token, volume, first + size, now)).contains("not key");
                assertThat(tokens.check(token, volume, first - 1, now)).contains("not key");
                assertThat(tokens.check(token, volume + 1, first, now)).contains("not valid for volume");
                assertThat(tokens.check(token, volume, first, l.get("expiresMillis").asLong() + 1)).contains("expired");
            }
            restart(); // a restart resumes past every key handed out, never inside a range
        }
        long end = 0;
        for (var r : ranges.entrySet()) {
            assertThat(r.getKey()).as("ranges overlap").isGreaterThanOrEqualTo(end);
            end = r.getValue();
        }
        // The allocator's persisted mark: leases cost a synced write only when it moves (1,000,000 keys a step).
        assertThat(new DirectoryConfig().keyRangeSize).isGreaterThanOrEqualTo(100_000);
    }

    @Test
    void anOpenClusterSignsNoTokens() throws Exception {
        start(3, false);
        JsonNode l = lease(5, null);
        assertThat(l.get("token").asText()).isEmpty();
        JsonNode d = send("POST", "/v1/volumes/" + l.get("volume").asInt() + "/deletes",
                deletes(entry(l.get("first").asLong(), "1", 1)), 200, null);
        assertThat(d.get("token").asText()).isEmpty();
    }

    // ------------------------------------------------------------------ the volume map

    @Test
    void theVolumeMapHasAnETagAndChangesExactlyWhenWhatItShowsChanges() throws Exception {
        startSecured(3);
        int volume = lease(1, null).get("volume").asInt();
        HttpResponse<String> r = volumeMap(null);
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode map = JSON.readTree(r.body());
        String v1 = map.get("version").asText();
        assertThat(v1).matches("[0-9a-f]{16}");
        assertThat(r.headers().firstValue("ETag")).contains("\"" + v1 + "\"");
        assertThat(map.get("scheme").asText()).isEqualTo("http");
        assertThat(map.get("readPolicy").asText()).isEqualTo("direct");
        assertThat(map.get("cacheNodes")).isEmpty();
        assertThat(map.get("gutterNodes")).isEmpty();
        assertThat(map.get("volumes")).hasSize(2);
        JsonNode loc = null;
        for (JsonNode x : map.get("volumes")) {
            if (x.get("id").asInt() == volume) {
                loc = x;
            }
        }
        assertThat(loc).isNotNull();
        assertThat(loc.get("state").asText()).isEqualTo("WRITABLE");
        assertThat(loc.get("replicas")).hasSize(3);
        assertThat(loc.get("down")).isEmpty();
        assertThat(loc.get("deleteHead").asLong()).isZero();

        // Unchanged: 304 with an empty body, for the exact tag, among others, and weak.
        for (String inm : List.of("\"" + v1 + "\"", "\"0000000000000000\", \"" + v1 + "\"", "W/\"" + v1 + "\"")) {
            HttpResponse<String> nm = volumeMap(inm);
            assertThat(nm.statusCode()).as(inm).isEqualTo(304);
            assertThat(nm.body()).isEmpty();
            assertThat(nm.headers().firstValue("ETag")).contains("\"" + v1 + "\"");
        }
        assertThat(volumeMap("\"0000000000000000\"").statusCode()).isEqualTo(200);
        // A heartbeat that changes nothing the map shows (only the heartbeat time) keeps the version.
        heartbeat(1);
        assertThat(version()).isEqualTo(v1);
        // Through the client: null while unchanged.
        {
            DirectoryClient client = new DirectoryClient(HttpTransport.create(), List.of(directory.address()), ADMIN);
            assertThat(client.volumeMap(v1).join()).isNull();
            assertThat(client.volumeMap(null).join().version()).isEqualTo(v1);
        }

        // Marked read-only: a new version, and the old tag gets the whole map.
        send("POST", "/v1/volumes/" + volume + "/read-only", "{}", 200, ADMIN);
        String v2 = version();
        assertThat(v2).isNotEqualTo(v1);
        HttpResponse<String> changed = volumeMap("\"" + v1 + "\"");
        assertThat(changed.statusCode()).isEqualTo(200);
        assertThat(stateOf(JSON.readTree(changed.body()), volume).get("state").asText()).isEqualTo("READ_ONLY");

        // A delete logged: a new version with the new head.
        send("POST", "/v1/volumes/" + volume + "/deletes", deletes(entry(12, "ab", 1)), 200, null);
        String v3 = version();
        assertThat(v3).isNotEqualTo(v2);
        assertThat(stateOf(JSON.readTree(volumeMap(null).body()), volume).get("deleteHead").asLong()).isEqualTo(1);
        // The same delete again changes nothing.
        send("POST", "/v1/volumes/" + volume + "/deletes", deletes(entry(12, "ab", 1)), 200, null);
        assertThat(version()).isEqualTo(v3);

        // A failed store: its replicas move to `down`.
        String s0 = "127.0.0.1:" + stores.get(0).port();
        send("POST", "/v1/stores/s0/fail", "{\"reason\": \"test\"}", 200, ADMIN);
        String v4 = version();
        assertThat(v4).isNotEqualTo(v3);
        JsonNode after = stateOf(JSON.readTree(volumeMap(null).body()), volume);
        assertThat(after.get("down")).extracting(JsonNode::asText).containsExactly(s0);
        assertThat(after.get("replicas")).extracting(JsonNode::asText).doesNotContain(s0).hasSize(2);
        // The stripe map's commit: a new version too.
        send("POST", "/v1/stores/s0/restore", null, 200, ADMIN);
        String v5 = version();
        send("POST", "/v1/volumes/" + volume + "/encoding", JSON.writeValueAsString(plan(volume)), 200, ADMIN);
        String v6 = version();
        assertThat(v6).isNotEqualTo(v5);
        assertThat(stateOf(JSON.readTree(volumeMap(null).body()), volume).get("state").asText()).isEqualTo("ENCODING");
    }

    private static JsonNode stateOf(JsonNode map, int volume) {
        for (JsonNode x : map.get("volumes")) {
            if (x.get("id").asInt() == volume) {
                return x;
            }
        }
        throw new AssertionError("volume " + volume + " not in " + map);
    }

    // ------------------------------------------------------------------ delete logs

    @Test
    void theDeleteLogAppendsInOrderOncePerKeyPagesAndSurvivesARestart() throws Exception {
        startSecured(3);
        int volume = lease(1, null).get("volume").asInt();
        String path = "/v1/volumes/" + volume + "/deletes";
        JsonNode first = send("POST", path, deletes(entry(5, "ABC", 1), entry(7, "ffffffffffffffff", 2), entry(0, "0", 0),
                entry(5, "999", 4)), 200, null);
        assertThat(first.get("volume").asInt()).isEqualTo(volume);
        assertThat(first.get("head").asLong()).isEqualTo(3);
        assertThat(first.get("entries")).extracting(e -> e.get("seq").asLong() + ":" + e.get("key").asLong() + ":"
                + e.get("cookie").asText() + ":" + e.get("needles").asInt())
                .containsExactly("1:5:0000000000000abc:1", "2:7:ffffffffffffffff:2", "3:0:0000000000000000:0");
        WriteToken tokens = new WriteToken(SECRET);
        String token = first.get("token").asText();
        long now = System.currentTimeMillis();
        for (long k = 0; k <= 7; k++) {
            assertThat(tokens.check(token, volume, k, now)).isNull();
        }
        assertThat(tokens.check(token, volume, 8, now)).contains("not key");

        // Idempotent per (key, cookie): a logged photo keeps its first entry (needles, seq); new ones follow the head.
        JsonNode again = send("POST", path, deletes(entry(7, "FFFFFFFFFFFFFFFF", 9), entry(9, "9", 1)), 200, null);
        assertThat(again.get("head").asLong()).isEqualTo(4);
        assertThat(again.get("entries")).extracting(e -> e.get("seq").asLong() + ":" + e.get("key").asLong() + ":"
                + e.get("cookie").asText()).containsExactly("2:7:ffffffffffffffff", "4:9:0000000000000009");
        // The largest key alone.
        assertThat(send("POST", path, deletes(entry(Long.MAX_VALUE, "1", 1)), 200, null).get("head").asLong()).isEqualTo(5);

        // Paging.
        JsonNode p1 = send("GET", path + "?after=0&limit=2", null, 200, null);
        assertThat(p1.get("entries")).extracting(e -> e.get("seq").asLong()).containsExactly(1L, 2L);
        assertThat(p1.get("more").asBoolean()).isTrue();
        assertThat(p1.get("head").asLong()).isEqualTo(5);
        assertThat(p1.get("token").isNull()).isTrue();
        JsonNode p2 = send("GET", path + "?after=2&limit=3", null, 200, null);
        assertThat(p2.get("entries")).extracting(e -> e.get("seq").asLong()).containsExactly(3L, 4L, 5L);
        assertThat(p2.get("more").asBoolean()).isFalse();
        JsonNode p3 = send("GET", path + "?after=5", null, 200, null);
        assertThat(p3.get("entries")).isEmpty();
        assertThat(p3.get("more").asBoolean()).isFalse();
        assertThat(send("GET", path + "?after=" + Long.MAX_VALUE, null, 200, null).get("entries")).isEmpty();
        String all = send("GET", path, null, 200, null).get("entries").toString();
        assertThat(JSON.readTree(all)).hasSize(5);

        // dead-keys: the logged keys are dead; a key never logged (written under a lease, say) is live.
        JsonNode dead = send("POST", "/v1/volumes/" + volume + "/dead-keys", "{\"keys\": [0, 5, 6, 7, 9, 123456789, "
                + Long.MAX_VALUE + "]}", 200, null);
        assertThat(dead.get("dead")).extracting(JsonNode::asLong).containsExactly(0L, 5L, 7L, 9L, Long.MAX_VALUE);

        // A restart keeps the log, its head (derived from the last entry) and the index.
        restart();
        assertThat(send("GET", path, null, 200, null).get("entries").toString()).isEqualTo(all);
        JsonNode afterRestart = send("POST", path, deletes(entry(9, "9", 1), entry(10, "a", 1)), 200, null);
        assertThat(afterRestart.get("entries")).extracting(e -> e.get("seq").asLong()).containsExactly(4L, 6L);
        assertThat(afterRestart.get("head").asLong()).isEqualTo(6);
        // Another volume's log is its own, from 1.
        int other = directory.directory().volumes().stream().mapToInt(v -> v.id()).filter(id -> id != volume).findFirst()
                .orElseThrow();
        assertThat(send("POST", "/v1/volumes/" + other + "/deletes", deletes(entry(5, "1", 1)), 200, null).get("head").asLong())
                .isEqualTo(1);
        // Through the client.
        {
            DirectoryClient client = new DirectoryClient(HttpTransport.create(), List.of(directory.address()), ADMIN);
            Wire.DeleteLog log = client.deleteLog(volume, 4, 10).join();
            assertThat(log.entries()).extracting(Wire.DeleteEntry::seq).containsExactly(5L, 6L);
            Wire.DeleteLog logged = client.logDeletes(volume, List.of(new Wire.DeleteEntry(0, 11, "0b", 3))).join();
            assertThat(logged.head()).isEqualTo(7);
            // The same key with another cookie is another entry: one logged with a wrong cookie first
            // (by anyone who can reach the directory) never keeps the photo's real delete out of the log.
            Wire.DeleteLog other7 = client.logDeletes(volume, List.of(new Wire.DeleteEntry(0, 7, "1", 1))).join();
            assertThat(other7.entries()).extracting(e -> e.seq() + ":" + e.key() + ":" + e.cookie())
                    .containsExactly("8:7:0000000000000001");
            assertThat(logged.entries()).containsExactly(new Wire.DeleteEntry(7, 11, "000000000000000b", 3));
        }
    }

    @Test
    void aBackupHoldsTheDeleteLogsAndARestoreNumbersNewEntriesPastAnyTheLostDirectoryGave() throws Exception {
        startSecured(3);
        int volume = lease(1, null).get("volume").asInt();
        String path = "/v1/volumes/" + volume + "/deletes";
        send("POST", path, deletes(entry(1, "1", 1), entry(2, "2", 1)), 200, null);
        Path backup = dir.resolve("backup");
        JsonNode manifest = send("POST", "/v1/backup", "{\"dir\": \"" + backup.toAbsolutePath() + "\"}", 200, ADMIN);
        assertThat(manifest.get("volumes").asLong()).isEqualTo(2);
        // Logged after the backup: lost with the live directory, but a store may have applied them (up to 5).
        assertThat(send("POST", path, deletes(entry(3, "3", 1), entry(4, "4", 1), entry(5, "5", 1)), 200, null)
                .get("head").asLong()).isEqualTo(5);
        directory.close();
        Path restored = dir.resolve("restored");
        DirectoryBackup.restore(backup, restored, DirectoryBackup.DEFAULT_KEY_MARGIN, DirectoryBackup.DEFAULT_VOLUME_MARGIN);
        config.dataDir = restored.toString();
        config.init = false;
        directory = DirectoryServer.start(config);
        JsonNode log = send("GET", path, null, 200, null);
        assertThat(log.get("head").asLong()).isEqualTo(2);
        assertThat(log.get("entries")).extracting(e -> e.get("key").asLong()).containsExactly(1L, 2L);
        // A new entry is numbered past every number the lost directory could have given; a logged key keeps its entry.
        JsonNode next = send("POST", path, deletes(entry(2, "2", 1), entry(3, "3", 1)), 200, null);
        long floor = 2 + DirectoryBackup.DELETE_SEQ_MARGIN;
        assertThat(next.get("entries")).extracting(e -> e.get("seq").asLong()).containsExactly(2L, floor + 1);
        assertThat(next.get("head").asLong()).isEqualTo(floor + 1);
        assertThat(send("GET", path + "?after=5", null, 200, null).get("entries")).extracting(e -> e.get("key").asLong())
                .containsExactly(3L);
        // An empty log stays at 0 until its first entry, which also comes after the floor.
        int other = directory.directory().volumes().stream().mapToInt(v -> v.id()).filter(id -> id != volume).findFirst()
                .orElseThrow();
        assertThat(send("GET", "/v1/volumes/" + other + "/deletes", null, 200, null).get("head").asLong()).isZero();
        assertThat(send("POST", "/v1/volumes/" + other + "/deletes", deletes(entry(9, "9", 1)), 200, null).get("head").asLong())
                .isEqualTo(floor + 1);
        restart();
        assertThat(send("POST", path, deletes(entry(4, "4", 1)), 200, null).get("head").asLong()).isEqualTo(floor + 2);
    }

    @Test
    void coldVolumesCountEachLoggedPhotoOnceAndKeepTheCountsOverARestart() throws Exception {
        startSecured(3);
        int volume = lease(1, null).get("volume").asInt();
        String path = "/v1/volumes/" + volume + "/deletes";
        // Not cold yet: nothing counted.
        send("POST", path, deletes(entry(1, "1", 4)), 200, null);
        send("POST", "/v1/volumes/" + volume + "/read-only", "{}", 200, ADMIN);
        send("POST", "/v1/volumes/" + volume + "/encoding", JSON.writeValueAsString(plan(volume)), 200, ADMIN);
        send("POST", path, deletes(entry(1, "1", 4), entry(2, "2", 2), entry(3, "3", 3)), 200, null);
        send("POST", path, deletes(entry(2, "2", 2), entry(3, "3", 3)), 200, null);
        JsonNode v = send("GET", "/v1/volumes/" + volume, null, 200, null);
        assertThat(v.get("deletedPhotos").asLong()).isEqualTo(2);
        assertThat(v.get("deletedNeedles").asLong()).isEqualTo(5);
        restart();
        v = send("GET", "/v1/volumes/" + volume, null, 200, null);
        assertThat(v.get("deletedPhotos").asLong()).isEqualTo(2);
        assertThat(v.get("deletedNeedles").asLong()).isEqualTo(5);
        assertThat(v.get("state").asText()).isEqualTo("ENCODING");
    }

    @Test
    void theHeartbeatAnswerCarriesTheDeleteHeadOfEveryVolumeOnTheStore() throws Exception {
        startSecured(4);
        lease(1, null);
        List<Integer> volumes = directory.directory().volumes().stream().map(v -> v.id()).toList();
        assertThat(volumes).hasSize(2);
        int v0 = volumes.get(0);
        send("POST", "/v1/volumes/" + v0 + "/deletes", deletes(entry(1, "1", 1), entry(2, "2", 1)), 200, null);
        for (int i = 0; i < 4; i++) {
            String id = "s" + i;
            JsonNode a = heartbeat(i);
            assertThat(a.get("storeId").asText()).isEqualTo(id);
            assertThat(a.get("state").asText()).isEqualTo("UP");
            TreeMap<Integer, Long> expected = new TreeMap<>();
            for (var v : directory.directory().volumes()) {
                if (v.replicas().contains(id)) {
                    expected.put(v.id(), v.id() == v0 ? 2L : 0L);
                }
            }
            TreeMap<Integer, Long> got = new TreeMap<>();
            a.get("deleteHeads").fields().forEachRemaining(f -> got.put(Integer.parseInt(f.getKey()), f.getValue().asLong()));
            assertThat(got).as("store %s", id).isEqualTo(expected);
        }
        {
            DirectoryClient client = new DirectoryClient(HttpTransport.create(), List.of(directory.address()), ADMIN);
            String s0 = "127.0.0.1:" + stores.get(0).port();
            Wire.HeartbeatAnswer a = client.heartbeatAnswer(new Wire.Heartbeat("s0", s0, "r0", 1L << 30, 1L << 30, List.of())).join();
            assertThat(a.state()).isEqualTo(StoreState.UP);
            assertThat(a.deleteHeads().keySet()).containsExactlyInAnyOrderElementsOf(directory.directory().volumes().stream()
                    .filter(v -> v.replicas().contains("s0")).map(v -> v.id()).toList());
        }
    }

    @Test
    void hostileDeleteRequestsGetA4xxJsonErrorNamingTheProblem() throws Exception {
        startSecured(3);
        int volume = lease(1, null).get("volume").asInt();
        String path = "/v1/volumes/" + volume + "/deletes";
        assertThat(error("POST", path, "{not json", 400, "malformed JSON")).isEqualTo(1);
        assertThat(error("POST", path, null, 400, "DeleteRequest")).isEqualTo(1);
        assertThat(error("POST", path, "{}", 400, "1..1000 entries, had 0")).isEqualTo(1);
        assertThat(error("POST", path, deletes(), 400, "had 0")).isEqualTo(1);
        assertThat(error("POST", path, "{\"deletes\": [null]}", 400, "malformed JSON")).isEqualTo(1);
        assertThat(error("POST", path, deletes(entry(-1, "1", 1)), 400, "non-negative, was -1")).isEqualTo(1);
        assertThat(error("POST", path, "{\"deletes\": [{\"key\": 18446744073709551615, \"cookie\": \"1\"}]}", 400, "malformed"))
                .isEqualTo(1);
        assertThat(error("POST", path, deletes(entry(1, "xyz", 1)), 400, "cookie must be 1..16 hex digits, was 'xyz'")).isEqualTo(1);
        assertThat(error("POST", path, deletes(entry(1, "", 1)), 400, "cookie must be")).isEqualTo(1);
        assertThat(error("POST", path, deletes(entry(1, "12345678901234567", 1)), 400, "cookie must be")).isEqualTo(1);
        assertThat(error("POST", path, deletes(entry(1, "-1", 1)), 400, "cookie must be")).isEqualTo(1);
        assertThat(error("POST", path, "{\"deletes\": [{\"key\": 1}]}", 400, "was none")).isEqualTo(1);
        assertThat(error("POST", path, deletes(entry(1, "1", -1)), 400, "needles must be >= 0")).isEqualTo(1);
        assertThat(error("POST", path, deletes(entry(0, "1", 1), entry(Long.MAX_VALUE, "1", 1)), 400, "within")).isEqualTo(1);
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 1001; i++) {
            many.add(entry(i, "1", 1));
        }
        assertThat(error("POST", path, deletes(many.toArray(String[]::new)), 400, "had 1001")).isEqualTo(1);
        assertThat(error("POST", "/v1/volumes/9999/deletes", deletes(entry(1, "1", 1)), 404, "9999")).isEqualTo(203);
        assertThat(error("GET", "/v1/volumes/9999/deletes", null, 404, "9999")).isEqualTo(203);
        assertThat(error("POST", "/v1/volumes/abc/deletes", deletes(entry(1, "1", 1)), 400, "volume must be a 32-bit integer, got 'abc'")).isEqualTo(1);
        for (String q : List.of("limit=0", "limit=10001", "limit=-1", "limit=abc", "after=-1", "after=1.5", "after=",
                "after=18446744073709551616", "limit=99999999999999999999")) {
            assertThat(send("GET", path + "?" + q, null, 400, null).get("error").get("message").asText()).as(q).isNotBlank();
        }
        assertThat(error("PUT", path, "{}", 405, "use GET or POST")).isEqualTo(send("PUT", path, "{}", 405, null)
                .get("error").get("code").asInt());
        // None of it was logged.
        assertThat(send("GET", path, null, 200, null).get("head").asLong()).isZero();
        // A full request of 1000 is fine.
        assertThat(send("POST", path, deletes(many.subList(0, 1000).toArray(String[]::new)), 200, null).get("head").asLong())
                .isEqualTo(1000);
        assertThat(send("GET", path + "?limit=10000", null, 200, null).get("entries")).hasSize(1000);
    }

    // ------------------------------------------------------------------ metrics

    @Test
    void eachHotPathEndpointHasItsOwnOpInTheRequestMetric() throws Exception {
        start(3, false);
        int volume = lease(2, null).get("volume").asInt();
        volumeMap(null);
        send("POST", "/v1/volumes/" + volume + "/deletes", deletes(entry(1, "1", 1)), 200, null);
        send("GET", "/v1/volumes/" + volume + "/deletes?after=0", null, 200, null);
        send("GET", "/v1/volumes/" + volume, null, 200, null);
        String text = http.send(HttpRequest.newBuilder(URI.create("http://" + directory.address() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        for (String op : List.of("lease", "volume_map", "delete_log_append", "delete_log_read", "volumes", "heartbeat")) {
            assertThat(text).as(op).containsPattern("hayloft_directory_requests_seconds_count\\{[^}]*op=\"" + op + "\"[^}]*status=\"200\"");
        }
    }
}
