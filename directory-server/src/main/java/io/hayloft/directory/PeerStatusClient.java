package io.hayloft.directory;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.common.http.HttpResponses;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The directory's read-only calls to other Hayloft servers for the web console: the raid-node's
 * {@code GET /status} (docs/raid-api.md) and a cache node's {@code GET /stats} (docs/cache-api.md).
 * Every inter-server HTTP call of the console is here, so that it can move to the common RPC client
 * in one place. Plain HTTP, like the directory's other calls to servers of its cluster; each call
 * is bounded by {@code timeout} (connect plus answer) and by {@link #MAX_BODY_BYTES}.
 *
 * <p>Thread-safe (one pooled {@link HttpClient}).
 */
final class PeerStatusClient {

    /** A status body larger than this is refused rather than relayed to the console. */
    static final int MAX_BODY_BYTES = 4 << 20;

    private final HttpClient http;
    private final Duration timeout;

    PeerStatusClient(Duration timeout) {
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(timeout).build();
        this.timeout = timeout;
    }

    /** The raid-node's {@code /status} as JSON. */
    CompletableFuture<JsonNode> raidStatus(String address) {
        return getJson(address, "/status");
    }

    /** A cache node's {@code /stats} as JSON. */
    CompletableFuture<JsonNode> cacheStats(String address) {
        return getJson(address, "/stats");
    }

    /**
     * {@code GET http://<address><path>}, completing with the parsed body of a 200, or exceptionally
     * (connection refused, timeout, another status, a body that is not JSON or too large) with an
     * {@link IOException} whose message says which.
     */
    private CompletableFuture<JsonNode> getJson(String address, String path) {
        HttpRequest req;
        try {
            req = HttpRequest.newBuilder(URI.create("http://" + address + path)).timeout(timeout).GET().build();
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(new IOException("bad address '" + address + "': " + e.getMessage()));
        }
        return http.sendAsync(req, HttpResponse.BodyHandlers.ofByteArray())
                .orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS)
                .thenApply(r -> {
                    if (r.statusCode() != 200) {
                        throw new IllegalStateException("GET " + path + " answered " + r.statusCode());
                    }
                    if (r.body().length > MAX_BODY_BYTES) {
                        throw new IllegalStateException("GET " + path + " answered " + r.body().length + " bytes, over "
                                + MAX_BODY_BYTES);
                    }
                    try {
                        return HttpResponses.JSON.readTree(r.body());
                    } catch (IOException e) {
                        throw new IllegalStateException("GET " + path + " answered malformed JSON");
                    }
                });
    }
}
