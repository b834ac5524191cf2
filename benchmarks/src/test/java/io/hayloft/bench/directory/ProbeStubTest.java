package io.hayloft.bench.directory;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/** The simulated stores' health: every GET passes, a volume create never does. */
class ProbeStubTest {
    @Test
    void healthAnsweredCreatesRefused() throws Exception {
        try (ProbeStub stub = new ProbeStub()) {
            assertThat(stub.address()).matches("127\\.0\\.0\\.1:\\d+");
            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> health = http.send(HttpRequest.newBuilder(URI.create("http://" + stub.address() + "/health")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(health.statusCode()).isEqualTo(200);
            HttpResponse<String> create = http.send(HttpRequest.newBuilder(URI.create("http://" + stub.address() + "/admin/volumes/7"))
                    .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(create.statusCode()).isEqualTo(404);
            assertThat(stub.answered()).isEqualTo(1);
        }
    }
}
