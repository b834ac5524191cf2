package io.hayloft.raid;

import io.hayloft.cold.ColdReader;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The raid-node as a real process ({@link RaidMain}) halted dead ({@code Runtime.halt(137)}, no
 * shutdown hooks) at every step of an encode and of a repair, against one in-process cluster of 15
 * stores. After each death the raid-node restarts ({@link RaidNode#recover()}) and the test checks:
 * the volume is READ_ONLY with its replicas or ERASURE_CODED with a complete, verified stripe map;
 * every needle reads back (hot or cold); no store holds a block no stripe map names. A last, fresh
 * process finishes the work and the scrubber finds nothing wrong.
 *
 * <p>Each encoded volume is {@link #NEEDLES} needles of up to {@link #MAX_NEEDLE} bytes (about 240 KB):
 * two stripes of 10 × 16 KiB blocks, many needles across a block boundary. Every step's volume is
 * checked to have more than one stripe; more needles would only make every step's reads longer.
 */
class ProcessCrashTest {

    static final long BLOCK = 16 << 10;
    static final List<String> ENCODE_STEPS = List.of("begun", "stripe-0", "stripe-1", "index", "verified", "committed", "dropped");
    static final List<String> REPAIR_STEPS = List.of("rebuilt", "replaced");
    static final int NEEDLES = 30;
    static final int MAX_NEEDLE = 16_000;

    @TempDir
    Path dir;

    private static final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @Test
    void aRaidNodeKilledAtEveryStepLosesNothingAndOrphansNothing() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 15); ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            Path policy = dir.resolve("policy.json");
            RaidServerTest.writePolicy(policy, "\"minAgeMillis\": 0, \"workers\": 1, \"scrubBytesPerSecond\": 0, "
                    + "\"repairGraceMillis\": 0");
            String[] settings = {"port=0", "directory=" + cluster.directory.address(), "policyFile=" + policy,
                    "transferBytes=16384", "requestTimeoutMillis=5000", "spoolDir=" + dir};
            Path log = dir.resolve("raid-node.log");
            RaidProcess.share(log, settings); // before any volume: that raid-node has nothing to do
            RaidConfig config = cluster.raidConfig("hh-xor+", BLOCK);

            for (String step : ENCODE_STEPS) {
                int volume = cluster.writeVolume(NEEDLES, MAX_NEEDLE);
                halt(step, log, settings);
                RaidNode restarted = new RaidNode(config, runner);
                restarted.recover();

                VolumeInfo v = cluster.directory.directory().volume(volume);
                boolean committed = ENCODE_STEPS.indexOf(step) >= ENCODE_STEPS.indexOf("committed");
                assertThat(v.state()).as("after a death at " + step).isEqualTo(committed ? VolumeState.ERASURE_CODED : VolumeState.READ_ONLY);
                if (committed) {
                    assertCompleteAndVerified(restarted, volume);
                    assertThat(v.replicas()).isEmpty();
                } else {
                    assertThat(v.replicas()).hasSize(3);
                    assertThat(restarted.cluster().stripeMap(volume)).isNull();
                }
                assertNoOrphans(cluster, restarted, step);
                assertEveryNeedleReads(cluster, restarted);
                if (!committed) {
                    restarted.encode(volume); // so the next process's backlog holds only its own volume
                }
                assertThat(restarted.cluster().stripeMap(volume).stripes()).as("stripes of volume %d", volume).hasSizeGreaterThan(1);
            }

            RaidNode raid = new RaidNode(config, runner);
            int volume = cluster.writeVolume(NEEDLES / 2, MAX_NEEDLE);
            raid.encode(volume);
            StripeMap.Block bad = raid.cluster().stripeMap(volume).stripes().get(0).blocks().get(5);
            cluster.stores.get(bad.store()).store().blocks().delete(bad.name());
            for (String step : REPAIR_STEPS) {
                halt(step, log, settings);
                raid.recover();
                assertNoOrphans(cluster, raid, step);
                assertEveryNeedleReads(cluster, raid);
            }
            // The death after "replaced" left the new block in the map.
            assertThat(raid.cluster().stripeMap(volume).stripes().get(0).blocks().get(5).name()).isNotEqualTo(bad.name());

            // A fresh raid-node finishes everything: nothing damaged, nothing due, scrub clean.
            try (RaidProcess p = new RaidProcess(null, log, settings)) {
                String base = "http://127.0.0.1:" + p.port(60);
                assertThat(post(base + "/admin/run")).contains("\"encoded\":[]", "\"repairFailures\":[]");
                assertThat(post(base + "/admin/scrub")).contains("\"corrupt\":[]");
                String status = http.send(HttpRequest.newBuilder(URI.create(base + "/status")).build(),
                        HttpResponse.BodyHandlers.ofString()).body();
                assertThat(status).contains("\"blocksMissing\":0", "\"blocksCorrupt\":0", "\"backlog\":[]");
            }
            assertThat(new BlockFixer(raid.cluster(), config).scan()).isEmpty();
            assertNoOrphans(cluster, raid, "the end");
            assertEveryNeedleReads(cluster, raid);
        }
    }

    /** Runs a raid-node that halts at {@code step}; checks it died there. */
    private static void halt(String step, Path log, String[] settings) throws Exception {
        try (RaidProcess p = new RaidProcess(step, log, settings)) {
            int status = p.exit(120);
            assertThat(p.printed()).as("process output").contains("CHECKPOINT " + step);
            assertThat(status).as("exit status of a raid-node halted at " + step).isEqualTo(RaidMain.HALT_STATUS);
        }
    }

    private String post(String url) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(90))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return r.body();
    }

    private static void assertCompleteAndVerified(RaidNode raid, int volume) throws Exception {
        StripeMap m = raid.cluster().stripeMap(volume);
        assertThat(m.status()).isEqualTo(StripeMap.COMMITTED);
        assertThat(m.stripes()).isNotEmpty();
        assertThat(new BlockFixer(raid.cluster(), raid.config()).scan()).noneMatch(d -> d.volume() == volume);
    }

    /** Every block on every store is named by a stripe map. */
    private static void assertNoOrphans(TestCluster cluster, RaidNode raid, String step) throws Exception {
        Set<String> expected = new HashSet<>();
        for (StripeMap m : raid.cluster().stripeMaps()) {
            m.allBlocks().forEach(b -> expected.add(b.store() + "/" + b.name()));
        }
        assertThat(cluster.allBlocks()).as("blocks after a death at " + step).isSubsetOf(expected);
    }

    /** Hot needles from a replica, cold ones through the stripes: all equal to what was written. */
    private static void assertEveryNeedleReads(TestCluster cluster, RaidNode raid) throws Exception {
        try (ColdReader reader = new ColdReader(raid.cluster())) {
            for (TestCluster.Photo p : cluster.photos.values()) {
                VolumeInfo v = cluster.directory.directory().volume(p.volume());
                if (v.state() == VolumeState.ERASURE_CODED) {
                    assertThat(reader.get(p.volume(), p.key(), 0)).isEqualTo(p.data());
                } else {
                    String replica = cluster.firstReplica(p.volume());
                    HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(URI.create("http://"
                            + replica + "/" + p.volume() + "/" + p.key() + "/0?cookie=" + p.cookie())).build(),
                            HttpResponse.BodyHandlers.ofByteArray());
                    assertThat(r.statusCode()).isEqualTo(200);
                    assertThat(r.body()).isEqualTo(p.data());
                }
            }
        }
    }
}
