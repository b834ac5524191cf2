package io.hayloft.cold;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.Wire;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * The read side of the cluster over HTTP, all a cold reader needs: the directory's store list,
 * stripe maps and per-volume delete logs (docs/directory-api.md) and the stores' block reads (docs/store-api.md).
 * {@link ClusterBlockWrites} adds the block writes, the raid-node's {@code Cluster} the admin calls. Every failure is an
 * {@link IOException} naming the server and the request.
 *
 * <p>Thread-safe: the process's shared {@link ClusterRpc}; no other state.
 */
public class ClusterReads {

    public static final ObjectMapper JSON = new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    /**
     * A store as the directory sees it: {@code up} when it is UP or DRAINING (it serves reads and
     * holds its blocks), {@code draining} when an operator is moving everything off it, so it takes
     * no new block ({@link #placeable()}).
     */
    public record StoreRef(String id, String address, String rack, boolean up, boolean draining) {
        public StoreRef(String id, String address, String rack, boolean up) {
            this(id, address, rack, up, false);
        }

        /** May receive new blocks: up and not draining. */
        public boolean placeable() {
            return up && !draining;
        }
    }

    private final String directory;
    private final Set<String> directories;
    private final ClusterRpc.Servers directoryList; // null without a directory address
    private final String adminToken;
    private final ClusterRpc rpc;
    private final Duration timeout;

    /**
     * @param directory  the directory's host:port, or its group's replicas' as a comma-separated list
     * @param adminToken bearer token for the admin endpoints of the directory and the stores, or null
     * @param timeout    deadline of every call, retries included (a slow store past it counts as unavailable)
     * @param rpc        the process's transport ({@code HttpTransport#clusterRpc()}): its scheme, TLS and retries
     */
    public ClusterReads(String directory, String adminToken, Duration timeout, ClusterRpc rpc) {
        this(List.of((directory == null ? "" : directory).split(",")).stream().map(String::trim).toList(), adminToken, timeout, rpc);
    }

    /**
     * With several directory addresses: every directory call goes to the one that answered last and
     * on to the next when it cannot be reached ({@link ClusterRpc#send(ClusterRpc.Servers, String,
     * java.util.function.Function, boolean, Duration)}).
     *
     * @param directories the directory's addresses, host:port, in order of preference
     */
    public ClusterReads(List<String> directories, String adminToken, Duration timeout, ClusterRpc rpc) {
        this.rpc = Objects.requireNonNull(rpc, "rpc");
        List<String> given = directories.stream().filter(d -> d != null && !d.isBlank()).toList();
        this.directory = given.isEmpty() ? "" : given.get(0);
        this.directories = Set.copyOf(given);
        this.directoryList = given.isEmpty() ? null : rpc.servers(given);
        this.adminToken = adminToken;
        this.timeout = timeout;
    }

    // ------------------------------------------------------------------ directory

    /** Every registered store by id. */
    public Map<String, StoreRef> stores() throws IOException {
        Map<String, StoreRef> out = new HashMap<>();
        for (StoreInfo s : storeInfos()) {
            out.put(s.id(), new StoreRef(s.id(), s.address(), s.rack() == null ? "default" : s.rack(),
                    s.state() != null && s.state().serving(), s.state() != null && s.state().draining()));
        }
        return out;
    }

    /** Every store as {@code GET /v1/stores} answers it: state, heartbeat, failures. */
    public List<StoreInfo> storeInfos() throws IOException {
        return List.of(JSON.readValue(call("GET", dir("/v1/stores"), null, true), StoreInfo[].class));
    }

    /** The stripe map of a volume, or null when it has none. */
    public StripeMap stripeMap(int volume) throws IOException {
        return stripeMap(volume, false);
    }

    /**
     * The stripe map of a volume (planned or committed); when it has none, null, or with
     * {@code required} an {@link HttpStatusException} whose {@link HttpStatusException#errorName()}
     * says why: {@code NO_STRIPE_MAP} (not coded), {@code UNKNOWN_VOLUME}.
     */
    public StripeMap stripeMap(int volume, boolean required) throws IOException {
        byte[] b = call("GET", dir("/v1/volumes/" + volume + "/stripes"), null, required);
        return b == null ? null : JSON.readValue(b, StripeMap.class);
    }

    /**
     * {@code GET /v1/volumes/{volume}/deletes?after=&limit=}: the entries of the volume's delete log
     * after sequence number {@code after}, at most {@code limit} (1..10000); {@code more} says whether
     * others follow. An unknown volume is an {@link HttpStatusException} named {@code UNKNOWN_VOLUME}.
     */
    public Wire.DeleteLog deleteLog(int volume, long after, int limit) throws IOException {
        byte[] b = call("GET", dir("/v1/volumes/" + volume + "/deletes?after=" + after + "&limit=" + limit), null, true);
        return JSON.readValue(b, Wire.DeleteLog.class);
    }

    // ------------------------------------------------------------------ stores

    public byte[] readBlock(String store, String name, long offset, int length) throws IOException {
        return call("GET", store(store, "/blocks/" + name + "?offset=" + offset + "&length=" + length), null, true);
    }

    /**
     * As {@link #readBlock(String, String, long, int)} without blocking a thread: the future fails
     * with the same IOException (a timeout past the deadline included).
     */
    public CompletableFuture<byte[]> readBlockAsync(String store, String name, long offset, int length) {
        URI uri = store(store, "/blocks/" + name + "?offset=" + offset + "&length=" + length);
        return send(uri, "GET", request("GET", uri, null), true, timeout).handle((r, e) -> {
            if (e != null) {
                Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                throw new CompletionException(new IOException("GET " + uri + " failed: " + cause, cause));
            }
            try {
                return answer("GET", uri, r, true);
            } catch (IOException failed) {
                throw new CompletionException(failed);
            }
        });
    }

    /**
     * {@code length} bytes of block {@code name} at {@code offset} as a stream (the store streams
     * ranges over 1 MiB from the file): one request for the whole range, read a window at a time.
     * The caller closes it; closing it early drops the connection.
     *
     * @throws UnsupportedOperationException when the process's transport cannot stream
     */
    public InputStream openBlock(String store, String name, long offset, long length) throws IOException {
        String path = "/blocks/" + name + "?offset=" + offset + "&length=" + length;
        return rpc.openStream(store, "GET " + path, path, adminToken == null ? Map.of()
                : Map.of("Authorization", "Bearer " + adminToken));
    }

    public byte[] readBlock(String store, String name) throws IOException {
        return call("GET", store(store, "/blocks/" + name), null, true);
    }

    // ------------------------------------------------------------------ plumbing

    /** A directory URI (the first address): {@link #call} sends it to the directory's failover list. */
    protected final URI dir(String path) {
        return rpc.uri(directory, path);
    }

    protected final URI store(String address, String path) {
        return rpc.uri(address, path);
    }

    /**
     * One request. 2xx returns the body; 404 returns null unless {@code required}; anything else,
     * a timeout or a connection failure is an IOException naming the request and the server's message.
     */
    protected final byte[] call(String method, URI uri, byte[] body, boolean required) throws IOException {
        return call(method, uri, body, required, timeout);
    }

    protected final byte[] call(String method, URI uri, byte[] body, boolean required, Duration deadline) throws IOException {
        HttpResponse<byte[]> r;
        try {
            HttpRequest req = request(method, uri, body);
            if (!deadline.equals(timeout)) {
                req = HttpRequest.newBuilder(req, (n, v) -> true).timeout(deadline).build();
            }
            // Never retried once sent unless a GET, HEAD, PUT or DELETE: a POST (assign, commit, encoding) is not repeated.
            r = send(uri, method, req, false, deadline).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(method + " " + uri + " interrupted", e);
        } catch (ExecutionException e) {
            Throwable c = e.getCause() == null ? e : e.getCause();
            throw new IOException(method + " " + uri + " failed: " + c, c);
        }
        return answer(method, uri, r, required);
    }

    /** A request to a store, or to the directory through its failover list (a URI {@link #dir} made). */
    private CompletableFuture<HttpResponse<byte[]>> send(URI uri, String method, HttpRequest req, boolean idempotent,
                                                     Duration deadline) {
        String what = method + " " + uri.getRawPath();
        if (directoryList == null || !directories.contains(uri.getRawAuthority())) {
            return rpc.send(uri.getAuthority(), what, req, idempotent, deadline);
        }
        String pathAndQuery = uri.getRawPath() + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        return rpc.send(directoryList, what, a -> a.equals(uri.getRawAuthority()) ? req
                : HttpRequest.newBuilder(req, (n, v) -> true).uri(rpc.uri(a, pathAndQuery)).build(), idempotent, deadline);
    }

    private HttpRequest request(String method, URI uri, byte[] body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(timeout)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        if (body != null) {
            b.header("Content-Type", "application/octet-stream");
        }
        // The cluster's admin token opens the directory's and the stores' admin endpoints alike (seal, blocks).
        if (adminToken != null) {
            b.header("Authorization", "Bearer " + adminToken);
        }
        return b.build();
    }

    private static byte[] answer(String method, URI uri, HttpResponse<byte[]> r, boolean required) throws IOException {
        return answer(method, uri, r.statusCode(), r.body(), required);
    }

    private static byte[] answer(String method, URI uri, int code, byte[] body, boolean required) throws IOException {
        if (code / 100 == 2) {
            return body;
        }
        if (code == 404 && !required) {
            return null;
        }
        String name = null;
        String message = null;
        try {
            JsonNode error = JSON.readTree(body).path("error");
            name = error.path("name").isTextual() ? error.path("name").asText() : null;
            message = error.path("message").isTextual() ? error.path("message").asText() : null;
        } catch (IOException notJson) {
            // a body that is not our JSON error: no name
        }
        throw new HttpStatusException(code, name, message, method + " " + uri + " answered " + code + ": "
                + new String(body, StandardCharsets.UTF_8));
    }

    /**
     * Block {@code name} of {@code length} bytes on {@code store} written as ONE streamed
     * {@code PUT /blocks/<name>} with {@code Content-Length} (docs/store-api.md "Block files"): the
     * caller writes its bytes as it produces them, straight to the connection (no copy, no whole block
     * in memory); the store writes them as they arrive and, at the end, makes the block durable and
     * answers its length and CRC32C, which {@link StripeEncoder.BlockUpload#finish} compares with the
     * sender's (a mismatch is an IOException: the caller's verification fails and the block is
     * written again). {@link StripeEncoder.BlockUpload#close} before the end cuts the connection with
     * the body short, so the store keeps the block of that name as it was. (Not chunked with the CRC
     * in a trailer: a chunked body that is abandoned is still ended properly by the HTTP engine,
     * and the store would take the truncated block.) With the admin token, as the other block
     * writes. Returns null when the process's transport cannot stream a request body (the caller then
     * creates and appends).
     */
    public StripeEncoder.BlockUpload putBlockStream(String store, String name, long length) throws IOException {
        String path = "/blocks/" + name;
        ClusterRpc.StreamedRequest req;
        try {
            req = rpc.openRequest(store, "PUT " + path, "PUT", path,
                    adminToken == null ? Map.of() : Map.of("Authorization", "Bearer " + adminToken), length);
        } catch (UnsupportedOperationException e) {
            return null;
        }
        URI uri = store(store, path);
        return new StripeEncoder.BlockUpload() {
            private long written;
            private byte[] copy;

            @Override
            public void write(ByteBuffer chunk) throws IOException {
                int n = chunk.remaining();
                OutputStream out = req.body();
                if (chunk.hasArray()) {
                    out.write(chunk.array(), chunk.arrayOffset() + chunk.position(), n);
                } else { // a direct buffer: through a small heap window
                    if (copy == null) {
                        copy = new byte[64 * 1024];
                    }
                    ByteBuffer d = chunk.duplicate();
                    while (d.hasRemaining()) {
                        int m = Math.min(copy.length, d.remaining());
                        d.get(copy, 0, m);
                        out.write(copy, 0, m);
                    }
                }
                chunk.position(chunk.limit());
                written += n;
            }

            @Override
            public void finish(long crc32c) throws IOException {
                if (written != length) {
                    req.close();
                    throw new IOException("PUT " + uri + ": " + written + " bytes written of a block of " + length);
                }
                ClusterRpc.Answer a = req.finish(Map.of());
                byte[] body = answer("PUT", uri, a.status(), a.body(), true);
                JsonNode r = JSON.readTree(body);
                // a store older than streamed puts aggregates the body and answers no crc32c
                if (r.path("length").asLong(-1) != length || (r.has("crc32c") && r.path("crc32c").asLong(-1) != crc32c)) {
                    throw new IOException("PUT " + uri + " answered length " + r.path("length") + " and CRC32C "
                            + r.path("crc32c") + " for a block of " + length + " bytes with CRC32C " + crc32c);
                }
            }

            @Override
            public void close() {
                req.close();
            }
        };
    }

    /** A server answered with an error status. */
    public static final class HttpStatusException extends IOException {
        private final int status;
        private final String errorName;
        private final String serverMessage;

        HttpStatusException(int status, String errorName, String serverMessage, String message) {
            super(message);
            this.status = status;
            this.errorName = errorName;
            this.serverMessage = serverMessage;
        }

        public int status() {
            return status;
        }

        /** The error's name in the JSON error body ({@code {"error":{"name":...}}}), or null when there is none. */
        public String errorName() {
            return errorName;
        }

        /** The error's message in the JSON error body ({@code {"error":{"message":...}}}), or null when there is none. */
        public String serverMessage() {
            return serverMessage;
        }
    }
}
