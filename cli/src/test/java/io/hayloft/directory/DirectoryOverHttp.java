package io.hayloft.directory;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.store.StoreServer;
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
        if (directory != null) {
            directory.close();
        }
        for (StoreServer s : stores) {
            s.close();
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
