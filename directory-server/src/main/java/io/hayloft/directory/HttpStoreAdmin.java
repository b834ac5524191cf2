package io.hayloft.directory;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * {@link StoreAdmin} over the stores' HTTP API (docs/store-api.md): {@code POST /admin/volumes/<id>}
 * to create a replica; {@code GET /health} and a raw read of a volume's first bytes to probe. Uses a
 * pooled {@link HttpClient}; thread-safe.
 */
public final class HttpStoreAdmin implements StoreAdmin {

    private final HttpClient http;
    private final Duration timeout;
    private final String adminToken;

    public HttpStoreAdmin(Duration timeout, String adminToken) {
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(timeout).build();
        this.timeout = timeout;
        this.adminToken = adminToken;
    }

    @Override
    public CompletableFuture<Void> createVolume(String address, int volume) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + address + "/admin/volumes/" + volume))
                .timeout(timeout).POST(HttpRequest.BodyPublishers.noBody());
        if (adminToken != null && !adminToken.isEmpty()) {
            b.header("Authorization", "Bearer " + adminToken);
        }
        return http.sendAsync(b.build(), HttpResponse.BodyHandlers.ofString()).thenApply(r -> {
            // 201 created; 409 means a retry finds the replica already there, which is what we want.
            if (r.statusCode() != 201 && r.statusCode() != 409) {
                throw new IllegalStateException("store " + address + " answered " + r.statusCode() + ": " + r.body());
            }
            return null;
        });
    }

    @Override
    public CompletableFuture<Void> probe(String address, int volume) {
        CompletableFuture<Void> health = get("http://" + address + "/health", address);
        if (volume <= 0) {
            return health;
        }
        return health.thenCompose(v -> get("http://" + address + "/volumes/" + volume + "/raw?offset=0&length=8", address));
    }

    private CompletableFuture<Void> get(String url, String address) {
        HttpRequest req = HttpRequest.newBuilder(URI.create(url)).timeout(timeout).GET().build();
        return http.sendAsync(req, HttpResponse.BodyHandlers.ofByteArray()).thenApply(r -> {
            if (r.statusCode() != 200) {
                throw new IllegalStateException("store " + address + " answered " + r.statusCode() + " to " + url);
            }
            return null;
        });
    }
}
