package io.hayloft.cli.cluster;

import io.hayloft.format.directory.StoreState;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.serverkit.config.Ports;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.cache.CacheConfig;
import io.hayloft.cache.CacheServer;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.serverkit.http.HttpResponses;
import io.hayloft.serverkit.io.Disk;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.raid.Checkpoints;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.RaidServer;
import io.hayloft.raid.RaidServerConfig;
import io.hayloft.raid.ThreadPoolRunner;
import io.hayloft.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The directory's web console ({@code /ui}, docs/console.md) in headless Chromium, against a real
 * embedded cluster with a real raid-node daemon and cache node on loopback: the DOM the page builds
 * from {@code GET /v1/console} is asserted on through the page's stable attributes
 * ({@code data-state}, {@code data-address}, {@code data-volume-id}, {@code data-down},
 * {@code data-reachable}, {@code body[data-status]}). Skipped without {@code chromium} on the PATH
 * unless {@code HAYLOFT_REQUIRE_CHROMIUM=1}.
 *
 * <p>{@code HAYLOFT_CONSOLE_SCREENSHOT=/abs/path/console.png} makes {@link #screenshotForTheDocs()}
 * write the picture in docs/console.md (skipped otherwise).
 */
class ConsoleTest {

    static final String SECRET = "console-cluster-secret-0123";
    static final String ADMIN = "console-admin-token-4567";

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final List<AutoCloseable> closers = new ArrayList<>();
    private EmbeddedCluster cluster;
    private RaidServer raid;
    private CacheServer cache;
    private String deadGutter;
    private int stopped = -1;
    private int coded = -1;
    private int sealed = -1;

    @AfterEach
    void stop() throws Exception {
        for (int i = closers.size() - 1; i >= 0; i--) {
            closers.get(i).close();
        }
    }

    private JsonNode post(String url, String body, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString(body)).header("Content-Type", "application/json");
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(url + " " + r.body()).isEqualTo(200);
        return HttpResponses.JSON.readTree(r.body());
    }

    private int get(String url) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    /**
     * Six stores on six racks; photos on several volumes; one volume sealed over HTTP, one sealed and
     * erasure-coded RS(3,2) in several stripes; a raid-node daemon and a cache node (with a few hits) that
     * the directory knows of, and a gutter node that does not answer; then the store holding a block
     * of the coded volume is stopped, the directory marks it FAILED (its writable volumes become
     * read-only; more puts get new writable volumes), and a raid pass reports the stripes damaged.
     */
    private void startRichCluster() throws Exception {
        CacheConfig cc = new CacheConfig();
        cc.host = "127.0.0.1";
        cc.port = 0;
        cache = CacheServer.start(cc.validate());
        closers.add(cache::close);
        deadGutter = "127.0.0.1:" + Ports.free();
        // The raid-node needs the directory running to start, and the directory its address: a port is set aside for it.
        int raidPort = Ports.free();
        cluster = EmbeddedCluster.start(ClusterOptions.of(dir.resolve("cluster")).withStores(6, 6)
                .withTiming(100, 200, 2).withFsync(false), i -> Disk.REAL, c -> {
                    c.raidNode = "127.0.0.1:" + raidPort;
                    c.cacheNodes = List.of(cache.address());
                    c.gutterNodes = List.of(deadGutter);
                });
        closers.add(cluster);
        HayloftClient client = cluster.newClient();
        closers.add(client);
        Random random = new Random(11);
        List<PutResult> photos = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            byte[] data = new byte[500 + random.nextInt(2500)];
            random.nextBytes(data);
            photos.add(client.put(data));
        }
        List<Integer> volumes = photos.stream().map(p -> p.id().volume()).distinct().sorted().toList();
        assertThat(volumes).as("photos go to several writable volumes").hasSizeGreaterThanOrEqualTo(2);
        String d = "http://" + cluster.directoryAddress();
        sealed = volumes.get(0);
        coded = volumes.get(1);
        assertThat(post(d + "/v1/volumes/" + sealed + "/read-only", "{\"reason\": \"sealed by an operator\"}", null)
                .get("state").asText()).isEqualTo("READ_ONLY");
        post(d + "/v1/volumes/" + coded + "/read-only", "{\"reason\": \"to encode\"}", null);

        RaidConfig rc = new RaidConfig();
        rc.directory = cluster.directoryAddress();
        rc.codec = "rs";
        rc.k = 3;
        rc.r = 2;
        rc.blockSize = 8 << 10;
        rc.transferBytes = 16 << 10;
        rc.spoolDir = dir.toString();
        try (ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            new RaidNode(rc.validate(), runner).encode(coded);
        }
        assertThat(cluster.directory().directory().volume(coded).state()).isEqualTo(VolumeState.ERASURE_CODED);
        PutResult hot = null;
        for (int i = 0; i < 10; i++) {
            hot = client.put(new byte[1000 + i]); // on a writable volume again, beside the sealed ones
        }

        RaidServerConfig sc = new RaidServerConfig();
        sc.port = raidPort;
        sc.directory = cluster.directoryAddress();
        sc.spoolDir = dir.toString();
        raid = RaidServer.start(sc, Checkpoints.NONE);
        closers.add(raid);

        // Reads through the cache: a miss, then hits.
        String store = client.stat(hot.id()).replicas().get(0);
        for (int i = 0; i < 4; i++) {
            assertThat(get("http://" + cache.address() + "/" + store + hot.id().needlePath())).isEqualTo(200);
        }

        StripeMap map = cluster.directory().directory().cold().stripeMap(coded);
        assertThat(map.stripes()).as("two stripes to draw").hasSizeGreaterThanOrEqualTo(2);
        String victim = map.stripes().get(0).blocks().get(1).store();
        stopped = Integer.parseInt(victim.substring("store-".length()));
        cluster.stopStore(stopped);
        Await.until("the directory marks " + victim + " failed", () -> cluster.directory().directory().stores().stream()
                .anyMatch(s -> s.id().equals(victim) && s.state() != StoreState.UP));
        for (int i = 0; i < 5; i++) {
            client.put(new byte[800 + i]); // the directory places new writable volumes on the stores still up
        }
        // A pass now (instead of in a minute): the daemon reports the stripes with a block on the stopped store.
        JsonNode pass = post("http://" + raid.address() + "/admin/run?waitMillis=60000", "", null);
        assertThat(pass.get("repairDeferred").asInt()).as(pass.toString()).isPositive();
    }

    @Test
    void thePageShowsStoresVolumesByStateStripesTheRaidNodeAndCachesAndTheStoppedStoreAsDown() throws Exception {
        Path chromium = HeadlessChromium.require();
        startRichCluster();
        // An S3 bucket with one object of 5 bytes (the namespace's record; the gateway is not needed).
        var namespace = cluster.directory().directory().namespace();
        namespace.createBucket("console-photos", "us-east-1");
        namespace.putObject(new io.hayloft.format.s3.ObjectRecord("console-photos", "a.jpg", 5, "etag",
                List.of(new io.hayloft.format.s3.Chunk(1, 1, 1, 5)), List.of(), Map.of(), null, null, Map.of(), Map.of(), 0),
                null, null, false);
        String dom = HeadlessChromium.dumpDom(chromium, dir, "http://" + cluster.directoryAddress() + "/ui", 5000);

        assertThat(attr(tag(dom, "body", null, null), "data-status")).as(dom).isEqualTo("ok");
        assertThat(tag(dom, "div", "id", "banner")).contains("hidden");
        assertThat(tag(dom, "form", "id", "token-form")).contains("hidden");

        // Every store, with its address and state; the stopped one as FAILED.
        List<StoreInfo> stores = cluster.directory().directory().stores();
        assertThat(stores).hasSize(6);
        for (StoreInfo s : stores) {
            String row = tag(dom, "tr", "data-store-id", s.id());
            assertThat(attr(row, "data-address")).isEqualTo(s.address()).isEqualTo(cluster.storeAddress(Integer.parseInt(
                    s.id().substring("store-".length()))));
            assertThat(attr(row, "data-state")).as(s.id()).isEqualTo(s.id().equals(EmbeddedCluster.storeId(stopped)) ? "FAILED" : "UP");
            assertThat(attr(row, "class")).as(s.id()).isEqualTo(s.id().equals(EmbeddedCluster.storeId(stopped)) ? "store down" : "store");
        }
        assertThat(count(dom, "<tr class=\"store")).isEqualTo(6);

        // Every volume, in the group of its state, with its state.
        List<VolumeInfo> volumes = cluster.directory().directory().volumes();
        for (VolumeInfo v : volumes) {
            assertThat(attr(tag(dom, "div", "data-volume-id", Integer.toString(v.id())), "data-state"))
                    .as("volume " + v.id()).isEqualTo(v.state().name());
        }
        assertThat(count(dom, "class=\"volume\"")).isEqualTo(volumes.size());
        for (String state : List.of("WRITABLE", "READ_ONLY", "ERASURE_CODED")) {
            assertThat(tag(dom, "div", "data-state", state)).as(state).contains("volume-group");
        }
        assertThat(attr(tag(dom, "div", "data-volume-id", Integer.toString(sealed)), "data-state")).isEqualTo("READ_ONLY");
        assertThat(dom).contains("sealed by an operator");
        // The coded volume's stripe map: every block with its store, those on the stopped store marked down.
        StripeMap map = cluster.directory().directory().cold().stripeMap(coded);
        String codedBox = section(dom, "data-volume-id=\"" + coded + "\"", "class=\"volume\"");
        assertThat(count(codedBox, "<td class=\"block")).isEqualTo(map.stripes().size() * 5);
        long onStopped = map.stripes().stream().flatMap(st -> st.blocks().stream()).filter(b -> b.store().equals(EmbeddedCluster.storeId(stopped))).count();
        assertThat(onStopped).isPositive();
        assertThat(count(codedBox, "data-down=\"true\"")).isEqualTo((int) onStopped);
        assertThat(codedBox).contains("rs (3,2)");
        // Replicas on the stopped store are marked too.
        assertThat(dom).contains("data-store=\"" + EmbeddedCluster.storeId(stopped) + "\" data-store-state=\"FAILED\"");

        // The raid-node's status with the damaged stripes, the cache's hit rate, the silent gutter.
        String raidBox = tag(dom, "div", "id", "raid");
        assertThat(attr(raidBox, "data-reachable")).isEqualTo("true");
        assertThat(dom).contains("<tr class=\"damaged\" data-volume-id=\"" + coded + "\"");
        assertThat(attr(tag(dom, "tr", "data-address", cache.address()), "data-reachable")).isEqualTo("true");
        assertThat(dom).contains("75.0%"); // 3 hits of 4 reads
        assertThat(attr(tag(dom, "tr", "data-address", deadGutter), "data-reachable")).isEqualTo("false");
        assertThat(dom).contains("unreachable: ");
        // The S3 buckets with their object counts and bytes.
        String bucket = tag(dom, "tr", "data-bucket", "console-photos");
        assertThat(attr(bucket, "data-objects")).isEqualTo("1");
        assertThat(attr(bucket, "data-bytes")).isEqualTo("5");
        assertThat(section(dom, "id=\"buckets-section\"", "</section>")).contains("5 B").contains("1 bucket");
    }

    @Test
    void theRaidNodeDownIsShownAsUnreachableAndMarkupFromTheNetworkAsText() throws Exception {
        Path chromium = HeadlessChromium.require();
        startRichCluster();
        raid.close();
        int writable = cluster.directory().directory().volumes().stream()
                .filter(v -> v.state() == VolumeState.WRITABLE).findFirst().orElseThrow().id();
        String evil = "<img src=x onerror=\"document.title='pwned'\"><b>bold</b>";
        post("http://" + cluster.directoryAddress() + "/v1/volumes/" + writable + "/read-only",
                HttpResponses.JSON.writeValueAsString(Map.of("reason", evil)), null);
        String dom = HeadlessChromium.dumpDom(chromium, dir, "http://" + cluster.directoryAddress() + "/ui", 3000);
        assertThat(attr(tag(dom, "body", null, null), "data-status")).as(dom).isEqualTo("ok");
        assertThat(dom).contains("&lt;img src=x onerror=\"document.title='pwned'\"&gt;&lt;b&gt;bold&lt;/b&gt;")
                .doesNotContain("<img", "<b>bold").contains("<title>Hayloft console</title>");
        assertThat(attr(tag(dom, "p", "id", "raid"), "data-reachable")).isEqualTo("false");
        assertThat(dom).contains("raid-node " + raid.address() + " unreachable");
        assertThat(count(dom, "<tr class=\"store")).isEqualTo(6);
    }

    @Test
    void withAnAdminTokenThePageAsksForItShowsNothingWithoutAndEverythingWithIt() throws Exception {
        Path chromium = HeadlessChromium.require();
        cluster = EmbeddedCluster.start(ClusterOptions.of(dir.resolve("cluster")).withStores(3, 3)
                .withTiming(100, 200, 2).withFsync(false).withSecrets(SECRET, ADMIN));
        closers.add(cluster);
        try (HayloftClient client = cluster.newClient()) {
            client.put(new byte[1234]);
        }
        String url = "http://" + cluster.directoryAddress() + "/ui";
        String dom = HeadlessChromium.dumpDom(chromium, dir, url, 3000);
        assertThat(attr(tag(dom, "body", null, null), "data-status")).as(dom).isEqualTo("auth");
        assertThat(tag(dom, "form", "id", "token-form")).doesNotContain("hidden");
        assertThat(tag(dom, "main", "id", "data")).contains("hidden");
        assertThat(dom).doesNotContain("class=\"store").doesNotContain("data-volume-id");
        for (int i = 0; i < 3; i++) {
            assertThat(dom).doesNotContain(cluster.storeAddress(i));
        }

        // Typed into the form of a real page over DevTools: a wrong token is asked again, the right one shows the data.
        try (HeadlessChromium.Page page = HeadlessChromium.open(chromium, dir)) {
            page.navigate(url);
            page.await("the token prompt", "document.body.dataset.status === 'auth'");
            page.eval(submitToken("not-" + ADMIN));
            page.await("the wrong token refused", "document.body.dataset.status === 'auth'"
                    + " && document.getElementById('token-why').textContent.includes('refused')");
            assertThat(page.eval("sessionStorage.length").asInt()).isZero();
            page.eval(submitToken(ADMIN));
            page.await("the stores shown", "document.body.dataset.status === 'ok' && document.querySelectorAll('tr.store').length === 3");
            String html = page.html();
            for (int i = 0; i < 3; i++) {
                assertThat(html).contains("data-address=\"" + cluster.storeAddress(i) + "\"");
            }
            assertThat(html).contains("data-state=\"WRITABLE\"").doesNotContain(ADMIN);
            assertThat(page.eval("document.getElementById('token-form').hidden").asBoolean()).isTrue();
            assertThat(page.eval("sessionStorage.getItem('hayloft.console.adminToken')").asText()).isEqualTo(ADMIN);
            // Still polling with the token: a store stopped now shows up as down on a later refresh.
            cluster.stopStore(2);
            String rows = "Array.from(document.querySelectorAll('tr.store')).map(r => r.dataset.storeId + '=' + r.dataset.state).join()";
            try {
                page.await("store-2 shown down on a later refresh", rows + ".includes('store-2=FAILED')");
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "; the page shows " + page.eval(rows) + "\n" + page.html(), e);
            }
        }
    }

    private static String submitToken(String token) throws Exception {
        return "document.getElementById('token-input').value = " + HttpResponses.JSON.writeValueAsString(token)
                + "; document.getElementById('token-form').requestSubmit(); true";
    }

    @Test
    void screenshotForTheDocs() throws Exception {
        String target = System.getenv("HAYLOFT_CONSOLE_SCREENSHOT");
        Assumptions.assumeTrue(target != null && !target.isBlank(), "set HAYLOFT_CONSOLE_SCREENSHOT=/abs/path.png to write it");
        Path chromium = HeadlessChromium.require();
        startRichCluster();
        Path png = Path.of(target);
        Files.createDirectories(png.toAbsolutePath().getParent());
        HeadlessChromium.screenshot(chromium, dir, "http://" + cluster.directoryAddress() + "/ui", png, 1280, 900, 5000);
    }

    // ------------------------------------------------------------------ reading the dumped DOM

    /** The opening tag of the first {@code <name ...>} whose attribute {@code key} is {@code value} (any, when key is null). */
    static String tag(String dom, String name, String key, String value) {
        Matcher m = Pattern.compile("<" + name + "(\\s[^>]*)?>").matcher(dom);
        while (m.find()) {
            String t = m.group();
            if (key == null || value.equals(attr(t, key))) {
                return t;
            }
        }
        throw new AssertionError("no <" + name + " " + key + "=\"" + value + "\"> in the page:\n" + dom);
    }

    /** The value of attribute {@code key} of an opening tag, or null. */
    static String attr(String tag, String key) {
        Matcher m = Pattern.compile("\\s" + Pattern.quote(key) + "=\"([^\"]*)\"").matcher(tag);
        return m.find() ? m.group(1) : null;
    }

    /** From the tag containing {@code marker} to the next element containing {@code sibling} (or the end). */
    static String section(String dom, String marker, String sibling) {
        int start = dom.indexOf(marker);
        assertThat(start).as(marker).isNotNegative();
        int next = dom.indexOf(sibling, start + marker.length());
        return dom.substring(start, next < 0 ? dom.length() : next);
    }

    static int count(String s, String what) {
        int n = 0;
        for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + what.length())) {
            n++;
        }
        return n;
    }
}
