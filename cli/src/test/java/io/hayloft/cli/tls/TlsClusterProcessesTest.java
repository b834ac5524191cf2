package io.hayloft.cli.tls;

import io.hayloft.cli.deploy.DeployedProcesses;
import io.hayloft.serverkit.config.Ports;
import io.hayloft.testkit.PrometheusText;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.serverkit.http.Tls;
import io.hayloft.testkit.Await;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A secured cluster of separate processes, started as docs/operations.md says (the arguments of the
 * systemd units in docs/deploy and their example configuration files), every one with
 * {@code tlsKeyStore}, {@code tlsTrustStore} and {@code tlsClientAuth: require} (docs/directory-api.md
 * "TLS"), a {@code clusterSecret} and an {@code adminToken}: a directory, three stores, a cache node
 * and a raid-node. Every call between them is HTTPS with client certificates: the stores register
 * and stay UP through many heartbeats and health probes, the client puts and gets photos through the
 * cache, the raid-node encodes a sealed volume (RS k=2, r=1) and a photo of it still reads after
 * one block's store is stopped. Plain HTTP, a missing and a wrong admin token are refused.
 */
class TlsClusterProcessesTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String ADMIN = "CHANGE-ME-admin-token-0123456789"; // docs/deploy/directory.yaml

    @TempDir
    Path dir;

    private DeployedProcesses processes;
    private HttpClient https;

    /** Runs {@code hayloft ARGS} as a process with the cluster's TLS files in its environment: exit code, stdout, stderr. */
    private String[] cli(TestPki pki, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), "io.hayloft.cli.Hayloft"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("HAYLOFT_TLS_TRUST_STORE", pki.trustStore.toString());
        pb.environment().put("HAYLOFT_TLS_TRUST_STORE_PASSWORD", TestPki.PASSWORD);
        pb.environment().put("HAYLOFT_TLS_KEY_STORE", pki.clusterKeyStore.toString());
        pb.environment().put("HAYLOFT_TLS_KEY_STORE_PASSWORD", TestPki.PASSWORD);
        pb.environment().put("HAYLOFT_ADMIN_TOKEN", ADMIN);
        Path err = dir.resolve("cli-" + System.nanoTime() + ".err");
        Process p = pb.redirectError(err.toFile()).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("hayloft %s finished", List.of(args)).isTrue();
        return new String[] {Integer.toString(p.exitValue()), out, Files.readString(err)};
    }

    private HttpResponse<String> send(String method, String url, String token) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                .method(method, HttpRequest.BodyPublishers.noBody());
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return https.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode stores(String directory) throws Exception {
        HttpResponse<String> r = send("GET", "https://" + directory + "/v1/stores", null);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    @AfterEach
    void stop() throws Exception {
        if (processes != null) {
            processes.stopAll(false);
        }
    }

    @Test
    void aMutualTlsClusterOfProcessesWorksAndRefusesPlainHttpAndBadTokens() throws Exception {
        TestPki pki = TestPki.create(dir);
        processes = new DeployedProcesses(dir, "-Xmx256m", "-XX:TieredStopAtLevel=1");
        https = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5))
                .sslContext(Tls.Settings.of(pki.clusterKeyStore.toString(), TestPki.PASSWORD, pki.trustStore.toString(),
                        TestPki.PASSWORD, null).clientContext()).build();
        List<String> tls = List.of("tlsKeyStore=" + pki.clusterKeyStore, "tlsKeyStorePassword=" + TestPki.PASSWORD,
                "tlsTrustStore=" + pki.trustStore, "tlsTrustStorePassword=" + TestPki.PASSWORD, "tlsClientAuth=require");

        int[] ports = new int[6];
        for (int i = 0; i < ports.length; i++) {
            ports[i] = Ports.free(); // distinct, below the ephemeral range
        }
        String directory = "127.0.0.1:" + ports[0];
        String cache = "127.0.0.1:" + ports[1];
        String raid = "127.0.0.1:" + ports[2];
        List<String> stores = List.of("127.0.0.1:" + ports[3], "127.0.0.1:" + ports[4], "127.0.0.1:" + ports[5]);

        List<String> d = new ArrayList<>(DeployedProcesses.execStart("hayloft-directory.service", ""));
        d.add("--init");
        d.addAll(List.of("dataDir=" + dir.resolve("directory"), "port=" + ports[0], "cacheNodes=" + cache,
                "probeIntervalMillis=200", "probeTimeoutMillis=2000", "failureThreshold=3"));
        d.addAll(tls);
        processes.start("directory", d).get(60, TimeUnit.SECONDS);

        List<CompletableFuture<String>> others = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            String instance = Integer.toString(i + 1);
            Path data = dir.resolve("store-" + instance);
            List<String> s = new ArrayList<>(DeployedProcesses.execStart("hayloft-store@.service", instance));
            s.addAll(List.of("dataDirs=" + data.resolve("disk1"), "port=" + ports[3 + i], "advertiseAddress=" + stores.get(i),
                    "rack=rack-" + instance, "directory=" + directory, "heartbeatMillis=100"));
            s.addAll(tls);
            others.add(processes.start("store-" + instance, s));
        }
        List<String> c = new ArrayList<>(DeployedProcesses.execStart("hayloft-cache.service", ""));
        c.addAll(List.of("port=" + ports[1], "directory=" + directory, "allowedStores=" + String.join(",", stores),
                "maxBytes=67108864"));
        c.addAll(tls);
        others.add(processes.start("cache", c));
        Path policy = dir.resolve("raid-policy.json");
        Files.writeString(policy, "{\"codec\": \"rs\", \"k\": 2, \"r\": 1, \"blockSize\": 65536, \"minAgeMillis\": 0,"
                + " \"placement\": \"racks\", \"workers\": 1, \"repairGraceMillis\": 3600000,"
                + " \"policyIntervalMillis\": 3600000, \"encode\": true}");
        List<String> r = new ArrayList<>(DeployedProcesses.execStart("hayloft-raid.service", ""));
        r.replaceAll(a -> a.endsWith("raid-policy.json") ? policy.toString() : a);
        r.addAll(List.of("port=" + ports[2], "directory=" + directory, "spoolDir=" + dir.resolve("spool")));
        r.addAll(tls);
        others.add(processes.start("raid", r));
        for (CompletableFuture<String> f : others) {
            f.get(90, TimeUnit.SECONDS);
        }

        // Registered over mutual TLS, then UP through many heartbeats (100 ms) and probes (200 ms): never anything else.
        Await.untilTrue("three stores UP", WAIT, () -> stores(directory).findValuesAsText("state").stream()
                .filter("UP"::equals).count() == 3);
        // 3 s: 30 heartbeats of each store and 15 probe rounds, each over mutual TLS (a failure threshold of 3).
        long end = System.nanoTime() + Duration.ofSeconds(3).toNanos();
        int[] rounds = {0};
        Await.untilTrue("3 s of rounds of the directory's view, every store UP in each", Duration.ofSeconds(30), () -> {
            JsonNode now = stores(directory);
            assertThat(now.findValuesAsText("state")).as("round %d: %s", rounds[0], now).containsExactly("UP", "UP", "UP");
            rounds[0]++;
            return System.nanoTime() >= end;
        });
        assertThat(rounds[0]).isGreaterThan(10);

        // Plain HTTP to a TLS port: 400 TLS_REQUIRED.
        for (String address : List.of(directory, cache, raid, stores.get(0), stores.get(1), stores.get(2))) {
            String[] hp = address.split(":");
            byte[] answer;
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(hp[0], Integer.parseInt(hp[1])), 5000);
                s.setSoTimeout(10_000);
                OutputStream out = s.getOutputStream();
                out.write(("GET /health HTTP/1.1\r\nHost: " + address + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.flush();
                InputStream in = s.getInputStream();
                answer = in.readAllBytes();
            }
            String text = new String(answer, StandardCharsets.UTF_8);
            assertThat(text).as(address).startsWith("HTTP/1.1 400 ");
            assertThat(JSON.readTree(text.substring(text.indexOf("\r\n\r\n") + 4)).at("/error/name").asText()).isEqualTo("TLS_REQUIRED");
        }
        // The admin endpoints over mutual TLS still need the token: none and a wrong one are refused with a JSON error.
        for (String token : Arrays.asList(null, "not-the-admin-token-0123456789")) {
            for (String url : List.of("https://" + directory + "/v1/volumes/1/read-only", "https://" + raid + "/admin/run")) {
                HttpResponse<String> refused = send("POST", url, token);
                assertThat(refused.statusCode()).as("%s with token %s: %s", url, token, refused.body()).isIn(401, 403);
                assertThat(JSON.readTree(refused.body()).at("/error/name").asText()).as(refused.body()).isNotEmpty();
            }
        }

        // Photos in and out with the client's trust store and certificate; reads go through the cache (readPolicy: cache).
        Random random = new Random(7);
        List<byte[]> data = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            byte[] b = new byte[100 + random.nextInt(8_000)];
            random.nextBytes(b);
            data.add(b);
        }
        List<PutResult> put = new ArrayList<>();
        try (HayloftClient client = HayloftClient.builder().directory(directory).requestTimeout(Duration.ofSeconds(10))
                .trustStore(pki.trustStore.toString(), TestPki.PASSWORD).keyStore(pki.clusterKeyStore.toString(), TestPki.PASSWORD)
                .adminToken(ADMIN).build()) {
            put.addAll(client.putAll(data));
            for (int round = 0; round < 2; round++) {
                for (int i = 0; i < data.size(); i++) {
                    assertThat(client.get(put.get(i).id())).as("photo %d, round %d", i, round).isEqualTo(data.get(i));
                }
            }
            JsonNode stats = JSON.readTree(send("GET", "https://" + cache + "/stats", null).body());
            assertThat(stats.path("misses").asLong()).as("cache stats %s", stats).isGreaterThanOrEqualTo(30);
            assertThat(stats.path("hits").asLong()).as("cache stats %s", stats).isGreaterThanOrEqualTo(30);

            // Seal the volume of photo 0 and have the raid-node encode it over TLS (k=2, r=1: one block per store).
            int volume = put.get(0).id().volume();
            assertThat(send("POST", "https://" + directory + "/v1/volumes/" + volume + "/read-only", ADMIN).statusCode()).isEqualTo(200);
            HttpResponse<String> run = send("POST", "https://" + raid + "/admin/run", ADMIN);
            assertThat(run.statusCode()).as(run.body()).isEqualTo(200);
            assertThat(JSON.readTree(run.body()).path("encoded").toString()).as(run.body()).contains(Integer.toString(volume));
            JsonNode v = JSON.readTree(send("GET", "https://" + directory + "/v1/volumes/" + volume, null).body());
            assertThat(v.path("state").asText()).as("%s", v).isEqualTo("ERASURE_CODED");
            // encodeAt: store (docs/deploy/raid.yaml): the replica holders encoded the stripes themselves over
            // mutual TLS (store to store, store to directory), not the raid-node's fallback.
            double byStores = 0;
            for (String store : stores) {
                String metrics = send("GET", "https://" + store + "/metrics", ADMIN).body();
                double n = PrometheusText.sum(metrics, "hayloft_encode_stripes_total");
                byStores += Double.isNaN(n) ? 0 : n;
            }
            assertThat(byStores).as("stripes encoded by the stores themselves").isGreaterThanOrEqualTo(1);
            List<Integer> coded = new ArrayList<>();
            for (int i = 0; i < put.size(); i++) {
                if (put.get(i).id().volume() == volume) {
                    coded.add(i);
                }
            }
            for (int i : coded) {
                assertThat(client.get(put.get(i).id())).as("coded photo %d", i).isEqualTo(data.get(i));
            }

            // The operator's commands against the TLS cluster, as documented: trust store and client certificate from
            // the environment (passwords only there).
            String[] shown = cli(pki, "volumes", "show", Integer.toString(volume), "-d", directory);
            assertThat(shown[0]).as(shown[1] + shown[2]).isEqualTo("0");
            assertThat(shown[1]).contains("ERASURE_CODED");
            String[] listed = cli(pki, "stores", "-d", directory);
            assertThat(listed[0]).as(listed[1] + listed[2]).isEqualTo("0");
            assertThat(listed[1]).contains("UP");

            // Stop the store holding the first data block of stripe 0: the photos still read (degraded, from the other two).
            JsonNode map = JSON.readTree(send("GET", "https://" + directory + "/v1/volumes/" + volume + "/stripes", ADMIN).body());
            String victimId = map.at("/stripes/0/blocks/0/store").asText();
            String victim = null;
            for (JsonNode s : stores(directory)) {
                if (s.path("id").asText().equals(victimId)) {
                    victim = s.path("address").asText();
                }
            }
            assertThat(victim).as("address of store %s in %s", victimId, map).isNotNull();
            Process p = processes.process("store-" + (stores.indexOf(victim) + 1));
            p.destroy();
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            for (int i : coded) {
                assertThat(client.get(put.get(i).id())).as("coded photo %d with store %s stopped", i, victim).isEqualTo(data.get(i));
            }
        }
    }
}
