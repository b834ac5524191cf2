package io.hayloft.directory;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.wire.Wire;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import io.hayloft.testkit.Await;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The directory's gauges of cluster state on {@code /metrics} (DirectoryMetrics) follow the real
 * cluster: stores and volumes by state, each store's reported capacity and free space, the key
 * high-water mark; a store the health checker fails moves from UP to FAILED and its volumes from
 * WRITABLE to READ_ONLY in the gauges.
 */
class DirectoryMetricsTest extends DirectoryOverHttp {
    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*})?\\s+(\\S+)$", Pattern.MULTILINE);

    /** Every sample of the exposition, keyed by {@code name{labels}} with the labels as printed. */
    private Map<String, Double> scrape() throws Exception {
        String text = http.send(HttpRequest.newBuilder(URI.create("http://" + directory.address() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        Map<String, Double> out = new HashMap<>();
        Matcher m = SAMPLE.matcher(text);
        while (m.find()) {
            String labels = m.group(2) == null ? "" : m.group(2).replace(",}", "}");
            out.put(m.group(1) + labels, Double.parseDouble(m.group(3)));
        }
        return out;
    }

    private static double gauge(Map<String, Double> samples, String key) {
        Double v = samples.get(key);
        assertThat(v).as("sample %s in %s", key, samples.keySet()).isNotNull();
        return v;
    }

    private void heartbeat(int i, long free) throws Exception {
        Wire.Heartbeat hb = new Wire.Heartbeat("s" + i, "127.0.0.1:" + stores.get(i).port(), "r" + i, 1L << 30, free, List.of());
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + directory.address() + "/v1/heartbeat"))
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(hb))).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    }

    @Test
    void gaugesFollowStoresVolumesAndFailures() throws Exception {
        DirectoryConfig c = new DirectoryConfig();
        c.dataDir = dir.resolve("directory").toString();
        c.port = 0;
        c.init = true;
        c.probeIntervalMillis = 1000; // a probe racing a volume's creation reads 404: keep it well apart
        c.probeTimeoutMillis = 500;
        c.failureThreshold = 3;
        directory = DirectoryServer.start(c);
        for (int i = 0; i < 4; i++) {
            StoreConfig s = new StoreConfig();
            s.dataDirs = List.of(dir.resolve("store" + i).toString());
            s.host = "127.0.0.1";
            s.port = 0;
            stores.add(StoreServer.start(s.validate()));
            heartbeat(i, (1L << 29) + i);
        }
        HttpResponse<String> a = http.send(HttpRequest.newBuilder(URI.create("http://" + directory.address() + "/v1/leases"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"keys\": 10}")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(a.statusCode()).as(a.body()).isEqualTo(200);
        long lastKey = JSON.readTree(a.body()).get("first").asLong() + 9;

        Map<String, Double> m = scrape();
        assertThat(gauge(m, "hayloft_directory_stores{state=\"UP\"}")).isEqualTo(4);
        assertThat(gauge(m, "hayloft_directory_stores{state=\"FAILED\"}")).isZero();
        assertThat(gauge(m, "hayloft_directory_volumes{state=\"WRITABLE\"}")).isEqualTo(2);
        assertThat(gauge(m, "hayloft_directory_volumes{state=\"ERASURE_CODED\"}")).isZero();
        assertThat(gauge(m, "hayloft_directory_store_free_bytes{rack=\"r2\",store=\"s2\"}")).isEqualTo((1L << 29) + 2);
        assertThat(gauge(m, "hayloft_directory_store_capacity_bytes{rack=\"r3\",store=\"s3\"}")).isEqualTo(1L << 30);
        assertThat(gauge(m, "hayloft_directory_store_heartbeat_age_seconds{rack=\"r0\",store=\"s0\"}")).isBetween(0.0, 30.0);
        assertThat(gauge(m, "hayloft_directory_key_high_water_mark")).isGreaterThan(lastKey);

        // Kill a store that holds a replica: the health checker fails it and its volumes turn read-only.
        int victim = Integer.parseInt(directory.directory().volumes().get(0).replicas().get(0).substring(1));
        long onVictim = directory.directory().volumes().stream().filter(v -> v.replicas().contains("s" + victim)).count();
        stores.get(victim).close();
        // The store turns FAILED a moment before its volumes turn read-only: wait for both.
        Await.untilTrue("store s" + victim + " FAILED and its volumes READ_ONLY in the gauges", Duration.ofSeconds(30), () -> {
            Map<String, Double> now = scrape();
            return gauge(now, "hayloft_directory_stores{state=\"FAILED\"}") >= 1
                    && gauge(now, "hayloft_directory_volumes{state=\"READ_ONLY\"}") == onVictim;
        });
        m = scrape();
        assertThat(gauge(m, "hayloft_directory_stores{state=\"UP\"}")).isEqualTo(3);
        assertThat(gauge(m, "hayloft_directory_volumes{state=\"READ_ONLY\"}")).isEqualTo(onVictim);
    }
}
