package io.hayloft.cli.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.AppenderBase;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.cache.CacheConfig;
import io.hayloft.cache.CacheServer;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.serverkit.config.ConfigLoader;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.format.wire.WriteToken;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.raid.Checkpoints;
import io.hayloft.raid.RaidServer;
import io.hayloft.raid.RaidServerConfig;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * A secured cluster (directory, three stores, a cache node and a raid-node, in process on loopback)
 * with distinctive secrets, driven through puts, reads, refused writes, admin calls with wrong
 * tokens, unauthenticated heartbeats, a half-secured store and malformed configurations. Every log
 * line (a Logback appender on the root logger), every {@code /health}, {@code /status},
 * {@code /metrics}, {@code /stats} and {@code /v1/console} answer, every error body and every
 * start-up or configuration error is collected; none may hold the cluster secret, the admin token
 * or the MAC of a write token.
 */
class SecretsNeverLeakTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SECRET = "leak-canary-SECRET-7f3a9c2e51";
    private static final String ADMIN = "leak-canary-ADMIN-b8d40e6f19";

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final List<String> seen = Collections.synchronizedList(new ArrayList<>());
    private final List<AutoCloseable> closers = new ArrayList<>();
    private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    private final AppenderBase<ILoggingEvent> capture = new AppenderBase<>() {
        @Override
        protected void append(ILoggingEvent e) {
            seen.add("log " + e.getLoggerName() + ": " + e.getFormattedMessage()
                    + (e.getThrowableProxy() == null ? "" : "\n" + ThrowableProxyUtil.asString(e.getThrowableProxy())));
        }
    };

    @AfterEach
    void stop() throws Exception {
        root.detachAppender(capture);
        capture.stop();
        Collections.reverse(closers);
        for (AutoCloseable c : closers) {
            c.close();
        }
    }

    @Test
    void noSecretAppearsInAnyLogLineAnswerOrError() throws Exception {
        capture.start();
        root.addAppender(capture);
        EmbeddedCluster cluster = EmbeddedCluster.start(ClusterOptions.of(dir.resolve("cluster")).withStores(3, 3)
                .withSecrets(SECRET, ADMIN).withTiming(200, 500, 3));
        closers.add(cluster);
        HayloftClient client = cluster.newClient();
        closers.add(client);
        CacheConfig cc = BesideTheCluster.cache(cluster.directoryAddress());
        cc.clusterSecret = SECRET;
        cc.workerThreads = 4;
        CacheServer cache = CacheServer.start(cc);
        closers.add(cache);
        RaidServerConfig rc = BesideTheCluster.raid(cluster.directoryAddress(), dir.resolve("spool"));
        rc.adminToken = ADMIN;
        RaidServer raid = RaidServer.start(rc, Checkpoints.NONE);
        closers.add(raid);
        String directory = "http://" + cluster.directoryAddress();
        String store = cluster.storeAddress(0);

        // Puts and reads, directly and through the cache (a miss, then a hit).
        List<PutResult> puts = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            puts.add(client.put(("photo " + i).getBytes(StandardCharsets.UTF_8)));
        }
        for (PutResult p : puts) {
            assertThat(client.get(p.id())).isNotEmpty();
        }
        PhotoId first = puts.get(0).id();
        String replica = client.stat(first).replicas().get(0);
        assertThat(call("GET", "http://" + cache.address() + "/" + replica + first.needlePath(), null, null, null)).isEqualTo(200);
        assertThat(call("GET", "http://" + cache.address() + "/" + replica + first.needlePath(), null, null, null)).isEqualTo(200);

        // A write token of our own, used right and wrong; its MAC must stay out of every log and answer.
        String leased = body("POST", directory + "/v1/leases", "{\"keys\": 2}", null, null);
        JsonNode a = JSON.readTree(leased);
        String token = a.get("token").asText();
        String mac = token.substring(token.lastIndexOf('.') + 1);
        assertThat(mac).hasSize(64);
        int volume = a.get("volume").asInt();
        long key = a.get("first").asLong();
        String cookie = "0123456789abcdef"; // the writer's choice: the directory keeps no cookie
        String needle = "/" + volume + "/" + key + "/0?cookie=" + cookie;
        String forged = token.substring(0, token.length() - 1) + (token.endsWith("0") ? "1" : "0");
        String target = a.get("replicas").get(0).asText();
        assertThat(call("PUT", "http://" + target + needle, "bytes", WriteToken.HEADER, token)).isEqualTo(201);
        assertThat(call("PUT", "http://" + target + needle, "bytes", WriteToken.HEADER, forged)).isEqualTo(403);
        assertThat(call("PUT", "http://" + target + "/" + volume + "/" + (key + 5) + "/0?cookie=" + cookie, "bytes",
                WriteToken.HEADER, token)).isEqualTo(403);
        assertThat(call("PUT", "http://" + target + needle, "bytes", WriteToken.HEADER, "x." + SECRET)).isEqualTo(403);
        assertThat(call("PUT", "http://" + cache.address() + "/" + target + needle, "bytes", WriteToken.HEADER, forged))
                .isEqualTo(403);
        assertThat(call("DELETE", "http://" + cache.address() + "/" + target + needle, null, WriteToken.HEADER, SECRET))
                .isEqualTo(403);

        // Admin calls with wrong tokens (each holding a secret, so an echo would show it), on every server.
        for (String wrong : new String[] {"Bearer " + ADMIN + "x", "Bearer " + SECRET, "Basic " + ADMIN, ADMIN}) {
            assertThat(call("POST", directory + "/v1/volumes", "{\"count\": 1}", "Authorization", wrong)).isEqualTo(401);
            assertThat(call("GET", directory + "/v1/console", null, "Authorization", wrong)).isEqualTo(401);
            assertThat(call("POST", "http://" + store + "/admin/volumes/999", "", "Authorization", wrong)).isEqualTo(403);
            assertThat(call("POST", "http://" + raid.address() + "/admin/run?waitMillis=1", "", "Authorization", wrong))
                    .isEqualTo(403);
            assertThat(call("POST", directory + "/v1/heartbeat", "{}", "Authorization", wrong)).isEqualTo(401);
        }
        assertThat(call("POST", directory + "/v1/heartbeat", "{}", null, null)).isEqualTo(401);

        // Every status page, with the right token where one is needed.
        assertThat(call("GET", directory + "/v1/console", null, "Authorization", "Bearer " + ADMIN)).isEqualTo(200);
        for (String base : List.of(directory, "http://" + store, "http://" + cache.address(), "http://" + raid.address())) {
            assertThat(call("GET", base + "/health", null, null, null)).isEqualTo(200);
            assertThat(call("GET", base + "/metrics", null, null, null)).isEqualTo(200);
        }
        assertThat(call("GET", "http://" + raid.address() + "/status", null, null, null)).isEqualTo(200);
        assertThat(call("GET", "http://" + cache.address() + "/stats", null, null, null)).isEqualTo(200);

        // A store started without the secrets against this secured directory: refused, naming what to set.
        StoreConfig half = new StoreConfig();
        half.dataDirs = List.of(dir.resolve("half").toString());
        half.host = "127.0.0.1";
        half.port = 0;
        half.directory = cluster.directoryAddress();
        assertThatThrownBy(() -> StoreServer.start(half)).satisfies(e -> seen.add("startup " + chain(e)))
                .hasMessageContaining("this cluster is secured");

        // Malformed configurations that hold the secrets.
        Path yaml = dir.resolve("directory.yaml");
        Files.writeString(yaml, "clusterSecret: " + SECRET + "\nadminToken: " + ADMIN + ": [oops\n  bad: {\n");
        configError(yaml, List.of());
        Files.writeString(yaml, "clusterSecret:\n  nested: " + SECRET + "\n");
        configError(yaml, List.of());
        configError(null, List.of("clusterSecret:" + SECRET));
        configError(null, List.of(SECRET));
        configError(null, List.of("adminTokn=" + ADMIN));
        configError(null, List.of("adminToken=" + ADMIN, "clusterSecret.x=" + SECRET, "port=-1"));

        assertThat(seen).as("something was collected").hasSizeGreaterThan(40);
        List<String> leaks = new ArrayList<>();
        synchronized (seen) {
            for (String s : seen) {
                for (String secret : List.of(SECRET, ADMIN, mac)) {
                    if (s.contains(secret)) {
                        leaks.add(s);
                    }
                }
            }
        }
        assertThat(leaks).as("lines and answers that show a secret").isEmpty();
    }

    private void configError(Path yaml, List<String> overrides) {
        assertThatThrownBy(() -> ConfigLoader.load(yaml, overrides, DirectoryConfig.class).validate())
                .isInstanceOf(IllegalArgumentException.class).satisfies(e -> seen.add("config " + chain(e)));
    }

    private static String chain(Throwable e) {
        StringBuilder b = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause()) {
            b.append(t).append('\n');
        }
        return b.toString();
    }

    private int call(String method, String url, String body, String header, String value) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (header != null) {
            b.header(header, value);
        }
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        seen.add(method + " " + url + " -> " + r.statusCode() + " " + r.body());
        return r.statusCode();
    }

    private String body(String method, String url, String body, String header, String value) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20))
                .method(method, HttpRequest.BodyPublishers.ofString(body));
        if (header != null) {
            b.header(header, value);
        }
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return r.body(); // the lease answer carries the token by design: not collected
    }
}
