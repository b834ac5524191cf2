package io.hayloft.raid;

import io.hayloft.cold.ColdReader;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.wire.StripeMap;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reclaim with a real raid-node process ({@link RaidMain}, the daemon's policy pass: {@code
 * ReclaimHook.DUE} → {@link RaidNode#reclaimDue()}) halted dead ({@code Runtime.halt(137)}, no
 * shutdown hooks, as {@code kill -9}) at every step of a reclaim, {@link EncodeJob#writeAll}'s
 * included, against one in-process cluster of 15 stores. Each time a coded volume has two thirds of
 * its photos deleted (over the policy's threshold) before the process starts. After each death the
 * raid-node recovers — in process ({@link RaidNode#recover()}) after even steps, as a fresh daemon
 * process (which recovers before it serves) after odd ones — and the test checks: the old map in
 * force before the swap and the new one from it on, no pending reclaim, every live needle reads back,
 * every deleted one stays deleted, no store holds a block no map names, no spool image is left. A
 * last fresh process finds nothing due.
 *
 * <p>Each volume is {@link #NEEDLES} needles of up to {@link #MAX_NEEDLE} bytes (about 200 KB, two
 * stripes of 10 × 16 KiB blocks; its compacted image one stripe): each step's reads and deletes are a
 * request per needle, so more needles would only make them longer.
 */
class ProcessReclaimCrashTest {

    static final long BLOCK = 16 << 10;
    /** A reclaim's steps for a compacted image of one stripe (checked against a clean run first). */
    static final List<String> STEPS = List.of("compacted", "reclaim-begun", "stripe-0", "index", "verified", "swapped",
            "old-deleted");
    static final int NEEDLES = 25;
    static final int MAX_NEEDLE = 16_000;

    @TempDir
    Path dir;

    private static final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @Test
    void aRaidNodeKilledAtEveryReclaimStepLeavesTheOldOrTheNewMapAndNoOrphans() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 15); ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            Path due = dir.resolve("policy.json");
            RaidServerTest.writePolicy(due, "\"encode\": false, \"reclaimThreshold\": 0.3, \"workers\": 1, "
                    + "\"scrubBytesPerSecond\": 0, \"policyIntervalMillis\": 3600000");
            Path notDue = dir.resolve("policy-recover.json");
            RaidServerTest.writePolicy(notDue, "\"encode\": false, \"reclaimThreshold\": 0.99, \"workers\": 1, "
                    + "\"scrubBytesPerSecond\": 0, \"policyIntervalMillis\": 3600000");
            Path log = dir.resolve("raid-node.log");
            RaidProcess.share(log, settings(cluster, notDue)); // before any volume: that raid-node has nothing to do
            RaidConfig config = cluster.raidConfig("hh-xor+", BLOCK);
            RaidNode raid = new RaidNode(config, runner);
            Set<Long> deleted = new HashSet<>();

            // The steps of a clean reclaim of such a volume, in process.
            int clean = prepared(cluster, raid, deleted);
            List<String> seen = new ArrayList<>();
            raid.checkpoints(seen::add);
            assertThat(raid.reclaim(clean).reclaimed()).isTrue();
            raid.checkpoints(Checkpoints.NONE);
            assertThat(seen).containsExactlyElementsOf(STEPS);

            for (String step : STEPS) {
                int volume = prepared(cluster, raid, deleted);
                String oldJob = raid.cluster().stripeMap(volume).job();
                try (RaidProcess p = new RaidProcess(step, log, settings(cluster, due))) {
                    int status = p.exit(120);
                    assertThat(p.printed()).as("process output").contains("CHECKPOINT " + step);
                    assertThat(status).as("exit status of a raid-node halted at " + step).isEqualTo(RaidMain.HALT_STATUS);
                }
                boolean inProcess = STEPS.indexOf(step) % 2 == 0;
                if (inProcess) {
                    new RaidNode(config, runner).recover();
                } else {
                    try (RaidProcess p = new RaidProcess(null, log, settings(cluster, notDue))) {
                        // Serving means recovered; the first pass (nothing due) ends before this answers.
                        assertThat(post("http://127.0.0.1:" + p.port(60) + "/admin/run")).contains("\"reclaimed\":0");
                    }
                }

                String when = step + (inProcess ? " (recovered in process)" : " (recovered by a fresh process)");
                boolean swapped = STEPS.indexOf(step) >= STEPS.indexOf("swapped");
                StripeMap now = raid.cluster().stripeMap(volume);
                assertThat(now.status()).isEqualTo(StripeMap.COMMITTED);
                assertThat(now.job().equals(oldJob)).as("old map in force after a death at " + when).isEqualTo(!swapped);
                assertThat(raid.cluster().reclaims()).as("pending reclaims after " + when).isEmpty();
                cluster.assertOnlyMappedBlocks(raid.cluster(), "after a death at " + when);
                try (ColdReader reader = new ColdReader(raid.cluster())) {
                    cluster.assertColdReads(reader, deleted, "after a death at " + when);
                }
                try (var images = Files.newDirectoryStream(dir, "hayloft-reclaim-*")) {
                    assertThat(images).as("reclaim images after " + when).isEmpty();
                }
                if (!swapped) { // so the next process has only its own volume due
                    assertThat(raid.reclaim(volume).reclaimed()).isTrue();
                    cluster.assertOnlyMappedBlocks(raid.cluster(), "after a death at " + when + " then a clean reclaim");
                    try (ColdReader reader = new ColdReader(raid.cluster())) {
                        cluster.assertColdReads(reader, deleted, "after a death at " + when + " then a clean reclaim");
                    }
                }
            }

            // A fresh daemon with the reclaiming policy finds nothing due, damaged or orphaned.
            try (RaidProcess p = new RaidProcess(null, log, settings(cluster, due))) {
                assertThat(post("http://127.0.0.1:" + p.port(60) + "/admin/run"))
                        .contains("\"reclaimed\":0", "\"repairFailures\":[]", "\"orphansDeleted\":0");
            }
            assertThat(new BlockFixer(raid.cluster(), config).scan()).isEmpty();
            cluster.assertOnlyMappedBlocks(raid.cluster(), "after a death at the end");
            try (ColdReader reader = new ColdReader(raid.cluster())) {
                cluster.assertColdReads(reader, deleted, "after a death at the end");
            }
        }
    }

    private String[] settings(TestCluster cluster, Path policy) {
        return new String[] {"port=0", "directory=" + cluster.directory.address(), "policyFile=" + policy,
            "transferBytes=16384", "requestTimeoutMillis=5000", "spoolDir=" + dir};
    }

    /** A volume encoded in process, then two thirds of its needle bytes deleted. */
    private static int prepared(TestCluster cluster, RaidNode raid, Set<Long> deleted) throws Exception {
        int volume = cluster.writeVolume(NEEDLES, MAX_NEEDLE);
        raid.encode(volume);
        assertThat(raid.cluster().stripeMap(volume).stripes()).as("stripes of volume %d", volume).hasSizeGreaterThan(1);
        deleted.addAll(cluster.deletePhotos(volume, 0.67));
        return volume;
    }

    private static String post(String url) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(90))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return r.body();
    }
}
