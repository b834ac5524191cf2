package io.hayloft.client.store;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.client.PhotoStat;
import io.hayloft.client.RemoteException.Kind;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.format.wire.BatchBody;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.format.wire.WriteToken;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpRequest.BodyPublisher;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * A low-level asynchronous client for the store server's HTTP API: one call per method, no retries,
 * no failover (that is {@link io.hayloft.client.HayloftClient}'s job). Stores are named by address
 * ({@code host:port}); reads take a URL prefix as a photo's read places list it
 * (a plain address works too).
 *
 * <p>The needle and photo calls go through the transport's data engine ({@link HttpTransport#exchange},
 * Apache HttpClient 5 classic); the {@code ...Now} methods make them on the calling thread.
 *
 * <p>Every method but the {@code ...Now} ones returns at once; its future completes on the transport's I/O threads with the result,
 * or exceptionally with a {@link StoreException} ({@link NotFoundException} for 404) that names the
 * store, the call and what went wrong, including a store that answers garbage (a non-JSON error
 * body, a success body that is not the expected JSON or does not confirm what was written, a body
 * shorter than its {@code Content-Length}).
 *
 * <p>Thread-safe: share one instance.
 */
public final class StoreClient {
    private static final String TOKEN = WriteToken.HEADER;
    private static final HttpTransport.ErrorFactory ERRORS = StoreException::of;

    private final HttpTransport http;

    public StoreClient(HttpTransport http) {
        this.http = Objects.requireNonNull(http, "http");
    }

    /** A client with its own default transport. */
    public static StoreClient create() {
        return new StoreClient(HttpTransport.create());
    }

    public HttpTransport transport() {
        return http;
    }

    /**
     * Creates physical volume {@code volume} on the store ({@code POST /admin/volumes/<id>}). A volume
     * that exists already counts as success, so a restarted placement may call this again.
     */
    public CompletableFuture<Void> createVolume(String address, int volume) {
        checkVolume(volume);
        String path = "/admin/volumes/" + volume;
        String what = "POST " + path;
        HttpRequest req = http.request(http.uri(address, path)).POST(BodyPublishers.noBody()).build();
        return http.send(address, what, req, s -> true, ERRORS).thenApply(resp -> {
            int s = resp.statusCode();
            if (s == 200 || s == 201) {
                return null;
            }
            StoreException e = (StoreException) HttpTransport.errorAnswer(address, what, s, resp.body(), ERRORS);
            if (e.code() == StoreException.VOLUME_EXISTS) {
                return null;
            }
            throw e;
        });
    }

    /**
     * Reads a needle: {@code GET <urlPrefix>/<volume>/<key>/<alt>?cookie=<hex>}. The store checks the
     * cookie and the CRC; a wrong cookie fails with {@link NotFoundException} like a missing needle.
     */
    public CompletableFuture<byte[]> read(String urlPrefix, PhotoId id) {
        return http.exchangeAsync(urlPrefix, "GET " + id.needlePath(), "GET", id.needlePath(), null, (byte[]) null,
                s -> s == 200, ERRORS).thenApply(HttpTransport.Response::body);
    }

    /**
     * {@link #read} on the calling thread (the blocking API's path: the caller's thread does the
     * I/O); throws what {@link #read}'s future fails with.
     */
    public byte[] readNow(String urlPrefix, PhotoId id) {
        return http.exchange(urlPrefix, "GET " + id.needlePath(), "GET", id.needlePath(), null, (byte[]) null,
                s -> s == 200, ERRORS).body();
    }

    /**
     * Reads a needle as a stream, for large objects: the future completes when the headers arrived;
     * the caller must close the stream. Errors (404 and others) fail the future as for {@link #read}.
     */
    public CompletableFuture<InputStream> readStream(String urlPrefix, PhotoId id) {
        http.baseUrl(urlPrefix);
        return CompletableFuture.supplyAsync(() -> readStreamNow(urlPrefix, id), http.ioExecutor());
    }

    /** {@link #readStream} on the calling thread. */
    public InputStream readStreamNow(String urlPrefix, PhotoId id) {
        return http.openStream(urlPrefix, "GET " + id.needlePath(), id.needlePath(), ERRORS);
    }

    /** Writes one needle ({@code PUT /<volume>/<key>/<alt>?cookie=<hex>}) with the write token. */
    public CompletableFuture<Void> write(String address, PhotoId id, byte[] data, String token) {
        Objects.requireNonNull(data, "data");
        String what = "PUT " + id.needlePath();
        return http.exchangeAsync(address, what, "PUT", id.needlePath(), tokenHeader(token), data, s -> s == 201 || s == 200, ERRORS)
                .thenApply(resp -> checkSize(address, what, resp, data.length));
    }

    /** {@link #write(String, PhotoId, byte[], String)} on the calling thread. */
    public void writeNow(String address, PhotoId id, byte[] data, String token) {
        Objects.requireNonNull(data, "data");
        String what = "PUT " + id.needlePath();
        checkSize(address, what, http.exchange(address, what, "PUT", id.needlePath(), tokenHeader(token), data,
                s -> s == 201 || s == 200, ERRORS), data.length);
    }

    /** Writes one needle whose data is a file, streamed from disk (the file is read once per call). */
    public CompletableFuture<Void> write(String address, PhotoId id, Path file, String token) {
        long size;
        try {
            if (!Files.isReadable(file) || Files.isDirectory(file)) {
                throw new FileNotFoundException(file.toString());
            }
            size = Files.size(file);
        } catch (FileNotFoundException | NoSuchFileException e) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("no such file: " + file, e));
        } catch (IOException e) {
            return CompletableFuture.failedFuture(new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e));
        }
        String what = "PUT " + id.needlePath();
        return http.exchangeAsync(address, what, "PUT", id.needlePath(), tokenHeader(token), file, s -> s == 201 || s == 200, ERRORS)
                .thenApply(resp -> checkSize(address, what, resp, size));
    }

    /** The store's acknowledgement of a PUT must name the size sent. */
    private Void checkSize(String address, String what, HttpTransport.Response resp, long size) {
        JsonNode ack = http.json(address, what, resp.body(), JsonNode.class, ERRORS);
        if (!ack.path("size").canConvertToLong() || ack.path("size").asLong() != size) {
            throw new StoreException(address, Kind.BAD_RESPONSE, resp.status(), 0, null, null,
                    address + ": " + what + " acknowledged " + ack.path("size") + " bytes, sent " + size, null);
        }
        return null;
    }

    /**
     * Writes several needles of one volume in one request, made durable by the store with one fsync
     * ({@code POST /<volume>/batch}, body as in {@link BatchBody}). All or nothing on that store.
     */
    public CompletableFuture<Void> writeBatch(String address, int volume, List<NeedleData> needles, String token) {
        checkVolume(volume);
        byte[] body = BatchBody.encode(needles);
        return writeBatch(address, volume, body, needles.size(), token);
    }

    /**
     * Like {@link #writeBatch(String, int, List, String)} with a body already encoded by
     * {@link BatchBody#encode}, so that one encoding serves every replica.
     */
    public CompletableFuture<Void> writeBatch(String address, int volume, byte[] body, int count, String token) {
        checkVolume(volume);
        String path = "/" + volume + "/batch";
        String what = "POST " + path + " (" + count + " needles)";
        return http.exchangeAsync(address, what, "POST", path, tokenHeader(token), body, s -> s == 201 || s == 200, ERRORS).thenApply(resp -> {
            JsonNode ack = http.json(address, what, resp.body(), JsonNode.class, ERRORS);
            if (ack.path("written").asLong(-1) != count) {
                throw new StoreException(address, Kind.BAD_RESPONSE, resp.status(), 0, null, null,
                        address + ": " + what + " acknowledged " + ack.path("written") + " needles written, sent " + count, null);
            }
            return null;
        });
    }

    /** Deletes one needle ({@code DELETE /<volume>/<key>/<alt>?cookie=<hex>}) with the write token. */
    public CompletableFuture<Void> delete(String address, PhotoId id, String token) {
        String what = "DELETE " + id.needlePath();
        return http.exchangeAsync(address, what, "DELETE", id.needlePath(), tokenHeader(token), (byte[]) null,
                s -> s == 204 || s == 200, ERRORS).thenApply(r -> null);
    }

    /**
     * The live alternate keys of photo {@code key} whose cookie is {@code cookie}, with their sizes:
     * {@code GET /<volume>/<key>?cookie=<hex>}. Fails with {@link NotFoundException} when there is
     * none (a wrong cookie looks exactly like a missing photo).
     */
    public CompletableFuture<List<PhotoStat.Alt>> photo(String address, int volume, long key, long cookie) {
        checkVolume(volume);
        String path = keyPath(volume, key, cookie);
        String what = "GET " + path;
        return http.exchangeAsync(address, what, "GET", path, null, (byte[]) null, s -> s == 200, ERRORS).thenApply(resp -> {
            JsonNode body = http.json(address, what, resp.body(), JsonNode.class, ERRORS);
            JsonNode alts = body.path("alts");
            if (!alts.isArray()) {
                throw new StoreException(address, Kind.BAD_RESPONSE, resp.status(), 0, null, null,
                        address + ": " + what + " answered no \"alts\" array", null);
            }
            List<PhotoStat.Alt> out = new ArrayList<>(alts.size());
            for (JsonNode a : alts) {
                long alt = a.path("alt").asLong(-1);
                long size = a.path("size").asLong(-1);
                if (!a.path("alt").canConvertToLong() || alt < Integer.MIN_VALUE || alt > 0xFFFF_FFFFL || size < 0) {
                    throw new StoreException(address, Kind.BAD_RESPONSE, resp.status(), 0, null, null,
                            address + ": " + what + " answered a malformed alternate " + a, null);
                }
                out.add(new PhotoStat.Alt((int) alt, size));
            }
            return out;
        });
    }

    /**
     * Deletes every live alternate key of photo {@code key} whose cookie is {@code cookie}
     * ({@code DELETE /<volume>/<key>?cookie=<hex>}, with the delete-log token); completes with the
     * alternate keys deleted. Fails with {@link NotFoundException} when there was none.
     */
    public CompletableFuture<List<Integer>> deleteKey(String address, int volume, long key, long cookie, String token) {
        checkVolume(volume);
        String path = keyPath(volume, key, cookie);
        String what = "DELETE " + path;
        return http.exchangeAsync(address, what, "DELETE", path, tokenHeader(token), (byte[]) null,
                s -> s == 200 || s == 204, ERRORS).thenApply(resp -> {
            List<Integer> out = new ArrayList<>();
            if (resp.status() == 204 || resp.body().length == 0) {
                return out;
            }
            JsonNode deleted = http.json(address, what, resp.body(), JsonNode.class, ERRORS).path("deleted");
            for (JsonNode a : deleted) {
                out.add((int) a.asLong());
            }
            return out;
        });
    }

    /** {@code /<volume>/<key>?cookie=<16 hex digits>}: a photo (every alternate key) on a store. */
    private static String keyPath(int volume, long key, long cookie) {
        if (key < 0) {
            throw new IllegalArgumentException("key must be >= 0, was " + key);
        }
        return "/" + volume + "/" + key + "?cookie=" + PhotoId.hex16(cookie);
    }

    /** The store's {@code GET /health} answer. */
    public CompletableFuture<JsonNode> health(String address) {
        return getJson(address, "/health");
    }

    /** The store's {@code GET /admin/volumes} answer: {@code {"volumes":[{id, sizeBytes, readOnly, ...}...]}}. */
    public CompletableFuture<JsonNode> volumes(String address) {
        return getJson(address, "/admin/volumes");
    }

    /** The store's {@code GET /admin/volumes/<id>} answer. */
    public CompletableFuture<JsonNode> volume(String address, int volume) {
        checkVolume(volume);
        return getJson(address, "/admin/volumes/" + volume);
    }

    /** Seals a volume: it takes no more writes ({@code POST /admin/volumes/<id>/seal}). */
    public CompletableFuture<JsonNode> seal(String address, int volume) {
        checkVolume(volume);
        String path = "/admin/volumes/" + volume + "/seal";
        HttpRequest req = http.request(http.uri(address, path)).POST(BodyPublishers.noBody()).build();
        return http.send(address, "POST " + path, req, s -> s == 200, ERRORS)
                .thenApply(resp -> http.json(address, "POST " + path, resp.body(), JsonNode.class, ERRORS));
    }

    private CompletableFuture<JsonNode> getJson(String address, String path) {
        URI uri = http.uri(address, path);
        HttpRequest req = http.request(uri).GET().build();
        return http.send(address, "GET " + path, req, s -> s == 200, ERRORS)
                .thenApply(resp -> http.json(address, "GET " + path, resp.body(), JsonNode.class, ERRORS));
    }

    /** The write token as a request header (none when the cluster is open). */
    private static Map<String, String> tokenHeader(String token) {
        return token == null || token.isEmpty() ? null : Map.of(TOKEN, token);
    }

    private static void token(HttpRequest.Builder b, String token) {
        if (token != null && !token.isEmpty()) {
            b.header(TOKEN, token);
        }
    }

    private static void checkVolume(int volume) {
        if (volume < 1) {
            throw new IllegalArgumentException("volume must be >= 1, was " + volume);
        }
    }
}
