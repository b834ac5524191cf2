package io.hayloft.raid.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.common.wire.StripeMap;
import io.hayloft.directory.meta.VolumeInfo.VolumeState;
import io.hayloft.raid.BlockFixer;
import io.hayloft.raid.ColdReader;
import io.hayloft.raid.EncodeJob;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.RaidTask;
import io.hayloft.raid.TestCluster;
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
                throw new java.io.IOException("task " + id + " failed on purpose");
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
    }
}
