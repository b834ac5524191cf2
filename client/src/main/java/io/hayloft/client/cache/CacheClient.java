package io.hayloft.client.cache;

import io.hayloft.client.RemoteException;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.client.store.StoreClient;
import io.hayloft.format.ring.CacheRouting;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.format.wire.WriteToken;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.LongAdder;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's side of the cache tier (docs/cache-api.md): routes a photo key to its cache node on
 * the consistent-hash ring ({@link CacheRouting}, the same one the directory uses), with the key's
 * gutter node for when that node is down; pushes fresh uploads into the key's node (proactive
 * push) and invalidates deleted photos there and in the gutter. Pushes and invalidations are best
 * effort: a cache node that is down or refuses never fails the caller's put or delete (the
 * directory has already been told; the gutter's entries expire quickly); failures are counted.
 *
 * <p>Thread-safe: immutable apart from its counters.
 */
public final class CacheClient {
    private static final Logger LOG = LoggerFactory.getLogger(CacheClient.class);
    private static final HttpTransport.ErrorFactory ERRORS = RemoteException::new;

    private final HttpTransport http;
    private final StoreClient stores;
    private final CacheRouting routing;
    private final LongAdder failures = new LongAdder();

    /**
     * @param cacheNodes primary cache nodes ({@code host:port}), at least one
     * @param gutterNodes gutter nodes, possibly none
     */
    public CacheClient(StoreClient stores, List<String> cacheNodes, List<String> gutterNodes) {
        this.stores = Objects.requireNonNull(stores, "stores");
        this.http = stores.transport();
        this.routing = new CacheRouting(cacheNodes, gutterNodes == null ? List.of() : gutterNodes);
    }

    public CacheRouting routing() {
        return routing;
    }

    /** Pushes and invalidations that failed so far (the cache node was down or refused). */
    public long failures() {
        return failures.sum();
    }

    /**
     * Reads a photo through its cache node, filled from {@code store} on a miss; when that node
     * cannot be reached or fails, through its gutter node. A 404 is not retried elsewhere.
     */
    public CompletableFuture<byte[]> read(String store, PhotoId id) {
        List<String> prefixes = routing.urlPrefixes(id.key(), store, http.scheme());
        return readFrom(prefixes, 0, id);
    }

    private CompletableFuture<byte[]> readFrom(List<String> prefixes, int i, PhotoId id) {
        return stores.read(prefixes.get(i), id).handle((data, t) -> {
            if (t == null) {
                return CompletableFuture.completedFuture(data);
            }
            Throwable c = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
            boolean nodeTrouble = c instanceof RemoteException r && (r.kind() != RemoteException.Kind.ERROR || r.httpStatus() >= 500);
            if (nodeTrouble && i + 1 < prefixes.size()) {
                return readFrom(prefixes, i + 1, id);
            }
            return CompletableFuture.<byte[]>failedFuture(c);
        }).thenCompose(f -> f);
    }

    /**
     * Pushes a freshly written needle into its cache node, with its CRC32C and (in a secured
     * cluster) the write token of the upload. Completes with true when the node stored it, false
     * when it did not (down, refused, or the needle was just invalidated); never fails.
     */
    public CompletableFuture<Boolean> push(String store, PhotoId id, byte[] data, String token) {
        CRC32C crc = new CRC32C();
        crc.update(data, 0, data.length);
        String node = routing.nodeFor(id.key());
        String path = "/" + store + id.needlePath();
        HttpRequest.Builder b = http.request(http.uri(node, path)).PUT(BodyPublishers.ofByteArray(data))
                .header("X-Hayloft-Crc32c", String.format(Locale.ROOT, "%08x", crc.getValue()));
        if (token != null) {
            b.header(WriteToken.HEADER, token);
        }
        return http.send(node, "PUT " + path, b.build(), s -> s == 201 || s == 202, ERRORS)
                .handle((resp, t) -> {
                    if (t != null) {
                        failures.increment();
                        LOG.debug("push of {} to cache node {} failed: {}", id, node, t.toString());
                        return false;
                    }
                    return resp.statusCode() == 201;
                });
    }

    /**
     * Invalidates a photo's needle in its cache node and its gutter node, cancelling any fill in
     * flight. Completes when both answered or failed; never fails.
     */
    public CompletableFuture<Void> invalidate(String store, PhotoId id, String token) {
        List<CompletableFuture<Void>> calls = new ArrayList<>(2);
        String path = "/" + store + id.needlePath();
        for (String node : routing.nodesFor(id.key())) {
            HttpRequest.Builder b = http.request(http.uri(node, path)).DELETE();
            if (token != null) {
                b.header(WriteToken.HEADER, token);
            }
            calls.add(http.send(node, "DELETE " + path, b.build(), s -> s == 204, ERRORS).handle((resp, t) -> {
                if (t != null) {
                    failures.increment();
                    LOG.debug("invalidation of {} on cache node {} failed: {}", id, node, t.toString());
                }
                return null;
            }));
        }
        return CompletableFuture.allOf(calls.toArray(new CompletableFuture<?>[0]));
    }
}
