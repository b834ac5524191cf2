package io.hayloft.cli.cluster;

import io.hayloft.raid.Cluster;
import java.time.Duration;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.cli.Hayloft;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.ThreadPoolRunner;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code hayloft volumes seal|show} and {@code hayloft stores fail|restore} on an embedded cluster of
 * 6 stores: what each changes, what show prints and its exit code, unknown ids; and the directory's
 * new endpoints answering 404, 400 and 409 as JSON errors, never 500.
 */
class OperatorVerbsTest {
    @TempDir
    static Path dir;

    private static EmbeddedCluster cluster;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @BeforeAll
    static void start() throws Exception {
        cluster = EmbeddedCluster.start(ClusterOptions.of(dir.resolve("cluster")).withStores(6, 3).withFsync(false)
                .withTiming(200, 100, 2));
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    record Run(int exit, String out, String err) {
    }

    /** {@code hayloft <args>} with {@code --directory} right after the first word (the list command) when {@code before}. */
    static Run run(EmbeddedCluster c, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = Hayloft.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        List<String> all = new ArrayList<>(List.of(args));
        all.add("--directory=" + c.directoryAddress());
        int exit = cl.execute(all.toArray(new String[0]));
        return new Run(exit, out.toString(), err.toString());
    }

    private static JsonNode volume(int id) throws Exception {
        return JSON.valueToTree(cluster.directory().directory().volume(id));
    }

    private static String storeState(String id) {
        return cluster.directory().directory().stores().stream().filter(s -> s.id().equals(id)).findFirst().orElseThrow()
                .state().name();
    }

    @Test
    void sealMakesAVolumeReadOnlyAndPutsGoElsewhere() throws Exception {
        try (HayloftClient client = cluster.newClient()) {
            int v = client.put(new byte[] {1, 2, 3}).id().volume();
            // the client options may also come before the verb, as with the list command
            StringWriter out = new StringWriter();
            CommandLine cl = Hayloft.commandLine();
            cl.setOut(new PrintWriter(out, true));
            int exit = cl.execute("volumes", "--directory=" + cluster.directoryAddress(), "seal", String.valueOf(v), "--reason", "audit");
            assertThat(exit).isZero();
            assertThat(out.toString()).contains("volume " + v + " READ_ONLY: audit");
            assertThat(volume(v).path("state").asText()).isEqualTo("READ_ONLY");
            // The client writes on leases without asking the directory; its volume map (refreshed every
            // second, here at once) tells it the volume is sealed, and it drops the volume's leases.
            Futures.await(client.refreshVolumeMap());
            for (int i = 0; i < 10; i++) {
                assertThat(client.put(new byte[] {(byte) i}).id().volume()).isNotEqualTo(v);
            }
            Run again = run(cluster, "volumes", "seal", String.valueOf(v));
            assertThat(again.exit()).as(again.err()).isZero();
        }
    }

    @Test
    void failAndRestoreChangeTheStoreAndItsVolumes() throws Exception {
        try (HayloftClient client = cluster.newClient()) {
            PutResult p = client.put(new byte[] {9});
            int v = p.id().volume();
            String store = volume(v).path("replicas").get(0).asText();
            Run fail = run(cluster, "stores", "fail", store, "--reason", "disk swap");
            assertThat(fail.exit()).as(fail.err()).isZero();
            assertThat(fail.out()).contains(store + " FAILED").contains("disk swap");
            assertThat(storeState(store)).isEqualTo("FAILED");
            assertThat(volume(v).path("state").asText()).isEqualTo("READ_ONLY");
            assertThat(volume(v).path("reason").asText()).contains(store).contains("disk swap");
            // the store still answers its probes, but an operator's failure is not undone by autoRestore
            for (int i = 0; i < 3; i++) {
                cluster.directory().healthChecker().round();
            }
            assertThat(storeState(store)).isEqualTo("FAILED");
            Futures.await(client.refreshVolumeMap()); // the client's map shows the failed store's volumes read-only
            for (int i = 0; i < 10; i++) {
                PutResult q = client.put(new byte[] {(byte) i});
                assertThat(volume(q.id().volume()).path("replicas").toString()).doesNotContain("\"" + store + "\"");
            }
            Run restore = run(cluster, "stores", "restore", store);
            assertThat(restore.exit()).as(restore.err()).isZero();
            assertThat(restore.out()).contains(store + " UP");
            assertThat(storeState(store)).isEqualTo("UP");
            assertThat(volume(v).path("state").asText()).isEqualTo("READ_ONLY");
            assertThat(client.get(p.id())).containsExactly(9);
        }
    }

    @Test
    void showPrintsReplicasAndStripesAndFailsOnAMissingBlock() throws Exception {
        // its own cluster: encoding drops replicas, which the shared cluster's health checker may see mid-way
        try (EmbeddedCluster cluster = EmbeddedCluster.start(ClusterOptions.of(dir.resolve("show")).withStores(6, 3)
                .withFsync(false).withTiming(200, 60_000, 3));
             HayloftClient client = cluster.newClient(); ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            Random random = new Random(5);
            List<PutResult> photos = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                byte[] b = new byte[random.nextInt(5000)];
                random.nextBytes(b);
                photos.add(client.put(b));
            }
            int v = photos.get(0).id().volume();
            Run show = run(cluster, "volumes", "show", String.valueOf(v));
            assertThat(show.exit()).as(show.out() + show.err()).isZero();
            assertThat(show.out()).contains("REPLICA").contains("HOLDS").contains("healthy");
            for (JsonNode r : JSON.valueToTree(cluster.directory().directory().volume(v)).path("replicas")) {
                assertThat(show.out()).contains(r.asText());
            }
            Run json = run(cluster, "volumes", "show", String.valueOf(v), "--json");
            JsonNode j = JSON.readTree(json.out());
            assertThat(j.path("healthy").asBoolean()).isTrue();
            assertThat(j.path("replicas")).hasSize(3);
            j.path("replicas").forEach(r -> assertThat(r.path("holds").asText()).isEqualTo("yes"));

            cluster.directory().directory().markReadOnly(v, "test");
            RaidConfig config = new RaidConfig();
            config.directory = cluster.directoryAddress();
            config.codec = "rs";
            config.k = 3;
            config.r = 2;
            config.blockSize = 8 << 10;
            config.transferBytes = 8 << 10;
            config.spoolDir = dir.toString();
            new RaidNode(config, runner).encode(v);
            show = run(cluster, "volumes", "show", String.valueOf(v));
            assertThat(show.exit()).as(show.out() + show.err()).isZero();
            assertThat(show.out()).contains("ERASURE_CODED").contains("stripe map COMMITTED").contains("rs(3,2)")
                    .contains("index").contains("healthy");

            StripeMap map = new RaidNode(config, runner).cluster().stripeMap(v);
            StripeMap.Block b = map.stripes().get(0).blocks().get(1);
            int i = Integer.parseInt(b.store().substring("store-".length()));
            Files.delete(cluster.storeDir(i).resolve("blocks").resolve(b.name() + ".blk"));
            show = run(cluster, "volumes", "show", String.valueOf(v));
            assertThat(show.exit()).isEqualTo(Hayloft.EXIT_FAILED);
            assertThat(show.out()).contains("UNHEALTHY").contains(b.name()).contains("missing");
            json = run(cluster, "volumes", "show", String.valueOf(v), "--json");
            assertThat(json.exit()).isEqualTo(Hayloft.EXIT_FAILED);
            assertThat(JSON.readTree(json.out()).path("healthy").asBoolean()).isFalse();
        }
    }

    @Test
    void unknownIdsAreUsageErrors() {
        for (String[] args : new String[][] {{"volumes", "show", "4242"}, {"volumes", "seal", "4242"}, {"stores", "fail", "nope"},
                {"stores", "restore", "nope"}, {"stores", "drain", "nope"}}) {
            Run r = run(cluster, args);
            assertThat(r.exit()).as(String.join(" ", args) + ": " + r.err()).isEqualTo(Hayloft.EXIT_USAGE);
            assertThat(r.err()).as(String.join(" ", args)).containsAnyOf("4242", "nope");
        }
        Run bad = run(cluster, "volumes", "show", "x");
        assertThat(bad.exit()).isEqualTo(Hayloft.EXIT_USAGE);
        assertThat(bad.err()).contains("'x'");
    }

    @Test
    void drainRefusesToRunBesideARaidNode() throws Exception {
        Cluster c = new Cluster(cluster.directoryAddress(), null, Duration.ofSeconds(5));
        c.acquireLease("raid-node@elsewhere:1", 60_000);
        try {
            Run r = run(cluster, "stores", "drain", "store-5");
            assertThat(r.exit()).isEqualTo(Hayloft.EXIT_FAILED);
            assertThat(r.err()).contains("raid-node@elsewhere:1");
            assertThat(storeState("store-5")).isEqualTo("UP");
        } finally {
            c.releaseLease("raid-node@elsewhere:1");
        }
    }

    @Test
    void unknownStoreOrMalformedIdIsAUsageErrorToo() {
        Run bad = run(cluster, "volumes", "seal", "x");
        assertThat(bad.exit()).isEqualTo(Hayloft.EXIT_USAGE);
        assertThat(bad.err()).contains("'x'");
    }

    private static HttpResponse<String> post(String path, String body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://" + cluster.directoryAddress() + path))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void assertError(HttpResponse<String> r, int status, String name) throws Exception {
        assertThat(r.statusCode()).as(r.uri() + ": " + r.body()).isEqualTo(status);
        assertThat(JSON.readTree(r.body()).path("error").path("name").asText()).as(r.body()).isEqualTo(name);
    }

    @Test
    void newDirectoryEndpointsAnswerJsonErrorsNever500() throws Exception {
        int v;
        try (HayloftClient client = cluster.newClient()) {
            v = client.put(new byte[] {7}).id().volume();
        }
        String first = volume(v).path("replicas").get(0).asText();
        assertError(post("/v1/stores/nope/fail", ""), 404, "UNKNOWN_STORE");
        assertError(post("/v1/stores/nope/drain", ""), 404, "UNKNOWN_STORE");
        assertError(post("/v1/stores/nope/drained", ""), 404, "UNKNOWN_STORE");
        assertError(post("/v1/stores/" + first + "/fail", "{not json"), 400, "BAD_REQUEST");
        assertError(post("/v1/stores/" + first + "/drained", ""), 409, "WRONG_STATE");
        assertError(post("/v1/volumes/4242/replicas/move", "{\"from\":\"store-0\",\"to\":\"store-1\"}"), 404, "UNKNOWN_VOLUME");
        assertError(post("/v1/volumes/" + v + "/replicas/move", "[1,2]"), 400, "BAD_REQUEST");
        assertError(post("/v1/volumes/" + v + "/replicas/move", "{}"), 400, "BAD_REQUEST");
        assertError(post("/v1/volumes/" + v + "/replicas/move", ""), 400, "BAD_REQUEST");
        assertError(post("/v1/volumes/x/replicas/move", "{}"), 400, "BAD_REQUEST");
        assertError(post("/v1/volumes/" + v + "/replicas/move", "{\"from\":\"" + first + "\",\"to\":\"nope\"}"), 404, "UNKNOWN_STORE");
        String outside = cluster.directory().directory().stores().stream().map(s -> s.id())
                .filter(id -> !volume0(v).contains(id)).findFirst().orElseThrow();
        // a writable volume's replicas never move; a store that holds no replica cannot be moved from
        assertError(post("/v1/volumes/" + v + "/replicas/move", "{\"from\":\"" + first + "\",\"to\":\"" + outside + "\"}"), 409, "WRONG_STATE");
        assertError(post("/v1/volumes/" + v + "/replicas/move", "{\"from\":\"" + outside + "\",\"to\":\"" + outside + "\"}"), 409, "WRONG_STATE");
        assertError(post("/v1/volumes/" + v + "/index/move", "{\"from\":\"" + first + "\",\"to\":\"" + outside + "\"}"), 404, "NO_STRIPE_MAP");
        assertThat(HTTP.send(HttpRequest.newBuilder(URI.create("http://" + cluster.directoryAddress() + "/v1/stores/" + first + "/drain"))
                .GET().build(), HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(405);
    }

    private static String volume0(int v) {
        try {
            return volume(v).path("replicas").toString();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
