package io.hayloft.directory;

import java.util.Locale;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.serverkit.http.HttpResponses;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import io.hayloft.testkit.Await;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /v1/console} (the web console's one data endpoint) and the console's files under
 * {@code /ui}, against a real directory with real stores. The raid-node and cache peers here do not
 * answer: one port refuses connections, another accepts them and never replies; the console must
 * say so, on time, and still answer 200. (The reachable case, with a real raid-node and cache node,
 * is in the cli module's {@code ConsoleTest}.)
 */
class ConsoleApiTest extends DirectoryOverHttp {

    static final String ADMIN = "console-admin-token";

    /** Accepts TCP connections (the kernel's backlog) and never reads or answers. */
    ServerSocket blackHole;

    @AfterEach
    void closeBlackHole() throws Exception {
        if (blackHole != null) {
            blackHole.close();
        }
    }


    private void start(String adminToken, int storeCount) throws Exception {
        blackHole = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        start(adminToken, storeCount, "127.0.0.1:" + blackHole.getLocalPort());
    }

    private void start(String adminToken, int storeCount, String raidNode) throws Exception {
        if (blackHole == null) {
            blackHole = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        }
        DirectoryConfig d = new DirectoryConfig();
        d.dataDir = dir.resolve("directory").toString();
        d.port = 0;
        d.init = true;
        d.adminToken = adminToken;
        d.replication = 2;
        d.probeIntervalMillis = 60_000;
        d.raidNode = raidNode;
        d.cacheNodes = List.of("127.0.0.1:" + closedPort());
        d.gutterNodes = List.of("127.0.0.1:" + blackHole.getLocalPort());
        directory = DirectoryServer.start(d);
        for (int i = 0; i < storeCount; i++) {
            StoreConfig c = new StoreConfig();
            c.dataDirs = List.of(dir.resolve("store" + i).toString());
            c.host = "127.0.0.1";
            c.port = 0;
            c.directory = directory.address();
            c.rack = "rack" + i;
            c.heartbeatMillis = 50;
            c.adminToken = adminToken;
            stores.add(StoreServer.start(c));
        }
        Await.until(storeCount + " stores registered", () -> directory.directory().stores().size() == storeCount);
    }

    private static int closedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private HttpResponse<String> send(String method, String path, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + directory.address() + path))
                .timeout(Duration.ofSeconds(10)).method(method, HttpRequest.BodyPublishers.noBody());
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Status and body of {@code GET <target>} sent as is (no URI parsing, so malformed escapes reach the server). */
    private String[] raw(String method, String target) throws IOException {
        String[] hp = directory.address().split(":");
        try (Socket s = new Socket(hp[0], Integer.parseInt(hp[1]))) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write((method + " " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            String all = new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            int end = all.indexOf("\r\n\r\n");
            return new String[] {all.substring(9, 12), all.substring(end + 4), all.substring(0, end).toLowerCase(Locale.ROOT)};
        }
    }

    private void assertRawError(String target, int status, int code) throws IOException {
        String[] r = raw("GET", target);
        assertThat(Integer.parseInt(r[0])).as(target + " " + r[1]).isEqualTo(status);
        assertThat(r[2]).contains("content-type: application/json");
        JsonNode e = HttpResponses.JSON.readTree(r[1]).get("error");
        assertThat(e.get("code").asInt()).as(r[1]).isEqualTo(code);
    }

    private static JsonNode json(HttpResponse<String> r) throws IOException {
        assertThat(r.headers().firstValue("content-type")).hasValue("application/json");
        return HttpResponses.JSON.readTree(r.body());
    }

    private static void assertError(HttpResponse<String> r, int status, int code) throws IOException {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        JsonNode e = json(r).get("error");
        assertThat(e.get("code").asInt()).as(r.body()).isEqualTo(code);
        assertThat(e.get("message").asText()).isNotBlank();
    }

    @Test
    void consoleReportsStoresAndVolumesByStateAndUnreachablePeersWithoutFailing() throws Exception {
        start(null, 3);
        int sealed = directory.directory().createVolumes(2).get(0).id();
        directory.directory().markReadOnly(sealed, "sealed by <b>the test</b>");

        long t0 = System.nanoTime();
        HttpResponse<String> r = send("GET", "/v1/console", null);
        long millis = Duration.ofNanos(System.nanoTime() - t0).toMillis();
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(r.headers().firstValue("cache-control")).hasValue("no-store");
        JsonNode c = json(r);
        assertThat(c.get("cluster").asText()).isEqualTo(directory.directory().meta().clusterId());
        assertThat(c.get("generatedMillis").asLong()).isPositive();

        JsonNode s = c.get("stores");
        assertThat(s).hasSize(3);
        for (JsonNode store : s) {
            assertThat(store.get("id").asText()).isNotBlank();
            assertThat(store.get("address").asText()).startsWith("127.0.0.1:");
            assertThat(store.get("rack").asText()).startsWith("rack");
            assertThat(store.get("state").asText()).isEqualTo("UP");
            assertThat(store.get("capacityBytes").asLong()).isPositive();
            assertThat(store.get("freeBytes").asLong()).isBetween(0L, store.get("capacityBytes").asLong());
            assertThat(store.get("heartbeatAgeSeconds").asLong()).isBetween(0L, 5L);
        }
        JsonNode counts = c.get("volumeCounts");
        assertThat(counts.get("WRITABLE").asInt()).isEqualTo(1);
        assertThat(counts.get("READ_ONLY").asInt()).isEqualTo(1);
        assertThat(counts.get("ERASURE_CODED").asInt()).isZero();
        assertThat(c.get("volumes")).hasSize(2);
        JsonNode first = c.get("volumes").get(0);
        assertThat(first.get("state").asText()).as("WRITABLE before READ_ONLY").isEqualTo("WRITABLE");
        JsonNode ro = c.get("volumes").get(1);
        assertThat(ro.get("id").asInt()).isEqualTo(sealed);
        assertThat(ro.get("reason").asText()).isEqualTo("sealed by <b>the test</b>");
        assertThat(ro.get("replicas")).hasSize(2);
        assertThat(ro.has("coding")).isFalse();

        // The raid-node's port accepts and never answers; the cache's refuses; the gutter's never answers.
        JsonNode raid = c.get("raid");
        assertThat(raid.get("configured").asBoolean()).isTrue();
        assertThat(raid.get("reachable").asBoolean()).isFalse();
        assertThat(raid.get("error").asText()).contains("no answer within 1000 ms");
        assertThat(raid.has("status")).isFalse();
        JsonNode caches = c.get("caches");
        assertThat(caches).hasSize(2);
        assertThat(caches.get(0).get("role").asText()).isEqualTo("cache");
        assertThat(caches.get(0).get("reachable").asBoolean()).isFalse();
        assertThat(caches.get(0).get("error").asText()).isNotBlank();
        assertThat(caches.get(1).get("role").asText()).isEqualTo("gutter");
        assertThat(caches.get(1).get("reachable").asBoolean()).isFalse();
        assertThat(caches.get(1).get("error").asText()).contains("no answer within");
        assertThat(millis).as("peers are waited for in parallel, each at most ~1 s").isLessThan(4000);

        // Wrong method, paths below it, and undecodable input are 4xx JSON errors, never 500.
        assertError(send("POST", "/v1/console", null), 405, 3);
        assertError(send("DELETE", "/v1/console", null), 405, 3);
        assertError(send("GET", "/v1/console/stores", null), 404, 2);
        assertRawError("/v1/console?x=%zz", 400, 1);
        assertRawError("/v1/console%zz", 400, 1);
        assertRawError("/v1/console/%2e%2e", 404, 2);
    }

    @Test
    void consoleListsBucketsWithTheirObjectCountsAndBytes() throws Exception {
        start(null, 1);
        JsonNode none = json(send("GET", "/v1/console", null));
        assertThat(none.get("bucketCount").asInt()).isZero();
        assertThat(none.get("buckets")).isEmpty();
        Namespace ns = directory.directory().namespace();
        ns.createBucket("photos", "us-east-1");
        ns.createBucket("empty", "eu-west-1");
        ns.putObject(object("photos", "a", 5), null, null, false);
        ns.putObject(object("photos", "b", 7), null, null, false);
        ns.putObject(object("photos", "a", 3), null, null, false); // an overwrite: one object, 2 bytes fewer
        ns.createUpload(new io.hayloft.format.s3.Upload("photos", "big", null, 0, null, null, null, null, null));
        JsonNode c = json(send("GET", "/v1/console", null));
        assertThat(c.get("bucketCount").asInt()).isEqualTo(2);
        JsonNode b = c.get("buckets");
        assertThat(b).hasSize(2);
        assertThat(b.get(0).get("name").asText()).as("by name").isEqualTo("empty");
        assertThat(b.get(0).get("objects").asLong()).isZero();
        assertThat(b.get(0).get("region").asText()).isEqualTo("eu-west-1");
        assertThat(b.get(1).get("name").asText()).isEqualTo("photos");
        assertThat(b.get(1).get("objects").asLong()).isEqualTo(2);
        assertThat(b.get(1).get("bytes").asLong()).isEqualTo(10);
        assertThat(b.get(1).get("uploads").asLong()).isEqualTo(1);
        assertThat(b.get(1).get("created").asLong()).isPositive();
    }

    private static io.hayloft.format.s3.ObjectRecord object(String bucket, String key, long size) {
        return new io.hayloft.format.s3.ObjectRecord(bucket, key, size, "etag", List.of(new io.hayloft.format.s3.Chunk(1, 1, 1, size)),
                List.of(), null, null, null, null, null, 0);
    }

    @Test
    void theConsoleDataNeedsTheAdminTokenButItsFilesDoNot() throws Exception {
        start(ADMIN, 1);
        assertError(send("GET", "/v1/console", null), 401, 205);
        assertError(send("GET", "/v1/console", "wrong-" + ADMIN), 401, 205);
        assertError(send("GET", "/v1/console", ADMIN + "x"), 401, 205);
        HttpResponse<String> ok = send("GET", "/v1/console", ADMIN);
        assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
        assertThat(json(ok).get("stores")).hasSize(1);
        assertThat(json(ok).get("raid").get("reachable").asBoolean()).isFalse();
        HttpResponse<String> page = send("GET", "/ui", null);
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body()).doesNotContain(directory.directory().stores().get(0).address());
    }

    @Test
    void consoleFilesAreServedWithTheirContentTypesAndNothingElseUnderUi() throws Exception {
        start(null, 1);
        for (String path : List.of("/ui", "/ui/", "/ui/index.html")) {
            HttpResponse<String> r = send("GET", path, null);
            assertThat(r.statusCode()).as(path).isEqualTo(200);
            assertThat(r.headers().firstValue("content-type")).as(path).hasValue("text/html; charset=utf-8");
            assertThat(r.body()).contains("<script src=\"/ui/app.js\"", "href=\"/ui/style.css\"", "id=\"token-form\"");
            assertThat(r.headers().firstValue("content-security-policy").orElseThrow())
                    .contains("default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'");
            assertThat(r.headers().firstValue("x-content-type-options")).hasValue("nosniff");
        }
        HttpResponse<String> js = send("GET", "/ui/app.js", null);
        assertThat(js.statusCode()).isEqualTo(200);
        assertThat(js.headers().firstValue("content-type")).hasValue("text/javascript; charset=utf-8");
        assertThat(js.body()).contains("/v1/console", "sessionStorage", "Authorization")
                .as("server strings go in as text, never as markup").doesNotContain("innerHTML", "outerHTML",
                        "insertAdjacentHTML", "document.write", "eval(");
        HttpResponse<String> css = send("GET", "/ui/style.css", null);
        assertThat(css.statusCode()).isEqualTo(200);
        assertThat(css.headers().firstValue("content-type")).hasValue("text/css; charset=utf-8");
        assertThat(css.body()).doesNotContain("http://", "https://", "@import");

        for (String bad : List.of("/ui/nope.js", "/ui/app.js/x", "/ui/../pom.xml", "/ui/%2e%2e/pom.xml", "/ui/console/app.js",
                "/ui/ConsoleAssets.class", "/ui/APP.JS")) {
            assertRawError(bad, 404, 2);
        }
        assertRawError("/ui/%zz", 400, 1);
        assertRawError("/ui?%zz", 400, 1);
        assertError(send("POST", "/ui", null), 405, 3);
        assertError(send("PUT", "/ui/app.js", null), 405, 3);
    }

    @Test
    void aPeerThatAnswersGarbageIsReportedNotThrown() throws Exception {
        // A port that answers every request with something that is not HTTP.
        try (ServerSocket garbage = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread t = new Thread(() -> {
                while (!garbage.isClosed()) {
                    try (Socket s = garbage.accept()) {
                        s.getOutputStream().write("SSH-2.0-nope\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    } catch (IOException e) {
                        return;
                    }
                }
            });
            t.setDaemon(true);
            t.start();
            start(null, 1, "127.0.0.1:" + garbage.getLocalPort());
            HttpResponse<String> r = send("GET", "/v1/console", null);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            JsonNode raid = json(r).get("raid");
            assertThat(raid.get("reachable").asBoolean()).isFalse();
            assertThat(raid.get("error").asText()).isNotBlank();
        }
    }

    @Test
    void raidNodeMustBeHostAndPort() {
        for (String bad : List.of("raid", "raid:", ":7300", "raid:0", "raid:70000", "raid:12x", "ra id:7300", "http://raid:7300")) {
            DirectoryConfig c = new DirectoryConfig();
            c.raidNode = bad;
            assertThatThrownBy(c::validate).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("raidNode must be host:port, was '" + bad + "'");
        }
        for (String good : List.of("raid1:7300", "127.0.0.1:7300", "[::1]:7300", "raid-1.example.org:1")) {
            DirectoryConfig c = new DirectoryConfig();
            c.raidNode = good;
            assertThat(c.validate().raidNodeAddress()).isEqualTo(good);
        }
        assertThat(new DirectoryConfig().validate().raidNodeAddress()).isNull();
    }
}
