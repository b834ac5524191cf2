package io.hayloft.directory;

import io.hayloft.format.directory.RaidLease;
import java.time.ZoneId;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.format.errors.ApiException;
import io.hayloft.directory.meta.MetaStore;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The raid lease: one holder at a time, renewal, expiry (on a controlled clock), release, epochs,
 * persistence across a reopen of the real RocksDB store, and the HTTP API with its 4xx errors.
 */
class RaidLeaseTest {

    static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    /** A clock the test moves by hand. */
    static final class ManualClock extends Clock {
        final AtomicLong millis = new AtomicLong(1_000_000);

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis.get());
        }
    }

    @Test
    void oneHolderAtATimeUntilExpiryOrRelease() {
        ManualClock clock = new ManualClock();
        try (MetaStore meta = MetaStore.open(dir.resolve("meta"), true)) {
            RaidLeases leases = new RaidLeases(meta, clock);
            assertThat(leases.current().holder()).isNull();
            RaidLease a = leases.acquire("raid-a", 10_000);
            assertThat(a).isEqualTo(new RaidLease("raid-a", 1_010_000, 1));
            assertThatThrownBy(() -> leases.acquire("raid-b", 10_000)).isInstanceOf(ApiException.class)
                    .hasMessageContaining("held by raid-a").hasMessageContaining("10000 ms from now");
            clock.millis.addAndGet(5_000);
            assertThat(leases.acquire("raid-a", 10_000)).isEqualTo(new RaidLease("raid-a", 1_015_000, 1));
            clock.millis.addAndGet(10_000); // expired exactly now
            assertThat(leases.current().holder()).isNull();
            RaidLease b = leases.acquire("raid-b", 1_000);
            assertThat(b.holder()).isEqualTo("raid-b");
            assertThat(b.epoch()).isEqualTo(2);
            assertThatThrownBy(() -> leases.release("raid-a")).isInstanceOf(ApiException.class).hasMessageContaining("held by raid-b");
            assertThat(leases.release("raid-b").holder()).isNull();
            assertThat(leases.release("raid-b").holder()).isNull(); // idempotent
            assertThat(leases.acquire("raid-a", 1_000).epoch()).isEqualTo(3);
            assertThatThrownBy(() -> leases.acquire(" ", 1_000)).hasMessageContaining("holder");
            assertThatThrownBy(() -> leases.acquire("x", 0)).hasMessageContaining("ttlMillis must be in 1..3600000, was 0");
        }
        try (MetaStore meta = MetaStore.open(dir.resolve("meta"), false)) {
            RaidLeases leases = new RaidLeases(meta, clock);
            assertThat(leases.current()).isEqualTo(new RaidLease("raid-a", clock.millis() + 1_000, 3));
        }
    }

    @Test
    void httpApi() throws Exception {
        DirectoryConfig c = new DirectoryConfig();
        c.dataDir = dir.resolve("directory").toString();
        c.port = 0;
        c.init = true;
        c.probeIntervalMillis = 60_000;
        c.adminToken = "admin";
        try (DirectoryServer d = DirectoryServer.start(c)) {
            HttpClient http = HttpClient.newHttpClient();
            assertThat(send(http, d, "GET", "/v1/raid-lease", null, null, 200).get("holder").isNull()).isTrue();
            send(http, d, "POST", "/v1/raid-lease", "{\"holder\":\"a\",\"ttlMillis\":60000}", null, 401);
            JsonNode got = send(http, d, "POST", "/v1/raid-lease", "{\"holder\":\"a\",\"ttlMillis\":60000}", "admin", 200);
            assertThat(got.get("holder").asText()).isEqualTo("a");
            JsonNode held = send(http, d, "POST", "/v1/raid-lease", "{\"holder\":\"b\",\"ttlMillis\":60000}", "admin", 409);
            assertThat(held.at("/error/code").asInt()).isEqualTo(210);
            assertThat(held.at("/error/message").asText()).contains("held by a");
            assertThat(send(http, d, "POST", "/v1/raid-lease", "{\"holder\":\"b\"}", "admin", 400).at("/error/message").asText())
                    .contains("ttlMillis");
            assertThat(send(http, d, "POST", "/v1/raid-lease", "{\"holder\":\"b\",\"ttlMillis\":-5}", "admin", 400)
                    .at("/error/message").asText()).contains("was -5");
            send(http, d, "DELETE", "/v1/raid-lease", null, "admin", 400);
            send(http, d, "DELETE", "/v1/raid-lease?holder=b", null, "admin", 409);
            assertThat(send(http, d, "DELETE", "/v1/raid-lease?holder=a", null, "admin", 200).get("holder").isNull()).isTrue();
            assertThat(send(http, d, "POST", "/v1/raid-lease", "{\"holder\":\"b\",\"ttlMillis\":60000}", "admin", 200)
                    .get("epoch").asLong()).isEqualTo(2);
            send(http, d, "PUT", "/v1/raid-lease", "{}", "admin", 405);
        }
    }

    private static JsonNode send(HttpClient http, DirectoryServer d, String method, String path, String body, String bearer,
                                 int expect) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + d.address() + path)).timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (bearer != null) {
            b.header("Authorization", "Bearer " + bearer);
        }
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as("%s %s -> %s", method, path, r.body()).isEqualTo(expect);
        return JSON.readTree(r.body());
    }
}
