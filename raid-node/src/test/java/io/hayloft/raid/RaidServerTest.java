package io.hayloft.raid;

import io.hayloft.cold.ColdReader;
import java.nio.file.StandardCopyOption;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.directory.VolumeState;
import java.io.RandomAccessFile;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The daemon against a real cluster: the policy's age threshold, hot reload, an invalid policy file
 * kept out, the repair grace period, the scrubber finding a flipped byte on disk, /status and
 * /metrics, and bad requests.
 */
class RaidServerTest {

    static final long BLOCK = 16 << 10;

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @Test
    void policyLoopEncodesByAgeReloadsRepairsAndScrubs() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 15)) {
            Path policy = dir.resolve("policy.json");
            writePolicy(policy, "\"minAgeMillis\": 3600000, \"codec\": \"hh-xor+\"");
            int young = cluster.writeVolume(80, 4000);
            try (RaidServer server = RaidServer.start(serverConfig(cluster, policy), Checkpoints.NONE)) {
                // Age threshold: a volume read-only for less than minAgeMillis is not encoded.
                JsonNode pass = post(server, "/admin/run");
                assertThat(pass.get("encoded")).isEmpty();
                JsonNode status = get(server, "/status");
                assertThat(status.get("backlog")).isEmpty();
                assertThat(status.at("/policy/version").asInt()).isEqualTo(1);
                assertThat(cluster.directory.directory().volume(young).state()).isEqualTo(VolumeState.READ_ONLY);

                // Reload: a new codec and age apply to the next pass without a restart.
                writePolicy(policy, "\"minAgeMillis\": 0, \"codec\": \"rs\", \"k\": 6, \"r\": 3");
                pass = post(server, "/admin/run");
                assertThat(pass.get("encoded")).extracting(JsonNode::asInt).containsExactly(young);
                StripeMap m = cluster(cluster).stripeMap(young);
                assertThat(m.codec()).isEqualTo("rs");
                assertThat(m.k()).isEqualTo(6);
                assertThat(get(server, "/status").at("/policy/version").asInt()).isEqualTo(2);

                // An invalid file keeps the previous policy; the error names the field.
                writePolicy(policy, "\"minAgeMillis\": 0, \"k\": \"ten\"");
                int second = cluster.writeVolume(60, 4000);
                pass = post(server, "/admin/run");
                assertThat(pass.get("encoded")).extracting(JsonNode::asInt).containsExactly(second);
                status = get(server, "/status");
                assertThat(status.at("/policy/version").asInt()).isEqualTo(2);
                assertThat(status.at("/policy/lastError").asText()).contains("'k'");
                assertThat(status.at("/policy/current/codec").asText()).isEqualTo("rs");
                writePolicy(policy, "\"minAgeMillis\": 0, \"codec\": \"rs\", \"k\": 6, \"r\": 3, \"kk\": 1");
                post(server, "/admin/run");
                assertThat(get(server, "/status").at("/policy/lastError").asText()).contains("'kk'");
                assertThat(metrics(server)).contains("hayloft_raid_policy_reload_errors_total 2.0");

                // Scrubber: one flipped byte on disk is invisible to the listing (its CRC is cached),
                // found by reading the bytes, and repaired by the next pass.
                writePolicy(policy, "\"minAgeMillis\": 0, \"codec\": \"rs\", \"k\": 6, \"r\": 3, \"repairGraceMillis\": 3600000");
                StripeMap before = cluster(cluster).stripeMap(young);
                StripeMap.Block victim = before.stripes().get(0).blocks().get(2);
                flipByte(cluster, victim, 1000);
                BlockFixer fixer = new BlockFixer(cluster(cluster), cluster.raidConfig("rs", BLOCK));
                assertThat(fixer.scan()).isEmpty();
                JsonNode scrub = post(server, "/admin/scrub");
                assertThat(scrub.get("corrupt")).hasSize(1);
                assertThat(scrub.at("/corrupt/0/block").asText()).isEqualTo(victim.name());
                pass = post(server, "/admin/run");
                assertThat(pass.get("repairedBlocks").asInt()).isEqualTo(1);
                StripeMap after = cluster(cluster).stripeMap(young);
                assertThat(after.stripes().get(0).blocks().get(2).name()).isNotEqualTo(victim.name());
                assertThat(post(server, "/admin/scrub").get("corrupt")).isEmpty();

                // Grace: a dead store's blocks wait for the grace period, then are rebuilt.
                String dead = after.stripes().get(0).blocks().get(0).store();
                cluster.stopStore(dead);
                pass = post(server, "/admin/run");
                assertThat(pass.get("repairDeferred").asInt()).isPositive();
                assertThat(pass.get("repairedBlocks").asInt()).isZero();
                status = get(server, "/status");
                assertThat(status.get("blocksMissing").asInt()).isPositive();
                assertThat(status.at("/stripes/damaged").asInt()).isPositive();
                writePolicy(policy, "\"minAgeMillis\": 0, \"codec\": \"rs\", \"k\": 6, \"r\": 3, \"repairGraceMillis\": 0");
                pass = post(server, "/admin/run");
                assertThat(pass.get("repairedBlocks").asInt()).isPositive();
                assertThat(pass.get("repairFailures")).isEmpty();

                status = get(server, "/status");
                assertThat(status.get("blocksMissing").asInt()).isZero();
                assertThat(status.get("blocksCorrupt").asInt()).isZero();
                assertThat(status.at("/stripes/damaged").asInt()).isZero();
                assertThat(status.at("/stripes/healthy").asInt()).isPositive();
                assertThat(status.at("/scrub/corruptFound").asInt()).isEqualTo(1);
                assertThat(status.at("/scrub/cycles").asInt()).isGreaterThanOrEqualTo(2);
                assertThat(status.at("/repair/bytesReadPerRepairedByte").asDouble()).isEqualTo(6.0);
                assertThat(status.at("/repair/rateBytesPerSecond").asDouble()).isPositive();
                assertThat(status.get("jobs")).isEmpty();

                String metrics = metrics(server);
                assertThat(metrics).contains("hayloft_raid_encode_jobs_total{result=\"ok\"} 2.0",
                        "hayloft_raid_scrub_corrupt_blocks_total 1.0", "hayloft_raid_backlog_volumes 0.0",
                        "hayloft_raid_stripes{state=\"damaged\"} 0.0", "hayloft_raid_repair_bytes_read_total",
                        "hayloft_raid_repair_blocks_total", "hayloft_raid_scrub_bytes_total",
                        "hayloft_raid_repairs_in_flight 0.0", "hayloft_raid_reclaim_volumes_total 0.0");
                // Source bytes counted as they arrive match the pass totals (no attempt failed), and
                // one repair held at most the window being decoded and the next: 2 × k × window.
                assertThat(value(metrics, "hayloft_raid_repair_bytes_received_total"))
                        .isEqualTo(value(metrics, "hayloft_raid_repair_bytes_read_total")).isPositive();
                assertThat(value(metrics, "hayloft_raid_repair_max_bytes_held")).isPositive()
                        .isLessThanOrEqualTo(2.0 * 6 * new RaidConfig().repairWindowBytes);

                try (ColdReader reader = new ColdReader(cluster(cluster))) {
                    for (TestCluster.Photo p : cluster.photos.values()) {
                        assertThat(reader.get(p.volume(), p.key(), 0)).isEqualTo(p.data());
                    }
                }
            }
        }
    }

    @Test
    void statusShowsARunningEncodeWithItsProgress() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 15)) {
            Path policy = dir.resolve("policy.json");
            writePolicy(policy, "\"minAgeMillis\": 0");
            int volume = cluster.writeVolume(120, 4000);
            CountDownLatch atStripe0 = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Checkpoints hold = step -> {
                if (step.equals("stripe-0")) {
                    atStripe0.countDown();
                    try {
                        assertThat(release.await(60, TimeUnit.SECONDS)).isTrue();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            };
            try (RaidServer server = RaidServer.start(serverConfig(cluster, policy), hold)) {
                assertThat(atStripe0.await(60, TimeUnit.SECONDS)).isTrue();
                JsonNode job = get(server, "/status").at("/jobs/0");
                assertThat(job.get("kind").asText()).isEqualTo("encode");
                assertThat(job.get("volume").asInt()).isEqualTo(volume);
                assertThat(job.get("step").asText()).isEqualTo("stripe-0");
                assertThat(job.get("bytesDone").asLong()).isEqualTo(10 * BLOCK);
                assertThat(job.get("bytesTotal").asLong()).isGreaterThan(10 * BLOCK);
                release.countDown();
                post(server, "/admin/run"); // queued behind the first pass: returns once the encode is done
                JsonNode status = get(server, "/status");
                assertThat(status.get("jobs")).isEmpty();
                assertThat(cluster.directory.directory().volume(volume).state()).isEqualTo(VolumeState.ERASURE_CODED);
                assertThat(metrics(server)).contains("hayloft_raid_encode_jobs_total{result=\"ok\"} 1.0");
            } finally {
                release.countDown();
            }
        }
    }

    @Test
    void badRequestsGetJsonErrorsAndABadPolicyFileRefusesToStart() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 1)) {
            Path policy = dir.resolve("policy.json");
            writePolicy(policy, "\"workers\": 0");
            assertThatThrownBy(() -> RaidServer.start(serverConfig(cluster, policy), Checkpoints.NONE))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'workers'");
            writePolicy(policy, "\"encode\": false");
            try (RaidServer server = RaidServer.start(serverConfig(cluster, policy), Checkpoints.NONE)) {
                assertError(send(server, "GET", "/nope"), 404, 2, "/nope");
                assertError(send(server, "POST", "/status"), 405, 3, "GET");
                assertError(send(server, "GET", "/admin/run"), 405, 3, "POST");
                assertError(send(server, "POST", "/admin/run?waitMillis=soon"), 400, 1, "waitMillis");
                assertThat(send(server, "GET", "/health").statusCode()).isEqualTo(200);
                // The server keeps serving.
                assertThat(post(server, "/admin/run").get("encoded")).isEmpty();
                assertThat(metrics(server)).contains("hayloft_raid_requests_seconds_count{op=\"other\",route=\"none\",status=\"404\"}");
            }
        }
    }

    // ------------------------------------------------------------------ helpers

    static RaidServerConfig serverConfig(TestCluster cluster, Path policy) {
        RaidServerConfig c = new RaidServerConfig();
        c.port = 0;
        c.directory = cluster.directory.address();
        c.policyFile = policy.toString();
        c.transferBytes = 16 << 10;
        c.requestTimeoutMillis = 5000;
        c.spoolDir = cluster.dir.toString();
        c.adminWaitMillis = 60_000;
        return c;
    }

    /** A policy with small blocks, a long interval (passes run when the test asks) and {@code extra} keys. */
    static void writePolicy(Path file, String extra) throws Exception {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, "{\"blockSize\": " + BLOCK + ", \"workers\": 2, \"policyIntervalMillis\": 3600000, "
                + "\"scrubBytesPerSecond\": 1073741824, " + extra + "}");
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    static Cluster cluster(TestCluster c) {
        return new Cluster(c.directory.address(), null, Duration.ofSeconds(5));
    }

    /** Flips one byte of a block's file on its store's disk, behind the store's back. */
    static void flipByte(TestCluster cluster, StripeMap.Block b, long offset) throws Exception {
        Path file;
        try (Stream<Path> s = Files.walk(cluster.dir.resolve(b.store()))) {
            file = s.filter(p -> p.getFileName().toString().equals(b.name() + ".blk")).findFirst().orElseThrow();
        }
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(offset);
            int x = f.read();
            f.seek(offset);
            f.write(x ^ 0x40);
            f.getFD().sync();
        }
    }

    private HttpResponse<String> send(RaidServer server, String method, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://" + server.address() + path)).timeout(Duration.ofSeconds(90))
                .method(method, HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode post(RaidServer server, String path) throws Exception {
        HttpResponse<String> r = send(server, "POST", path);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return Cluster.JSON.readTree(r.body());
    }

    private JsonNode get(RaidServer server, String path) throws Exception {
        HttpResponse<String> r = send(server, "GET", path);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return Cluster.JSON.readTree(r.body());
    }

    /** The value of the sample named {@code name} (no labels) in a Prometheus text page. */
    private static double value(String page, String name) {
        return page.lines().filter(l -> l.startsWith(name + " ")).mapToDouble(l -> Double.parseDouble(l.substring(name.length() + 1)))
                .findFirst().orElseThrow(() -> new AssertionError("no sample " + name + " in\n" + page));
    }

    private String metrics(RaidServer server) throws Exception {
        HttpResponse<String> r = send(server, "GET", "/metrics");
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }

    private static void assertError(HttpResponse<String> r, int status, int code, String mentions) throws Exception {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        JsonNode e = Cluster.JSON.readTree(r.body()).get("error");
        assertThat(e.get("code").asInt()).isEqualTo(code);
        assertThat(e.get("message").asText()).contains(mentions);
    }
}
