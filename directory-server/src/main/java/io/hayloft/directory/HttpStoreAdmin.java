package io.hayloft.directory;

import io.hayloft.client.http.HttpTransport;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * {@link StoreAdmin} over the stores' HTTP API (docs/store-api.md): {@code POST /admin/volumes/<id>}
 * to create a replica; {@code GET /health} and a raw read of a volume's first bytes to probe. On the
 * directory's one {@link HttpTransport} ({@code https://} and its certificate when the directory has
 * a trust store). A create is never retried once sent (a retry could not tell its own replica from
 * another's; the directory's next round does it again); the probes are GETs, retried within the
 * probe timeout on connection failures. Thread-safe.
 */
public final class HttpStoreAdmin implements StoreAdmin {

    private final HttpTransport http;
    private final Duration timeout;
    private final String adminToken;

    /** Plain HTTP, a transport of its own. */
    public HttpStoreAdmin(Duration timeout, String adminToken) {
        this(HttpTransport.builder().connectTimeout(timeout).requestTimeout(timeout).build(), timeout, adminToken);
    }

    /**
     * @param timeout deadline of each probe step; a create gets {@value #CREATE_FACTOR} times as
     *                long (the directory waits that long for it), since a store creates and fsyncs
     *                the volume's files and its applied-deletes file before it answers
     */
    public HttpStoreAdmin(HttpTransport http, Duration timeout, String adminToken) {
        this.http = http;
        this.timeout = timeout;
        this.adminToken = adminToken;
    }

    /** How many probe timeouts a volume creation may take (Directory.createVolumes waits as long). */
    static final int CREATE_FACTOR = 5;

    @Override
    public CompletableFuture<Void> createVolume(String address, int volume) {
        String path = "/admin/volumes/" + volume;
        Duration timeout = this.timeout.multipliedBy(CREATE_FACTOR);
        HttpRequest.Builder b = http.request(http.uri(address, path)).timeout(timeout).POST(HttpRequest.BodyPublishers.noBody());
        if (adminToken != null && !adminToken.isEmpty()) {
            b.header("Authorization", "Bearer " + adminToken);
        }
        // 201 created; 409 means a retry finds the replica already there, which is what we want.
        return http.call(address, "POST " + path, b.build(), false, timeout, s -> s == 201 || s == 409, HttpTransport.TYPED)
                .thenApply(r -> null);
    }

    @Override
    public CompletableFuture<Void> probe(String address, int volume) {
        CompletableFuture<Void> health = get(address, "/health");
        if (volume <= 0) {
            return health;
        }
        return health.thenCompose(v -> get(address, "/volumes/" + volume + "/raw?offset=0&length=8"));
    }

    private CompletableFuture<Void> get(String address, String path) {
        HttpRequest req = http.request(http.uri(address, path)).timeout(timeout).GET().build();
        return http.call(address, "GET " + path, req, true, timeout, s -> true, HttpTransport.TYPED).thenApply(r -> {
            if (r.statusCode() != 200) {
                throw new IllegalStateException("store " + address + " answered " + r.statusCode() + " to GET " + path + ": "
                        + new String(r.body(), 0, Math.min(200, r.body().length), StandardCharsets.UTF_8));
            }
            return null;
        });
    }
}
