package io.hayloft.spark;

import java.io.IOException;
import java.nio.file.Files;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.raid.BlockFixer;
import io.hayloft.cold.ColdReader;
import io.hayloft.raid.EncodeJob;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.RaidLease;
import io.hayloft.raid.RaidTask;
import io.hayloft.raid.TestCluster;
import io.hayloft.testkit.Await;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.SparkConf;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The raid-node's tasks on a real local[2] Spark, against 15 real stores and a real directory. */
class SparkRunnerTest {

    static JavaSparkContext spark;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() {
        spark = new JavaSparkContext(new SparkConf().setMaster("local[2]").setAppName("hayloft-raid-spark-test")
                .set("spark.ui.enabled", "false").set("spark.driver.host", "127.0.0.1")
                .set("spark.driver.bindAddress", "127.0.0.1"));
    }

    @AfterAll
    static void stop() {
        spark.close();
    }

    /** Reports where it ran: the Spark partition, or -1 outside Spark. */
    record WhereTask(int id) implements RaidTask<int[]> {
        @Override
        public int[] call() {
            TaskContext t = TaskContext.get();
            return new int[] {id, t == null ? -1 : t.partitionId()};
        }
    }

    record FailingTask(int id) implements RaidTask<Integer> {
        @Override
        public Integer call() throws Exception {
            if (id == 2) {
                throw new IOException("task " + id + " failed on purpose");
            }
            return id;
        }
    }

    @Test
    void everyTaskRunsOnSparkInItsOwnPartitionAndResultsComeBackInOrder() throws Exception {
        try (SparkRunner runner = new SparkRunner(spark, 1)) {
            List<WhereTask> tasks = new ArrayList<>();
            for (int i = 0; i < 7; i++) {
                tasks.add(new WhereTask(i));
            }
            List<Integer> heard = new ArrayList<>();
            List<int[]> out = runner.run(tasks, (i, r) -> heard.add(i));
            assertThat(out).hasSize(7);
            for (int i = 0; i < 7; i++) {
                assertThat(out.get(i)).containsExactly(i, i);
            }
            assertThat(heard).containsExactly(0, 1, 2, 3, 4, 5, 6);
        }
    }

    @Test
    void aFailedTaskFailsTheJobAndNoResultIsReported() {
        try (SparkRunner runner = new SparkRunner(spark, 1)) {
            List<Integer> heard = new ArrayList<>();
            assertThatThrownBy(() -> runner.run(List.of(new FailingTask(1), new FailingTask(2), new FailingTask(3)),
                    (i, r) -> heard.add(i))).hasMessageContaining("task 2 failed on purpose");
            assertThat(heard).isEmpty();
        }
    }

    @Test
    void encodesAndRepairsVolumesOneSparkTaskPerStripeAndEveryNeedleReadsBack() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 15)) {
            int first = cluster.writeVolume(150, 4000);
            int second = cluster.writeVolume(100, 4000);
            RaidConfig config = cluster.raidConfig("hh-xor+", 16 << 10);

            // Through the runner: the stripes are Spark tasks.
            EncodeJob.Result r;
            try (SparkRunner runner = new SparkRunner(spark, 1)) {
                RaidNode node = new RaidNode(config, runner);
                List<String> reached = new ArrayList<>();
                node.checkpoints(reached::add);
                r = node.encode(first);
                assertThat(r.stripes()).isGreaterThanOrEqualTo(2);
                assertThat(reached).filteredOn(s -> s.startsWith("stripe-")).hasSize(r.stripes());
                assertThat(reached).endsWith("index", "verified", "committed", "dropped");
            }
            // Through the spark-submit entry point, with another codec.
            ByteArrayOutputStream printed = new ByteArrayOutputStream();
            int code = SparkEncode.run(spark, SparkEncode.parse(new String[] {"--directory", config.directory, "--codec", "rs",
                    "--block-size", String.valueOf(16 << 10), "--spool-dir", dir.toString(), String.valueOf(second)}),
                    new PrintStream(printed, true, StandardCharsets.UTF_8));
            assertThat(code).as(printed.toString(StandardCharsets.UTF_8)).isZero();
            assertThat(printed.toString(StandardCharsets.UTF_8)).contains("volume " + second + " encoded").contains("1 of 1 volumes encoded");

            RaidNode plain = new RaidNode(config, null);
            Set<String> expected = new HashSet<>();
            for (int v : List.of(first, second)) {
                assertThat(cluster.directory.directory().volume(v).state()).isEqualTo(VolumeState.ERASURE_CODED);
                assertThat(cluster.directory.directory().volume(v).replicas()).isEmpty();
                StripeMap map = plain.cluster().stripeMap(v);
                assertThat(map.status()).isEqualTo(StripeMap.COMMITTED);
                map.allBlocks().forEach(b -> expected.add(b.store() + "/" + b.name()));
            }
            assertThat(plain.cluster().stripeMap(second).codec()).isEqualTo("rs");
            assertThat(cluster.allBlocks()).containsExactlyInAnyOrderElementsOf(expected);
            try (ColdReader reader = new ColdReader(plain.cluster())) {
                for (TestCluster.Photo p : cluster.photos.values()) {
                    assertThat(reader.get(p.volume(), p.key(), 0)).as("photo " + p.key()).isEqualTo(p.data());
                }
                assertThat(reader.degradedReads()).as("degraded reads but hedges of slow direct reads").isLessThanOrEqualTo(reader.hedgedReads());
            }

            // Repair as Spark tasks, one per damaged stripe: lose one block of each of two stripes.
            StripeMap map = plain.cluster().stripeMap(first);
            var stores = plain.cluster().stores();
            for (int s = 0; s < 2; s++) {
                StripeMap.Block lost = map.stripes().get(s).blocks().get(s + 3);
                assertThat(plain.cluster().deleteBlock(stores.get(lost.store()).address(), lost.name())).isTrue();
            }
            BlockFixer.Report report;
            try (SparkRunner runner = new SparkRunner(spark, 1)) {
                report = new BlockFixer(plain.cluster(), config).repairAll(runner);
            }
            assertThat(report.failures()).isEmpty();
            assertThat(report.stripes()).isEqualTo(2);
            assertThat(report.blocks()).isEqualTo(2);
            assertThat(report.bytesWritten()).isEqualTo(2L * map.blockSize());
            assertThat(new BlockFixer(plain.cluster(), config).scan()).isEmpty();
            try (ColdReader reader = new ColdReader(plain.cluster())) {
                for (TestCluster.Photo p : cluster.photos.values()) {
                    assertThat(reader.get(p.volume(), p.key(), 0)).as("photo " + p.key() + " after repair").isEqualTo(p.data());
                }
                assertThat(reader.degradedReads()).as("degraded reads but hedges of slow direct reads").isLessThanOrEqualTo(reader.hedgedReads());
            }

            // Through the spark-submit repair entry point: refused while another raid-node holds the lease, then done.
            StripeMap.Block lost = plain.cluster().stripeMap(second).stripes().get(0).blocks().get(0);
            assertThat(plain.cluster().deleteBlock(stores.get(lost.store()).address(), lost.name())).isTrue();
            String[] repairArgs = {"--directory", config.directory, "--spool-dir", dir.toString(), "--request-timeout-ms", "5000"};
            printed.reset();
            try (RaidLease daemon = RaidLease.acquire(plain.cluster(), "raid-node@elsewhere:1", 60_000)) {
                code = SparkRepair.run(spark, SparkRepair.parse(repairArgs), new PrintStream(printed, true, StandardCharsets.UTF_8));
            }
            assertThat(code).as(printed.toString(StandardCharsets.UTF_8)).isEqualTo(1);
            assertThat(printed.toString(StandardCharsets.UTF_8)).contains("raid-node@elsewhere:1");
            assertThat(new BlockFixer(plain.cluster(), config).scan()).hasSize(1);
            printed.reset();
            code = SparkRepair.run(spark, SparkRepair.parse(repairArgs), new PrintStream(printed, true, StandardCharsets.UTF_8));
            assertThat(code).as(printed.toString(StandardCharsets.UTF_8)).isZero();
            assertThat(printed.toString(StandardCharsets.UTF_8)).startsWith("1 stripes, 1 blocks rebuilt").doesNotContain("FAILED")
                    .doesNotContain("task attempts failed");
            assertThat(new BlockFixer(plain.cluster(), config).scan()).isEmpty();
            cluster.assertOnlyMappedBlocks(plain.cluster(), "after SparkRepair");
            try (ColdReader reader = new ColdReader(plain.cluster())) {
                cluster.assertColdReads(reader, List.of(), "after SparkRepair");
            }
        }
    }

    @Test
    void failedTaskAttemptsAreCountedAndNamed() throws Exception {
        try (SparkRunner runner = new SparkRunner(spark, 1)) {
            assertThatThrownBy(() -> runner.run(List.of(new FailingTask(1), new FailingTask(2)), (i, r) -> { }))
                    .hasMessageContaining("task 2 failed on purpose");
            // Spark's listener bus delivers task ends asynchronously.
            Await.until("the failed attempt reported to the runner", () -> runner.failedAttempts().stream()
                    .anyMatch(f -> f.contains("partition 1 attempt 0") && f.contains("task 2 failed on purpose")));
            ByteArrayOutputStream printed = new ByteArrayOutputStream();
            runner.printRetries(new PrintStream(printed, true, StandardCharsets.UTF_8));
            assertThat(printed.toString(StandardCharsets.UTF_8)).containsPattern("^[1-9][0-9]* task attempts failed")
                    .contains("java.io.IOException: task 2 failed on purpose");
        }
    }

    @Test
    void badArgumentsAreNamed() {
        assertThatThrownBy(() -> SparkEncode.parse(new String[] {"--directory", "h:1"}))
                .hasMessageContaining("either VOLUME ids or --backlog");
        assertThatThrownBy(() -> SparkEncode.parse(new String[] {"--block-size", "lots", "7"}))
                .hasMessageContaining("--block-size must be a number, was 'lots'");
        assertThatThrownBy(() -> SparkEncode.parse(new String[] {"--frobnicate", "7"}))
                .hasMessageContaining("unknown option '--frobnicate'");
        assertThatThrownBy(() -> SparkEncode.parse(new String[] {"--backlog", "7"})).hasMessageContaining("not both");
        assertThatThrownBy(() -> SparkEncode.parse(new String[] {"--codec", "zip", "7"})).hasMessageContaining("zip");
        assertThatThrownBy(() -> SparkEncode.parse(new String[] {"--request-timeout-ms", "99999999999999999999", "7"}))
                .hasMessageContaining("--request-timeout-ms is out of range");
        assertThatThrownBy(() -> SparkEncode.parse(new String[] {"--transfer-bytes", "100", "7"}))
                .hasMessageContaining("transferBytes must be in 4096..67108864, was 100");
        assertThatThrownBy(() -> SparkRepair.parse(new String[] {"7"})).hasMessageContaining("unexpected argument '7'");
        assertThatThrownBy(() -> SparkRepair.parse(new String[] {"--codec", "rs"})).hasMessageContaining("unknown option '--codec'");
        assertThatThrownBy(() -> SparkRepair.parse(new String[] {"--repair-bandwidth", "-5"}))
                .hasMessageContaining("--repair-bandwidth must be >= 0, was -5");
        assertThatThrownBy(() -> SparkRepair.parse(new String[] {"--directory"})).hasMessageContaining("--directory needs a value");
        assertThatThrownBy(() -> SparkRepair.parse(new String[] {"--admin-token-file", dir.resolve("absent").toString()}))
                .hasMessageContaining("--admin-token-file '" + dir.resolve("absent") + "' cannot be read");
    }

    @Test
    void connectionOptionsFillTheConfigTheTasksCarry() throws Exception {
        Path token = Files.writeString(dir.resolve("token"), "s3cret-token\n");
        Path empty = Files.writeString(dir.resolve("empty"), "\n");
        RaidConfig c = SparkRepair.parse(new String[] {"--directory", "dir1:7000", "--admin-token-file", token.toString(),
                "--request-timeout-ms", "60000", "--transfer-bytes", "4096", "--spool-dir", "/data/spool",
                "--tls-trust-store", "trust.p12", "--tls-trust-store-password", "tp", "--tls-key-store", "key.p12",
                "--tls-key-store-password", "kp", "--repair-bandwidth", "1000000"});
        assertThat(c.directory).isEqualTo("dir1:7000");
        assertThat(c.adminToken).isEqualTo("s3cret-token");
        assertThat(c.requestTimeoutMillis).isEqualTo(60_000);
        assertThat(c.transferBytes).isEqualTo(4096);
        assertThat(c.spoolDir).isEqualTo("/data/spool");
        assertThat(List.of(c.tlsTrustStore, c.tlsTrustStorePassword, c.tlsKeyStore, c.tlsKeyStorePassword))
                .containsExactly("trust.p12", "tp", "key.p12", "kp");
        assertThat(c.repairBytesPerSecondPerStore).isEqualTo(1_000_000);
        assertThat(SparkEncode.parse(new String[] {"--admin-token", "t", "--block-size", "65536", "3", "4"}).volumes()).containsExactly(3, 4);
        assertThatThrownBy(() -> SparkEncode.parse(new String[] {"--admin-token-file", empty.toString(), "7"}))
                .hasMessageContaining("is empty");
    }
}
