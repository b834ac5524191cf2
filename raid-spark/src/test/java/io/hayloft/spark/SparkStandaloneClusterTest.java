package io.hayloft.spark;

import io.hayloft.serverkit.config.Ports;
import java.io.IOException;
import java.util.HashMap;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.raid.BlockFixer;
import io.hayloft.cold.ColdReader;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.TestCluster;
import io.hayloft.testkit.Await;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;

/**
 * The encode and repair jobs on a real Spark standalone cluster: a master and two workers, each its own
 * JVM on loopback, the jobs submitted in cluster deploy mode (the driver runs in a JVM a worker starts,
 * the stripe tasks in executor JVMs), against a real directory and 15 real stores in this JVM.
 *
 * <p>The encode loses a worker mid-job: every stripe block create on the stores is held at a
 * {@link BlockGate} until both executors have a stripe task waiting there and the driver's REST API
 * shows the task on the worker that does not run the driver; that worker's JVM is then killed with
 * SIGKILL, its executor JVM exits (Spark's worker watcher), the gate opens, and Spark runs the lost
 * stripe again on the surviving executor. The encode must commit, every photo must read back byte-exact,
 * and the stores must hold exactly the blocks of the committed stripe map (no orphan). A replacement
 * worker then joins, two blocks are destroyed, and the repair job rebuilds them.
 *
 * <p>In {@code mvn verify} it runs after {@code package} (surefire execution {@code spark-cluster}) and
 * submits the packaged {@code hayloft-raid-spark.jar} with only Spark's own jars on the driver's and
 * executors' class paths ({@link SparkStandalone#sparkDistributionClassPath()}), so it checks the jar
 * too; with {@code -Dtest=SparkStandaloneClusterTest} at the test phase it submits a jar of
 * {@code target/classes} on the whole test class path. 70–120 s on two busy cores (eight JVMs
 * besides this one).
 */
class SparkStandaloneClusterTest {

    private static final Duration JOB = Duration.ofMinutes(4);
    private static final int BLOCK = 16 << 10;

    /** Kept when the test fails: the Spark logs (master, workers, each driver's stdout and stderr) are under spark/. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path dir;

    @Test
    void encodeSurvivesAWorkerKilledMidJobAndRepairRebuildsLostBlocks() throws Exception {
        BlockGate gate = new BlockGate();
        try (TestCluster cluster = new TestCluster(dir.resolve("hayloft"), 15, d -> { }, id -> gate.disk());
             SparkStandalone spark = new SparkStandalone(dir.resolve("spark"), "w1", "w2")) {
            int volume = cluster.writeVolume(300, 4000);
            RaidConfig config = cluster.raidConfig("hh-xor+", BLOCK);
            RaidNode plain = new RaidNode(config, null);
            // The packaged spark-submit jar on a Spark-only class path when the build made it (verify), else
            // a jar of the module's classes on the test's whole class path (-Dtest=... at the test phase).
            String packaged = System.getProperty("hayloft.spark.appJar");
            boolean usePackaged = packaged != null && Files.isRegularFile(Path.of(packaged));
            Path jar = usePackaged ? Path.of(packaged) : SparkStandalone.appJar(SparkEncode.class, dir.resolve("hayloft-raid-spark-test.jar"));
            Map<String, String> classes = usePackaged ? Map.of("spark.driver.extraClassPath", SparkStandalone.sparkDistributionClassPath(),
                    "spark.executor.extraClassPath", SparkStandalone.sparkDistributionClassPath()) : Map.of();
            Path spool = Files.createDirectories(dir.resolve("spool"));
            List<String> connection = List.of("--directory", config.directory, "--request-timeout-ms", "120000",
                    "--transfer-bytes", String.valueOf(BLOCK), "--spool-dir", spool.toString());

            // Encode, holding every stripe at its first block upload.
            gate.close();
            int uiPort = Ports.free();
            List<String> encodeArgs = new ArrayList<>(connection);
            encodeArgs.addAll(List.of("--codec", "hh-xor+", "--block-size", String.valueOf(BLOCK), String.valueOf(volume)));
            String driver = spark.submit(SparkEncode.class.getName(), jar, jobConf(uiPort, classes), encodeArgs);
            String driverWorker = spark.awaitDriverWorker(driver);
            String victim = driverWorker.equals("w1") ? "w2" : "w1";

            // One stripe task on each executor (one core each) waits at the gate; fail at once if the driver died.
            String encodeDriver = driver;
            Await.untilTrue("2 stripe block creates held at the gate", JOB, () -> {
                JsonNode d = spark.driver(encodeDriver);
                String s = d == null ? "SUBMITTED" : d.path("state").asText();
                if (!s.equals("SUBMITTED") && !s.equals("RUNNING")) {
                    throw new AssertionError("driver " + encodeDriver + " is " + s + " before its stripes ran:\n"
                            + spark.driverOutput(encodeDriver));
                }
                return gate.held() >= 2;
            });
            String app = spark.runningApp();
            assertThat(app).as("the encode application at the master").isNotNull();
            String executor = spark.executorOn(victim, app);
            assertThat(executor).as("an executor of %s on worker %s", app, victim).isNotNull();
            JsonNode onVictim = executorState(spark, uiPort, app, executor);
            assertThat(onVictim.path("activeTasks").asInt()).as("stripe tasks running on executor %s of %s", executor, victim)
                    .isEqualTo(1);

            List<ProcessHandle> children = spark.kill9(victim);
            assertThat(children).as("the executor JVM worker %s started", victim).isNotEmpty();
            Await.until("the executor JVMs of the killed worker exit (Spark's worker watcher)", JOB,
                    () -> children.stream().noneMatch(ProcessHandle::isAlive));
            gate.open();
            spark.startWorker("w3"); // a replacement machine for the repair, joining while the encode finishes

            String state = spark.awaitDriverEnd(driver, JOB);
            String printed = spark.driverOutput(driver);
            assertThat(state).as(printed).isEqualTo("FINISHED");
            assertThat(printed).contains("volume " + volume + " encoded").contains("1 of 1 volumes encoded")
                    .containsPattern("[0-9]+ task attempts failed").contains("on executor " + executor);

            assertThat(cluster.directory.directory().volume(volume).state()).isEqualTo(VolumeState.ERASURE_CODED);
            assertThat(cluster.directory.directory().volume(volume).replicas()).isEmpty();
            StripeMap map = plain.cluster().stripeMap(volume);
            assertThat(map.status()).isEqualTo(StripeMap.COMMITTED);
            assertThat(map.stripes().size()).as("stripes (more than the two held at the gate)").isGreaterThanOrEqualTo(3);
            cluster.assertOnlyMappedBlocks(plain.cluster(), "after the encode that lost a worker");
            assertThat(new BlockFixer(plain.cluster(), config).scan()).as("damage after the encode").isEmpty();
            try (ColdReader reader = new ColdReader(plain.cluster())) {
                cluster.assertColdReads(reader, List.of(), "after the encode that lost a worker");
            }

            // Repair: destroy one block of each of two stripes, rebuild them on the cluster with the replacement worker.
            var stores = plain.cluster().stores();
            for (int s = 0; s < 2; s++) {
                StripeMap.Block lost = map.stripes().get(s).blocks().get(s + 3);
                assertThat(plain.cluster().deleteBlock(stores.get(lost.store()).address(), lost.name())).isTrue();
            }
            assertThat(new BlockFixer(plain.cluster(), config).scan()).hasSize(2);
            spark.awaitAliveWorkers(2);
            driver = spark.submit(SparkRepair.class.getName(), jar, jobConf(Ports.free(), classes), connection);
            state = spark.awaitDriverEnd(driver, JOB);
            printed = spark.driverOutput(driver);
            assertThat(state).as(printed).isEqualTo("FINISHED");
            assertThat(printed).contains("2 stripes, 2 blocks rebuilt").doesNotContain("FAILED");

            assertThat(new BlockFixer(plain.cluster(), config).scan()).as("damage after the repair").isEmpty();
            cluster.assertOnlyMappedBlocks(plain.cluster(), "after the repair");
            try (ColdReader reader = new ColdReader(plain.cluster())) {
                cluster.assertColdReads(reader, List.of(), "after the repair");
            }
        } finally {
            gate.open();
        }
    }

    /**
     * What each job is submitted with: one core per executor, two executors, the driver's UI on a known
     * port, and tasks scheduled only once both executors have registered.
     */
    private static Map<String, String> jobConf(int uiPort, Map<String, String> classes) {
        Map<String, String> conf = new HashMap<>(Map.of("spark.cores.max", "2", "spark.ui.port", String.valueOf(uiPort),
                "spark.port.maxRetries", "0", "spark.scheduler.minRegisteredResourcesRatio", "1.0",
                "spark.scheduler.maxRegisteredResourcesWaitingTime", "300s", "spark.ui.showConsoleProgress", "false"));
        conf.putAll(classes);
        return conf;
    }

    /** Executor {@code id} of {@code app} as the driver's REST API shows it ({@code /api/v1/applications/<app>/executors}). */
    private static JsonNode executorState(SparkStandalone spark, int uiPort, String app, String id) throws Exception {
        JsonNode[] found = new JsonNode[1];
        Await.untilTrue("executor " + id + " of " + app + " running a task in the driver's REST API", JOB, () -> {
            try {
                for (JsonNode e : spark.getJson("http://127.0.0.1:" + uiPort + "/api/v1/applications/" + app + "/executors")) {
                    if (e.path("id").asText().equals(id) && e.path("activeTasks").asInt() > 0) {
                        found[0] = e;
                        return true;
                    }
                }
                return false;
            } catch (IOException e) {
                return false; // the driver's UI is not up yet
            }
        });
        return found[0];
    }
}
