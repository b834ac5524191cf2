package io.hayloft.directory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.format.wire.Wire;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import io.hayloft.testkit.Closing;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the tests of a real directory server with real store servers on loopback share: the servers
 * (closed after each test, the directory first), an HTTP/1.1 client and {@link #send}. The subclass
 * starts them the way it needs.
 */
abstract class DirectoryOverHttp {
    static final String ADMIN = "test-admin-token";
    static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    final List<StoreServer> stores = new ArrayList<>();
    DirectoryServer directory;

    @AfterEach
    void stop() throws Exception {
        Closing.all(directory, Closing.each(stores));
    }

    /**
     * A new directory ({@link #ADMIN}, health probes only every minute) and {@code n} stores that it
     * learns of from one heartbeat each, sent by the test: {@code s<i>} on rack {@code r<i>}.
     */
    void start(int n, boolean autoRestore) throws Exception {
        DirectoryConfig c = new DirectoryConfig();
        c.dataDir = dir.resolve("directory").toString();
        c.port = 0;
        c.init = true;
        c.probeIntervalMillis = 60_000;
        c.adminToken = ADMIN;
        c.autoRestore = autoRestore;
        directory = DirectoryServer.start(c);
        for (int i = 0; i < n; i++) {
            StoreConfig sc = new StoreConfig();
            sc.dataDirs = List.of(dir.resolve("store" + i).toString());
            sc.host = "127.0.0.1";
            sc.port = 0;
            StoreServer s = StoreServer.start(sc.validate());
            stores.add(s);
            Wire.Heartbeat hb = new Wire.Heartbeat("s" + i, "127.0.0.1:" + s.port(), "r" + i, 1L << 30, 1L << 30, List.of());
            send("POST", "/v1/heartbeat", JSON.writeValueAsString(hb), 200, ADMIN);
        }
    }

    /** One request to the directory; asserts the status and returns the JSON body (null when empty). */
    JsonNode send(String method, String path, String body, int expectStatus, String bearer) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + directory.address() + path))
                .timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (bearer != null) {
            b.header("Authorization", "Bearer " + bearer);
        }
        HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as("%s %s -> %s", method, path, r.body()).isEqualTo(expectStatus);
        return r.body().isEmpty() ? null : JSON.readTree(r.body());
    }
}
