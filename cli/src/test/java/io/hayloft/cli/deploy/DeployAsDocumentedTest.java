package io.hayloft.cli.deploy;

import io.hayloft.format.directory.BackupManifest;
import io.hayloft.serverkit.config.Ports;
import io.hayloft.serverkit.io.Disk;
import java.nio.file.Files;
import java.util.zip.CRC32C;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.hayloft.cli.Hayloft;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.directory.DirectoryBackup;
import io.hayloft.directory.meta.MetaStore;
import io.hayloft.testkit.Await;
import io.hayloft.testkit.PrometheusText;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Deploys Hayloft the way docs/operations.md says: every server a separate process started with the
 * arguments of its systemd unit in docs/deploy/ ({@code ExecStart} after the jar) and the example
 * configuration files there, as written. Only what must differ on one test machine is overridden with
 * the {@code key=value} arguments the commands accept: data paths, ports, the addresses that follow
 * from the ports, and each store's rack. Then photos go in and out through the client, the
 * documented backup and restore run, and every metric the Grafana dashboard (docs/grafana/hayloft.json)
 * and the alert rules (docs/grafana/hayloft-alerts.yml) use must be exported by these servers.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DeployAsDocumentedTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dir;

    private Path deploy;
    private DeployedProcesses processes;
    private final Map<String, String> addresses = new LinkedHashMap<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private String get(String address, String path) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + address + path))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? r.body() : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private JsonNode yaml(String file) throws IOException {
        return YAML.readTree(deploy.resolve(file).toFile());
    }

    @BeforeAll
    void deploy() throws Exception {
        deploy = DeployedProcesses.docs().resolve("deploy");
        processes = new DeployedProcesses(dir, "-Xmx512m");
        int directoryPort = Ports.free();
        int cachePort = Ports.free();
        int raidPort = Ports.free();
        int[] storePorts = {Ports.free(), Ports.free(), Ports.free()};
        String directory = "127.0.0.1:" + directoryPort;
        String cache = "127.0.0.1:" + cachePort;
        List<String> stores = Arrays.stream(storePorts).mapToObj(p -> "127.0.0.1:" + p).toList();

        // First start of the directory: the unit's arguments plus --init (docs/operations.md).
        List<String> d = new ArrayList<>(DeployedProcesses.execStart("hayloft-directory.service", ""));
        d.add("--init");
        d.addAll(List.of("dataDir=" + dir.resolve("var/lib/hayloft/directory"), "port=" + directoryPort, "cacheNodes=" + cache));
        String line = processes.start("directory", d).get(60, TimeUnit.SECONDS);
        assertThat(line).contains(":" + directoryPort);
        addresses.put("directory", directory);

        List<CompletableFuture<String>> others = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            String instance = Integer.toString(i + 1);
            Path data = dir.resolve("srv/hayloft/store-" + instance);
            List<String> s = new ArrayList<>(DeployedProcesses.execStart("hayloft-store@.service", instance));
            s.addAll(List.of("dataDirs=" + data.resolve("disk1") + "," + data.resolve("disk2"), "port=" + storePorts[i],
                    "advertiseAddress=" + stores.get(i), "rack=rack-" + instance, "directory=" + directory));
            others.add(processes.start("store-" + instance, s));
            addresses.put("store-" + instance, stores.get(i));
        }
        List<String> c = new ArrayList<>(DeployedProcesses.execStart("hayloft-cache.service", ""));
        c.addAll(List.of("port=" + cachePort, "directory=" + directory, "allowedStores=" + String.join(",", stores)));
        others.add(processes.start("cache", c));
        addresses.put("cache", cache);
        List<String> r = new ArrayList<>(DeployedProcesses.execStart("hayloft-raid.service", ""));
        r.addAll(List.of("port=" + raidPort, "directory=" + directory, "spoolDir=" + dir.resolve("var/lib/hayloft/raid-spool")));
        others.add(processes.start("raid", r));
        addresses.put("raid", "127.0.0.1:" + raidPort);
        for (CompletableFuture<String> f : others) {
            f.get(90, TimeUnit.SECONDS);
        }
        Await.until("three stores UP in the directory", WAIT, () -> {
            String body = get(directory, "/v1/stores");
            try {
                return body != null && JSON.readTree(body).findValuesAsText("state").stream().filter("UP"::equals).count() == 3;
            } catch (IOException e) {
                return false;
            }
        });
    }

    @AfterAll
    void stop() throws Exception {
        if (processes != null) {
            processes.stopAll(true);
        }
    }

    @Test
    @Order(1)
    void photosGoInAndComeOutThroughTheClientAndTheCache() throws Exception {
        Random random = new Random(5);
        List<byte[]> data = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            byte[] b = new byte[100 + random.nextInt(20_000)];
            random.nextBytes(b);
            data.add(b);
        }
        List<PutResult> put = new ArrayList<>();
        try (HayloftClient client = HayloftClient.builder().directory(addresses.get("directory"))
                .requestTimeout(Duration.ofSeconds(10)).build()) {
            put.addAll(client.putAll(data.subList(0, 30)));
            for (byte[] b : data.subList(30, 40)) {
                put.add(client.put(b));
            }
            for (int round = 0; round < 2; round++) {
                for (int i = 0; i < data.size(); i++) {
                    assertThat(client.get(put.get(i).id())).as("photo %d, round %d", i, round).isEqualTo(data.get(i));
                }
            }
        }
        // readPolicy: cache in directory.yaml: the reads went through the cache node, the second round hit it.
        JsonNode stats = JSON.readTree(get(addresses.get("cache"), "/stats"));
        assertThat(stats.path("misses").asLong()).as("cache stats %s", stats).isGreaterThanOrEqualTo(40);
        assertThat(stats.path("hits").asLong()).as("cache stats %s", stats).isGreaterThanOrEqualTo(40);
    }

    @Test
    @Order(2)
    void theDocumentedBackupAndRestoreWork() throws Exception {
        String token = yaml("directory.yaml").path("adminToken").asText();
        Path target = dir.resolve("var/backups/hayloft/directory-1");
        // As an operator runs it: a separate process, the admin token from the environment.
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), "io.hayloft.cli.Hayloft",
                "directory", "backup", "-d", addresses.get("directory"), "--to", target.toString()).redirectErrorStream(true);
        pb.environment().put("HAYLOFT_ADMIN_TOKEN", token);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).contains("backup of cluster").contains(target.toString());
        BackupManifest m = DirectoryBackup.readManifest(target);
        assertThat(m.stores()).isEqualTo(3);
        assertThat(m.volumes()).isGreaterThanOrEqualTo(4); // minWritableVolumes in directory.yaml

        // The documented restore, into the data directory a replacement host would use.
        Path restored = dir.resolve("replacement/var/lib/hayloft/directory");
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        int code = Hayloft.run(new PrintWriter(o), new PrintWriter(e), "directory", "restore", "--from", target.toString(),
                "--config", deploy.resolve("directory.yaml").toString(), "dataDir=" + restored);
        assertThat(code).as(e.toString()).isZero();
        MetaStore.Inspection in = MetaStore.inspect(restored);
        assertThat(in.clusterId()).isEqualTo(m.clusterId());
        assertThat(in.keyHighWaterMark()).isEqualTo(m.keyHighWaterMark() + DirectoryBackup.DEFAULT_KEY_MARGIN);
    }

    @Test
    @Order(3)
    void everyMetricTheDashboardAndTheAlertsUseIsExported() throws Exception {
        // Exercise every server a little more: raid-node requests, cache cold path refused, store reads.
        assertThat(get(addresses.get("raid"), "/status")).isNotNull();
        Set<String> exported = new TreeSet<>();
        for (Map.Entry<String, String> a : addresses.entrySet()) {
            String body = get(a.getValue(), "/metrics");
            assertThat(body).as("/metrics of %s", a.getKey()).isNotNull();
            exported.addAll(MetricNames.exported(body));
        }
        Path grafana = DeployedProcesses.docs().resolve("grafana");
        JsonNode dashboard = JSON.readTree(grafana.resolve("hayloft.json").toFile());
        List<String> expressions = MetricNames.dashboardExpressions(dashboard);
        assertThat(expressions).hasSizeGreaterThan(20);
        Set<String> used = new TreeSet<>();
        for (String expr : expressions) {
            used.addAll(MetricNames.used(expr));
        }
        for (JsonNode rule : YAML.readTree(grafana.resolve("hayloft-alerts.yml").toFile()).findValues("expr")) {
            Set<String> names = MetricNames.used(rule.asText());
            assertThat(names).as("alert %s", rule.asText()).isNotEmpty();
            used.addAll(names);
        }
        assertThat(used).as("metric names in the dashboard and alerts").isNotEmpty()
                .allMatch(n -> n.startsWith("hayloft_"), "start with hayloft_");
        Set<String> missing = new TreeSet<>(used);
        missing.removeAll(exported);
        assertThat(missing).as("metrics the dashboard or the alerts use that no running server exports").isEmpty();
    }

    @Test
    @Order(4)
    void aStreamedBlockIsWrittenAsStoreYamlSays() throws Exception {
        // store.yaml sets directBlockWrites: true: a block put to a deployed store goes around the page
        // cache where this machine's file system takes O_DIRECT, through it where not; either way it reads back
        String token = yaml("store.yaml").path("adminToken").asText();
        assertThat(yaml("store.yaml").path("directBlockWrites").asBoolean(false)).isTrue();
        String store = addresses.get("store-1");
        byte[] block = new byte[(3 << 20) + 5];
        new Random(11).nextBytes(block);
        CRC32C crc = new CRC32C();
        crc.update(block);
        HttpResponse<String> put = http.send(HttpRequest.newBuilder(URI.create("http://" + store + "/blocks/deployed-b1"))
                .timeout(Duration.ofSeconds(30)).header("Authorization", "Bearer " + token)
                .header("X-Hayloft-Crc32c", Long.toHexString(crc.getValue()))
                .PUT(HttpRequest.BodyPublishers.ofByteArray(block)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(put.statusCode()).as(put.body()).isEqualTo(201);
        HttpResponse<byte[]> got = http.send(HttpRequest.newBuilder(URI.create("http://" + store + "/blocks/deployed-b1"))
                .timeout(Duration.ofSeconds(30)).header("Authorization", "Bearer " + token).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(got.statusCode()).isEqualTo(200);
        assertThat(got.body()).isEqualTo(block);
        // blocks go to the first of the store's dataDirs
        Path disk1 = dir.resolve("srv/hayloft/store-1/disk1");
        Disk.Direct probe = Disk.REAL.openDirect(disk1.resolve("direct-probe"));
        if (probe != null) {
            probe.channel().close();
            Files.delete(disk1.resolve("direct-probe"));
        }
        String metrics = get(store, "/metrics");
        String counter = "hayloft_store_block_committed_bytes_total";
        assertThat(PrometheusText.sum(metrics, counter, "writes", "direct")).isEqualTo(probe != null ? block.length : 0);
        assertThat(PrometheusText.sum(metrics, counter, "writes", "page_cache")).isEqualTo(probe != null ? 0 : block.length);
    }
}
