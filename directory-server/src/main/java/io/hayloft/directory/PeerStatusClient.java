package io.hayloft.directory;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.serverkit.http.HttpResponses;
import java.io.IOException;
import io.hayloft.client.http.HttpTransport;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The directory's read-only calls to other Hayloft servers for the web console: the raid-node's
 * {@code GET /status} (docs/raid-api.md) and a cache node's {@code GET /stats} (docs/cache-api.md).
 * Every inter-server HTTP call of the console is here, on the directory's one {@link HttpTransport}
 * ({@code https://} with the directory's certificate when it has a trust store, like its other calls
 * to servers of its cluster); each call is bounded by {@code timeout} (connect plus answer, retries
 * included) and by {@link #MAX_BODY_BYTES}.
 *
 * <p>Thread-safe (the transport is).
 */
final class PeerStatusClient {

    /** A status body larger than this is refused rather than relayed to the console. */
    static final int MAX_BODY_BYTES = 4 << 20;

    private final HttpTransport http;
    private final Duration timeout;

    PeerStatusClient(Duration timeout) {
        this(HttpTransport.builder().connectTimeout(timeout).requestTimeout(timeout).build(), timeout);
    }

    PeerStatusClient(HttpTransport http, Duration timeout) {
        this.http = http;
        this.timeout = timeout;
    }

    /** The raid-node's {@code /status} as JSON. */
    CompletableFuture<JsonNode> raidStatus(String address) {
        return getJson(address, "/status");
    }

    /** Another directory replica's {@code GET /v1/group/self} as JSON. */
    CompletableFuture<JsonNode> replicaStatus(String address) {
        return getJson(address, "/v1/group/self");
    }

    /** A cache node's {@code /stats} as JSON. */
    CompletableFuture<JsonNode> cacheStats(String address) {
        return getJson(address, "/stats");
    }

    /**
     * {@code GET <scheme>://<address><path>}, completing with the parsed body of a 200, or exceptionally
     * (connection refused, timeout, another status, a body that is not JSON or too large) with an
     * exception whose message says which.
     */
    private CompletableFuture<JsonNode> getJson(String address, String path) {
        HttpRequest req;
        try {
            req = http.request(http.uri(address, path)).timeout(timeout).GET().build();
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(new IOException("bad address '" + address + "': " + e.getMessage()));
        }
        return http.call(address, "GET " + path, req, true, timeout, s -> true, HttpTransport.TYPED)
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
