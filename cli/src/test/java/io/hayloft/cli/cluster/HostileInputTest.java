package io.hayloft.cli.cluster;

import io.hayloft.client.Futures;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.ThreadPoolRunner;
import java.util.TreeMap;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.cache.CacheConfig;
import io.hayloft.cache.CacheServer;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.raid.Checkpoints;
import io.hayloft.raid.RaidServer;
import io.hayloft.raid.RaidServerConfig;
import io.hayloft.testkit.Closing;
import io.hayloft.testkit.RawHttp;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every listener of a running cluster (the directory, the stores, a cache node and a raid-node, with a
 * cluster secret and an admin token) fed hostile requests over raw sockets: the kept corpus
 * ({@code src/test/resources/hostile/corpus.txt}, one request per line, {@code \r\n} escaped) and 1,000
 * generated ones per listener (routes with their segments, query values, methods, headers and bodies
 * replaced by nasty values). Every request must be answered (no hang, no silent close) with a status
 * under 500, every 4xx with a JSON error body naming a code; afterwards every server still serves and
 * every stored photo is intact.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HostileInputTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SECRET = "hostile-secret-0123456789";
    private static final String ADMIN = "hostile-admin-0123456789";
    private static final int GENERATED = 1000;

    @TempDir
    static Path dir;

    private EmbeddedCluster cluster;
    private HayloftClient client;
    private CacheServer cache;
    private RaidServer raid;
    private final List<PutResult> stored = new ArrayList<>();
    private final List<byte[]> bytes = new ArrayList<>();

    @BeforeAll
    void start() throws Exception {
        cluster = EmbeddedCluster.start(ClusterOptions.of(dir.resolve("cluster")).withStores(3, 3)
                .withSecrets(SECRET, ADMIN).withTiming(500, 500, 3));
        client = cluster.newClient();
        Random r = new Random(7);
        for (int i = 0; i < 20; i++) {
            byte[] b = new byte[r.nextInt(5000)];
            r.nextBytes(b);
            stored.add(client.put(b, i % 2 == 0 ? 0 : -1 - i));
            bytes.add(b);
        }
        CacheConfig c = BesideTheCluster.cache(cluster.directoryAddress());
        c.clusterSecret = SECRET;
        c.workerThreads = 8;
        cache = CacheServer.start(c);
        RaidServerConfig rc = BesideTheCluster.raid(cluster.directoryAddress(), dir);
        rc.adminToken = ADMIN;
        raid = RaidServer.start(rc, Checkpoints.NONE);
    }

    @AfterAll
    void stop() throws Exception {
        Closing.all(raid, cache, client, cluster);
    }

    /** Listeners by name, with the route templates the generator starts from. */
    private Map<String, String> listeners() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("directory", cluster.directoryAddress());
        m.put("store", cluster.storeAddress(0));
        m.put("cache", cache.address());
        m.put("raid-node", raid.address());
        return m;
    }

    @Test
    void theCorpusGetsCleanAnswersEverywhere() throws Exception {
        List<CorpusLine> corpus = corpus();
        assertThat(corpus).hasSizeGreaterThan(40);
        List<String> bad = new ArrayList<>();
        for (Map.Entry<String, String> l : listeners().entrySet()) {
            for (CorpusLine line : corpus) {
                RawHttp.Response resp = check(l.getKey(), l.getValue(), line.request(), bad);
                if (resp != null && l.getKey().equals(line.listener()) && resp.status() != line.status()) {
                    bad.add(l.getKey() + ": " + resp.status() + " where the corpus expects " + line.status() + " <- "
                            + show(line.request()));
                }
            }
        }
        assertThat(bad).as("bad answers").isEmpty();
        everythingStillServes();
    }

    @Test
    void generatedRequestsGetCleanAnswersEverywhere() throws Exception {
        List<String> bad = new ArrayList<>();
        for (Map.Entry<String, String> l : listeners().entrySet()) {
            Random r = new Random(l.getKey().hashCode());
            for (int i = 0; i < GENERATED; i++) {
                check(l.getKey(), l.getValue(), generate(l.getKey(), r), bad);
            }
        }
        assertThat(bad).as("bad answers").isEmpty();
        everythingStillServes();
    }

    /** Nonsense that used to be accepted is refused, each with the status that names the problem. */
    @Test
    void nonsenseIsRefusedNotAccepted() throws Exception {
        String d = cluster.directoryAddress();
        String auth = "Authorization: Bearer " + ADMIN + "\r\n";
        assertThat(send(d, "POST", "/v1/heartbeat", auth, "{\"storeId\":\"evil\",\"address\":\"not an address\",\"rack\":\"r\","
                + "\"capacityBytes\":1,\"freeBytes\":1}").status()).isEqualTo(400);
        assertThat(send(d, "POST", "/v1/heartbeat", auth, "{\"storeId\":\"evil\",\"address\":\"127.0.0.1:9\",\"rack\":\"r\","
                + "\"capacityBytes\":-5,\"freeBytes\":1}").status()).isEqualTo(400);
        assertThat(send(d, "POST", "/v1/heartbeat", auth, "{\"storeId\":\"evil\",\"address\":\"127.0.0.1:9\",\"rack\":\"r\","
                + "\"capacityBytes\":5,\"freeBytes\":1,\"volumes\":[{\"id\":-1,\"sizeBytes\":0,\"readOnly\":false}]}").status())
                .isEqualTo(400);
        assertThat(client.directory().stores().join()).noneMatch(st -> st.id().equals("evil"));
        assertThat(send(d, "POST", "/v1/volumes", auth, "{\"count\":4294967297}").status()).isEqualTo(400);
        assertThat(send(d, "POST", "/v1/leases", auth, "[null]").status()).isEqualTo(400);
        assertThat(send(d, "POST", "/v1/leases", "", "{\"keys\":1,\"exclude\":[-1]}").status()).isEqualTo(400);
        PhotoId real = stored.get(0).id();
        assertThat(send(d, "POST", "/v1/volumes/" + real.volume() + "/deletes", "", "{\"deletes\":[{\"seq\":0,\"key\":"
                + real.key() + ",\"cookie\":\"12345678901234567\",\"needles\":1}]}").status()).isEqualTo(400);
        assertThat(send(d, "GET", "/v1/volumes/" + real.volume() + "/deletes?after=-1&limit=0", "", "").status()).isEqualTo(400);
        // The removed per-photo endpoints answer like any unknown path.
        for (String[] removed : new String[][] {{"POST", "/v1/assign"}, {"POST", "/v1/commit"}, {"GET", "/v1/lookup/1"},
                {"DELETE", "/v1/photos/1"}}) {
            RawHttp.Response gone = send(d, removed[0], removed[1], auth, "[null]");
            assertThat(gone.status()).as(removed[1]).isEqualTo(404);
            assertThat(JSON.readTree(gone.body()).path("error").path("name").asText()).isEqualTo("NOT_FOUND");
        }
        for (String address : listeners().values()) {
            assertThat(send(address, "POST", "/health", "", "").status()).as(address).isEqualTo(405);
            assertThat(send(address, "M".repeat(300), "/health", "", "").status()).as(address).isBetween(400, 499);
            RawHttp.Response big = RawHttp.exchange(address, ("PUT /x HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                    + "Content-Length: 999999999999\r\n\r\n").getBytes(StandardCharsets.US_ASCII), 5_000);
            assertThat(big.status()).as(address).isEqualTo(413);
            assertThat(JSON.readTree(big.body()).path("error").path("name").asText()).isEqualTo("BODY_TOO_LARGE");
            assertThat(send(address, "GET", "/%zz%zz", "", "").status()).as(address).isEqualTo(400);
        }
        assertThat(send(cluster.storeAddress(0), "GET", "/9223372036854775808/1/0", "", "").status()).isEqualTo(400);
        assertThat(send(cluster.storeAddress(0), "GET", "/1/18446744073709551616/0", "", "").status()).isEqualTo(400);
    }

    private static RawHttp.Response send(String address, String method, String path, String headers, String body)
            throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        return RawHttp.exchange(address, (method + " " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + headers
                + "Content-Length: " + b.length + "\r\n\r\n" + body).getBytes(StandardCharsets.UTF_8), 5_000);
    }

    /**
     * A wrong cookie is answered exactly as a photo that does not exist, at the store, at the cache (hot
     * URL) and at the cache's cold URL (the volume encoded into stripes): same status, same error code and
     * name, and the same message once the numbers in it are masked. {@link WrongCookieEverywhereTest}
     * compares them at every needle URL of every tier, hot and cold, cached and not.
     */
    @Test
    void aWrongCookieLooksExactlyLikeAMissingPhoto() throws Exception {
        PhotoId hot = stored.get(0).id();
        String store = client.stat(hot).replicas().get(0);
        List<String> pairs = new ArrayList<>();
        pairs.add(store + " " + url("", hot, hot.cookie() ^ 0x5a5a) + " " + url("", missing(hot), hot.cookie()));
        pairs.add(cache.address() + " " + url("/" + store, hot, hot.cookie() ^ 0x5a5a) + " "
                + url("/" + store, missing(hot), hot.cookie()));
        // A coded volume: seal the volume of the second photo and encode it with RS(2,1) over the 3 stores.
        PhotoId cold = stored.get(1).id();
        Futures.await(client.directory().markReadOnly(cold.volume(), "hostile test"));
        RaidConfig rc = new RaidConfig();
        rc.directory = cluster.directoryAddress();
        rc.adminToken = ADMIN;
        rc.codec = "rs";
        rc.k = 2;
        rc.r = 1;
        rc.blockSize = 64 << 10;
        rc.spoolDir = dir.toString();
        try (ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            new RaidNode(rc, runner).encode(cold.volume());
        }
        pairs.add(cache.address() + " " + url("/cold", cold, cold.cookie() ^ 0x5a5a) + " " + url("/cold", missing(cold), cold.cookie()));
        // The hot needle read right once through the cache first, so the cache answers the wrong cookie itself.
        assertThat(get(cache.address(), url("/" + store, hot, hot.cookie())).status()).isEqualTo(200);
        assertThat(get(cache.address(), url("/" + store, hot, hot.cookie())).headers().get("x-hayloft-cache")).isEqualTo("hit");
        for (String p : pairs) {
            String[] x = p.split(" ");
            RawHttp.Response wrong = get(x[0], x[1]);
            RawHttp.Response none = get(x[0], x[2]);
            assertThat(wrong.status()).as(p).isEqualTo(404);
            assertThat(none.status()).as(p).isEqualTo(404);
            assertThat(masked(wrong)).as("wrong cookie against missing photo: " + p).isEqualTo(masked(none));
        }
        assertThat(client.get(cold)).isEqualTo(bytes.get(1));
    }

    private static PhotoId missing(PhotoId id) {
        return new PhotoId(id.volume(), id.key() + 1_000_000, id.alt(), id.cookie());
    }

    private static String url(String prefix, PhotoId id, long cookie) {
        return prefix + "/" + id.volume() + "/" + Long.toUnsignedString(id.key()) + "/" + Integer.toUnsignedString(id.alt())
                + "?cookie=" + String.format(Locale.ROOT, "%016x", cookie);
    }

    private static RawHttp.Response get(String address, String path) throws IOException {
        return RawHttp.exchange(address, ("GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII), 5_000);
    }

    /** The status, the headers that are not lengths or dates, the error's code and name, and its message with numbers masked. */
    private static String masked(RawHttp.Response r) throws IOException {
        Map<String, String> h = new TreeMap<>(r.headers());
        h.remove("content-length");
        h.remove("date");
        JsonNode e = JSON.readTree(r.body()).path("error");
        return r.status() + " " + h + " code " + e.path("code").asInt() + " " + e.path("name").asText() + ": "
                + e.path("message").asText().replaceAll("[0-9a-fA-F]{6,}|\\d+", "#");
    }

    /** Sends {@code req}, adds what is wrong with the answer to {@code bad}; returns the answer (null when none came). */
    private RawHttp.Response check(String name, String address, byte[] req, List<String> bad) {
        String shown = show(req);
        try {
            RawHttp.Response resp = RawHttp.exchange(address, req, 5_000);
            String problem = judge(req, resp);
            if (problem != null && bad.size() < 200) {
                bad.add(name + ": " + problem + " <- " + shown);
            }
            return resp;
        } catch (RawHttp.Hang e) {
            bad.add(name + ": HANG <- " + shown);
        } catch (IOException e) {
            bad.add(name + ": " + e + " <- " + shown);
        }
        return null;
    }

    /** Null when the answer is clean, else what is wrong with it. */
    private static String judge(byte[] req, RawHttp.Response resp) {
        if (resp.status() < 0) {
            return "closed without an answer";
        }
        if (resp.status() >= 500) {
            return resp.status() + " " + resp.text();
        }
        boolean head = new String(req, 0, Math.min(5, req.length), StandardCharsets.ISO_8859_1).startsWith("HEAD ");
        if (resp.status() >= 400 && !head) {
            try {
                JsonNode j = JSON.readTree(resp.body());
                JsonNode e = j == null ? null : j.path("error");
                if (e == null || !e.path("code").isInt() || e.path("name").asText("").isEmpty()
                        || e.path("message").asText("").isEmpty()) {
                    return resp.status() + " without a JSON error body naming a code: " + resp.text();
                }
            } catch (IOException e) {
                return resp.status() + " with a body that is not JSON: " + resp.text();
            }
        }
        return null;
    }

    private void everythingStillServes() throws Exception {
        for (Map.Entry<String, String> l : listeners().entrySet()) {
            RawHttp.Response h = RawHttp.exchange(l.getValue(),
                    "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII), 10_000);
            assertThat(h.status()).as(l.getKey() + " /health").isEqualTo(200);
        }
        for (int i = 0; i < stored.size(); i++) {
            assertThat(client.get(stored.get(i).id())).as("photo " + stored.get(i).id()).isEqualTo(bytes.get(i));
        }
    }

    // ------------------------------------------------------------------ the corpus

    /**
     * One corpus request; a line that starts with {@code [listener:status] } also expects that exact
     * status from that listener (e.g. {@code [directory:404]} for the removed per-photo endpoints).
     */
    record CorpusLine(byte[] request, String listener, int status) {
    }

    private static List<CorpusLine> corpus() throws IOException {
        List<CorpusLine> out = new ArrayList<>();
        try (InputStream in = HostileInputTest.class.getResourceAsStream("/hostile/corpus.txt")) {
            assertThat(in).as("the corpus resource").isNotNull();
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String listener = null;
                int status = 0;
                if (line.startsWith("[")) {
                    int end = line.indexOf("] ");
                    String[] expect = line.substring(1, end).split(":");
                    listener = expect[0];
                    status = Integer.parseInt(expect[1]);
                    line = line.substring(end + 2);
                }
                out.add(new CorpusLine(unescape(line).getBytes(StandardCharsets.UTF_8), listener, status));
            }
        }
        return out;
    }

    /** {@code \r}, {@code \n}, {@code \\} and {@code \x{N*S}} (S repeated N times) in a corpus line. */
    static String unescape(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c != '\\' || i + 1 == s.length()) {
                b.append(c);
                continue;
            }
            char n = s.charAt(++i);
            switch (n) {
                case 'r' -> b.append('\r');
                case 'n' -> b.append('\n');
                case '\\' -> b.append('\\');
                case 'x' -> {
                    int end = s.indexOf('}', i);
                    String[] rep = s.substring(i + 2, end).split("\\*", 2);
                    b.append(rep[1].repeat(Integer.parseInt(rep[0])));
                    i = end;
                }
                default -> b.append('\\').append(n);
            }
        }
        return b.toString();
    }

    // ------------------------------------------------------------------ the generator

    private static final String[] NASTY = {"%zz", "%", "%%", "%0", "%00", "%2F", "%2e%2e", "..", "", " ", "a b",
            "9223372036854775808", "18446744073709551616", "-9223372036854775809", "-1", "0", "-0", "+1", "1e9",
            "0x10", "4294967296", "4294967295", "2147483648", "-2147483649", "99999999999999999999999999",
            "ÿ", "\u00e9", "null", "true", "[]", "{}", "1.5", "NaN", "Infinity", "%C0%AE", "%FF%FE", "x".repeat(3000),
            "1".repeat(400), "v1-00000000-s0-u0", "../../etc/passwd", ";", "'", "\"", "<script>", "0000000000000000001"};

    private static final String[] METHODS = {"GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH", "TRACE", "FOO",
            "get", "M".repeat(300)};

    private static final String[] BODIES = {"", "null", "[null]", "[null,null]", "{", "}", "[", "[]", "{}", "0", "-1",
            "\"x\"", "{\"count\":4294967297}", "{\"count\":-1}", "{\"count\":\"x\"}", "{\"count\":1e400}",
            "{\"count\":null}", "{\"keys\":[-1]}", "{\"keys\":[18446744073709551616]}", "{\"keys\":null}",
            "{\"keys\":\"x\"}", "[{\"key\":null,\"alts\":null}]", "[{\"key\":-1,\"alts\":[-1]}]",
            "[{\"key\":1,\"alts\":[4294967296]}]", "{\"storeId\":\"s\",\"address\":\"not an address\",\"rack\":\"r\","
                    + "\"capacityBytes\":-5,\"freeBytes\":-9,\"volumes\":[{\"id\":-1,\"sizeBytes\":-1,\"readOnly\":false}]}",
            "{\"storeId\":null}", "{\"storeId\":\"" + "s".repeat(5000) + "\"}", "{\"holder\":\"\",\"ttlMillis\":-1}",
            "{\"holder\":\"h\",\"ttlMillis\":9223372036854775807}", "{\"reason\":null}", "{\"reason\":" + "[".repeat(5000) + "}",
            "[".repeat(100_000), "{\"a\":" + "1".repeat(10_000) + "}", "\u0000\u0001\u0002", "\uFFFF",
            "{\"keys\":0}", "{\"keys\":100001}", "{\"keys\":4294967297}", "{\"keys\":1,\"exclude\":[-1]}",
            "{\"keys\":1,\"exclude\":[null]}", "{\"keys\":1,\"exclude\":[4294967296]}", "{\"keys\":1,\"exclude\":\"x\"}",
            "{\"deletes\":null}", "{\"deletes\":[]}", "{\"deletes\":[null]}", "{\"deletes\":[{\"key\":-1,\"cookie\":\"1\"}]}",
            "{\"deletes\":[{\"key\":18446744073709551616,\"cookie\":\"1\"}]}", "{\"deletes\":[{\"key\":1,\"cookie\":\"\"}]}",
            "{\"deletes\":[{\"key\":1,\"cookie\":\"xyz\"}]}", "{\"deletes\":[{\"key\":1,\"cookie\":\"11111111111111111\"}]}",
            "{\"deletes\":[{\"key\":1,\"cookie\":null,\"needles\":-1}]}"};

    /** Route templates per listener: {V} volume, {K} key, {A} alt, {C} cookie, {S} store, {N} block name, {Q} anything. */
    private static final Map<String, String[]> ROUTES = Map.of(
            "directory", new String[] {"/v1/heartbeat", "/v1/leases", "/v1/volume-map", "/v1/volumes/{V}/deletes",
                    "/v1/volumes/{V}/deletes?after={Q}", "/v1/volumes/{V}/deletes?after={Q}&limit={Q}",
                    "/v1/volumes", "/v1/volumes/{V}", "/v1/volumes/{V}/read-only", "/v1/stripes", "/v1/volumes/{V}/stripes",
                    "/v1/volumes/{V}/encoding", "/v1/volumes/{V}/encoding/commit", "/v1/volumes/{V}/encoding?job={Q}",
                    "/v1/volumes/{V}/replicas-dropped", "/v1/volumes/{V}/stripes/{Q}/blocks/{Q}?expect={Q}",
                    "/v1/volumes/{V}/dead-keys", "/v1/reclaims", "/v1/volumes/{V}/reclaim", "/v1/volumes/{V}/reclaim?expect={Q}",
                    "/v1/volumes/{V}/reclaim/commit?expect={Q}", "/v1/raid-lease", "/v1/raid-lease?holder={Q}", "/v1/stores",
                    "/v1/stores/{S}/restore", "/health", "/metrics", "/{Q}", "/v1/{Q}"},
            "store", new String[] {"/{V}/{K}/{A}?cookie={C}", "/{V}/{K}/{A}", "/{V}/batch", "/admin/volumes",
                    "/admin/volumes/{V}", "/admin/volumes/{V}/seal", "/admin/volumes/{V}/index", "/admin/volumes/{V}/compact",
                    "/blocks", "/blocks/{N}", "/blocks/{N}?offset={Q}&length={Q}", "/volumes/{V}/raw?offset={Q}&length={Q}",
                    "/health", "/metrics", "/{Q}"},
            "cache", new String[] {"/{S}/{V}/{K}/{A}?cookie={C}", "/cold/{V}/{K}/{A}?cookie={C}", "/{S}/{V}/{K}/{A}",
                    "/health", "/metrics", "/stats", "/{Q}", "/{Q}/{Q}"},
            "raid-node", new String[] {"/health", "/status", "/status?wait={Q}", "/metrics", "/admin/run", "/admin/scrub",
                    "/{Q}"});

    private byte[] generate(String listener, Random r) {
        String[] routes = ROUTES.get(listener);
        String path = routes[r.nextInt(routes.length)];
        PhotoId real = stored.get(r.nextInt(stored.size())).id();
        path = fill(path, "{V}", r.nextInt(3) == 0 ? nasty(r) : Integer.toString(real.volume()));
        path = fill(path, "{K}", r.nextInt(3) == 0 ? nasty(r) : Long.toUnsignedString(real.key()));
        path = fill(path, "{A}", r.nextInt(3) == 0 ? nasty(r) : Integer.toUnsignedString(real.alt()));
        path = fill(path, "{C}", r.nextInt(2) == 0 ? nasty(r) : String.format(Locale.ROOT, "%016x", r.nextLong()));
        path = fill(path, "{S}", r.nextInt(3) == 0 ? nasty(r) : r.nextBoolean() ? "store-0" : cluster.storeAddress(0));
        path = fill(path, "{N}", nasty(r));
        while (path.contains("{Q}")) {
            path = fill(path, "{Q}", nasty(r));
        }
        String method = r.nextInt(4) == 0 ? METHODS[r.nextInt(METHODS.length)]
                : path.startsWith("/v1/") || path.contains("batch") ? "POST" : "GET";
        String body = r.nextInt(3) == 0 ? "" : BODIES[r.nextInt(BODIES.length)];
        if (path.contains("/deletes") && r.nextBoolean()) {
            // A well-formed delete-log append, hostile in its numbers. Its cookie is random, never a stored photo's:
            // stores apply only entries whose cookie matches, so it cannot delete a real photo by accident.
            body = "{\"deletes\":[{\"seq\":" + (r.nextBoolean() ? "0" : nasty(r)) + ",\"key\":"
                    + (r.nextBoolean() ? Long.toString(real.key() & Long.MAX_VALUE) : nasty(r)) + ",\"cookie\":\""
                    + String.format(Locale.ROOT, "%016x", r.nextLong()) + "\",\"needles\":" + (r.nextBoolean() ? "1" : nasty(r)) + "}]}";
        }
        StringBuilder req = new StringBuilder();
        req.append(method).append(' ').append(path.replace(" ", r.nextBoolean() ? "%20" : " ")).append(" HTTP/1.1\r\n");
        req.append("Host: x\r\nConnection: close\r\n");
        if (r.nextBoolean()) {
            req.append("Authorization: Bearer ").append(r.nextBoolean() ? ADMIN : nasty(r)).append("\r\n");
        }
        if (r.nextInt(4) == 0) {
            req.append("X-Hayloft-Token: ").append(nasty(r)).append("\r\n");
        }
        if (path.startsWith("/v1/volume-map") && r.nextBoolean()) {
            req.append("If-None-Match: ").append(r.nextBoolean() ? "\"" + nasty(r) + "\"" : nasty(r)).append("\r\n");
        }
        if (r.nextInt(5) == 0) {
            req.append("Content-Type: ").append(r.nextBoolean() ? "application/json" : nasty(r)).append("\r\n");
        }
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        int lengthKind = r.nextInt(12);
        if (lengthKind == 0) {
            req.append("Expect: 100-continue\r\nContent-Length: 999999999999\r\n\r\n");
            return req.toString().getBytes(StandardCharsets.UTF_8);
        }
        if (lengthKind == 1) {
            // Lengths that cannot be honoured; a plausible positive length with no body would rightly make the server wait.
            String[] lengths = {"abc", "-1", "1e3", "", "0x10", "18446744073709551616", "99999999999999999999", " 5x", "+-1"};
            req.append("Content-Length: ").append(lengths[r.nextInt(lengths.length)]).append("\r\n\r\n");
            return req.toString().getBytes(StandardCharsets.UTF_8);
        }
        if (lengthKind == 2) {
            req.append("Transfer-Encoding: chunked\r\n\r\n").append(r.nextBoolean() ? "zz\r\n" : "5\r\nabc\r\n0\r\n\r\n");
            return req.toString().getBytes(StandardCharsets.UTF_8);
        }
        req.append("Content-Length: ").append(b.length).append("\r\n\r\n");
        byte[] head = req.toString().getBytes(StandardCharsets.UTF_8);
        byte[] all = Arrays.copyOf(head, head.length + b.length);
        System.arraycopy(b, 0, all, head.length, b.length);
        return all;
    }

    private static String nasty(Random r) {
        return NASTY[r.nextInt(NASTY.length)];
    }

    private static String fill(String path, String hole, String value) {
        int i = path.indexOf(hole);
        return i < 0 ? path : path.substring(0, i) + value + path.substring(i + hole.length());
    }

    private static String show(byte[] req) {
        String s = new String(req, 0, Math.min(req.length, 300), StandardCharsets.UTF_8).replace("\r", "\\r").replace("\n", "\\n");
        return req.length > 300 ? s + "...(" + req.length + " bytes)" : s;
    }
}
