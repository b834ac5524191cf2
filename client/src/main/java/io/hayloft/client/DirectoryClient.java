package io.hayloft.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import io.hayloft.client.RemoteException.Kind;
import io.hayloft.client.http.AddressList;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.client.http.RetryPolicy;
import io.hayloft.format.directory.BackupManifest;
import io.hayloft.format.directory.GroupInfo;
import io.hayloft.format.directory.Health;
import io.hayloft.format.directory.RaidHoldRelease;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.StoreState;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.wire.Wire;
import java.net.URLEncoder;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntPredicate;

/**
 * An asynchronous client for the directory's HTTP API ({@code docs/directory-api.md}): leases, the
 * volume map, delete logs, heartbeats, volumes and stores, and the admin calls (the directory keeps no
 * per-photo state, so there is no per-photo call). One call per method, no retries
 * with backoff (that is {@link HayloftClient}'s job); when several directory addresses are given, a
 * call that finds a directory unreachable or timing out moves on to the next one, and later calls
 * start from the last one that answered: the addresses are an {@link AddressList}, the calls the
 * transport's {@link HttpTransport#call(AddressList, String, java.util.function.Function, boolean,
 * java.time.Duration, IntPredicate, HttpTransport.ErrorFactory, RetryPolicy) call} with one attempt per
 * address ({@link RetryPolicy#standard}, every request counted as one that may be repeated: a change
 * carries a request id, {@link #REQUEST_ID_HEADER}, so the directory applies it once). With
 * the replicas of a directory group as the addresses, a follower's "not the leader, ask X" (421) takes
 * the call to X at once and X is preferred afterwards, and "no leader" (503 {@code NO_LEADER}, an
 * election) moves on round the replicas with a backoff: the {@link RetryPolicy}'s leader rules.
 * Answers are the typed records of {@code io.hayloft.format.directory} and {@link Wire} (unknown
 * fields ignored): callers never parse the directory's JSON themselves.
 *
 * <p>Every future completes on the transport's executor, or exceptionally with a
 * {@link DirectoryException} naming the directory, the call and what went wrong.
 *
 * <p>Thread-safe: share one instance.
 */
public final class DirectoryClient {
    /**
     * The header naming a change's request id: every attempt of one call (the next replica after a
     * lost answer, the leader after a follower's 421) sends the same id, and the directory applies a
     * change of that id once and answers a repeat with the first answer (docs/directory-api.md
     * "Request ids").
     */
    public static final String REQUEST_ID_HEADER = "Hayloft-Request-Id";
    private static final HttpTransport.ErrorFactory ERRORS = DirectoryException::new;
    private static final TypeReference<List<VolumeInfo>> VOLUMES = new TypeReference<>() { };
    private static final TypeReference<List<StoreInfo>> STORES = new TypeReference<>() { };

    private final HttpTransport http;
    private final AddressList addresses;
    private final String adminToken;
    private final RetryPolicy policy;
    private final Duration deadline;

    /**
     * @param addresses directory addresses, {@code host:port}, in order of preference
     * @param adminToken the admin token for admin calls, or null when the directory needs none
     */
    public DirectoryClient(HttpTransport http, List<String> addresses, String adminToken) {
        this.http = Objects.requireNonNull(http, "http");
        if (addresses == null || addresses.isEmpty()) {
            throw new IllegalArgumentException("at least one directory address is needed");
        }
        for (String a : addresses) {
            http.baseUrl(a);
        }
        this.addresses = AddressList.of(addresses);
        this.adminToken = adminToken;
        this.policy = http.retryPolicy().withMaxAttempts(1);
        this.deadline = http.requestTimeout().multipliedBy(addresses.size());
    }

    public List<String> addresses() {
        return addresses.addresses();
    }

    /**
     * {@code POST /v1/heartbeat}: registers a store or refreshes what it holds; completes with the
     * state the directory gives the store ({@code UP}, {@code FAILED}, ...; null when the answer names none).
     */
    public CompletableFuture<StoreState> heartbeat(Wire.Heartbeat heartbeat) {
        return heartbeatAnswer(heartbeat).thenApply(Wire.HeartbeatAnswer::state);
    }

    /**
     * {@code POST /v1/leases}: an allocator lease of {@code keys} new consecutive keys on one writable
     * volume that is none of {@code exclude}. 503 NO_WRITABLE_VOLUME when there is none.
     */
    public CompletableFuture<Wire.Lease> lease(int keys, List<Integer> exclude) {
        if (keys < 1 || keys > Wire.MAX_LEASE_KEYS) {
            throw new IllegalArgumentException("lease keys must be in 1.." + Wire.MAX_LEASE_KEYS + ", was " + keys);
        }
        return call("POST", "/v1/leases", body(new Wire.LeaseRequest(keys, exclude)), false, s -> s == 200)
                .thenApply(r -> parse(r, "POST /v1/leases", Wire.Lease.class));
    }

    /**
     * {@code GET /v1/volume-map}: where every volume lives. With {@code knownVersion} (a map's
     * {@link Wire.VolumeMap#version()}), completes with null when the map has not changed since.
     */
    public CompletableFuture<Wire.VolumeMap> volumeMap(String knownVersion) {
        String path = "/v1/volume-map";
        return call("GET", path, null, false, s -> s == 200 || s == 304,
                knownVersion == null ? Map.of() : Map.of("If-None-Match", "\"" + knownVersion + "\""))
                .thenApply(r -> r.statusCode() == 304 ? null : parse(r, "GET " + path, Wire.VolumeMap.class));
    }

    /**
     * {@code POST /v1/volumes/{volume}/deletes}: adds photos (each {@code key} with its cookie) to the
     * volume's delete log; completes with the logged entries and the token for deleting their needles.
     */
    public CompletableFuture<Wire.DeleteLog> logDeletes(int volume, List<Wire.DeleteEntry> deletes) {
        String path = "/v1/volumes/" + volume + "/deletes";
        return call("POST", path, body(new Wire.DeleteRequest(deletes)), false, s -> s == 200)
                .thenApply(r -> parse(r, "POST " + path, Wire.DeleteLog.class));
    }

    /** {@code GET /v1/volumes/{volume}/deletes?after=S&limit=N}: the delete log's entries after sequence number {@code after}. */
    public CompletableFuture<Wire.DeleteLog> deleteLog(int volume, long after, int limit) {
        String path = "/v1/volumes/" + volume + "/deletes?after=" + after + "&limit=" + limit;
        return call("GET", path, null, false, s -> s == 200)
                .thenApply(r -> parse(r, "GET " + path, Wire.DeleteLog.class));
    }

    /** {@code POST /v1/heartbeat}, with the whole answer: the store's state and its volumes' delete-log heads. */
    public CompletableFuture<Wire.HeartbeatAnswer> heartbeatAnswer(Wire.Heartbeat heartbeat) {
        return call("POST", "/v1/heartbeat", body(heartbeat), true, s -> s == 200) // a secured directory wants the admin token
                .thenApply(r -> parse(r, "POST /v1/heartbeat", Wire.HeartbeatAnswer.class));
    }

    /**
     * A store's registration at its start: {@link #heartbeatAnswer} tried again, with the transport's
     * backoff, after every failure that may pass (no answer, a timeout, 503, an election of the
     * directory's group...) until {@code patience} has run out; then the last failure. A slow
     * directory at start (a first heartbeat that times out under load) does not end the store's start.
     */
    public CompletableFuture<Wire.HeartbeatAnswer> register(Wire.Heartbeat heartbeat, Duration patience) {
        RetryPolicy patient = http.retryPolicy().withMaxAttempts(Integer.MAX_VALUE).withDeadline(patience);
        return patient.retry(() -> heartbeatAnswer(heartbeat), Futures::remoteRetryable);
    }

    /** {@code GET /v1/volumes}: every logical volume. */
    public CompletableFuture<List<VolumeInfo>> volumes() {
        return call("GET", "/v1/volumes", null, false, s -> s == 200)
                .thenApply(r -> http.json(r.uri().getAuthority(), "GET /v1/volumes", r.body(), VOLUMES, ERRORS));
    }

    /** {@code GET /v1/volumes/{id}}: one logical volume; 404 UNKNOWN_VOLUME. */
    public CompletableFuture<VolumeInfo> volume(int id) {
        String path = "/v1/volumes/" + id;
        return call("GET", path, null, false, s -> s == 200).thenApply(r -> parse(r, "GET " + path, VolumeInfo.class));
    }

    /** {@code GET /v1/stores}: every registered store. */
    public CompletableFuture<List<StoreInfo>> stores() {
        return call("GET", "/v1/stores", null, false, s -> s == 200)
                .thenApply(r -> http.json(r.uri().getAuthority(), "GET /v1/stores", r.body(), STORES, ERRORS));
    }


    /** {@code POST /v1/volumes} (admin): creates {@code count} logical volumes now. */
    public CompletableFuture<List<VolumeInfo>> createVolumes(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("volume count must be >= 1, was " + count);
        }
        return call("POST", "/v1/volumes", body(Map.of("count", count)), true, s -> s == 200 || s == 201)
                .thenApply(r -> http.json(r.uri().getAuthority(), "POST /v1/volumes", r.body(), VOLUMES, ERRORS));
    }

    /** {@code POST /v1/volumes/{id}/read-only} (admin). */
    public CompletableFuture<VolumeInfo> markReadOnly(int id, String reason) {
        String path = "/v1/volumes/" + id + "/read-only";
        return call("POST", path, body(Map.of("reason", reason == null ? "" : reason)), true, s -> s == 200)
                .thenApply(r -> parse(r, "POST " + path, VolumeInfo.class));
    }

    /** {@code POST /v1/stores/{id}/restore} (admin): a FAILED store is UP again. */
    public CompletableFuture<StoreInfo> restoreStore(String storeId) {
        String path = "/v1/stores/" + URLEncoder.encode(storeId, StandardCharsets.UTF_8) + "/restore";
        return call("POST", path, body(Map.of()), true, s -> s == 200)
                .thenApply(r -> parse(r, "POST " + path, StoreInfo.class));
    }

    /** {@code GET /health} of the first directory that answers. */
    public CompletableFuture<Health> health() {
        return call("GET", "/health", null, false, s -> s == 200).thenApply(r -> parse(r, "GET /health", Health.class));
    }

    /**
     * {@code POST /v1/backup} (admin): the directory writes a consistent backup of its database into
     * {@code dir}, a new directory on the directory's own host, and answers with the backup's manifest.
     */
    public CompletableFuture<BackupManifest> backup(String dir) {
        return call("POST", "/v1/backup", body(Map.of("dir", dir)), true, s -> s == 200)
                .thenApply(r -> parse(r, "POST /v1/backup", BackupManifest.class));
    }

    /** {@code DELETE /v1/raid-hold} (admin): lets raid-nodes work again after a restore; answers the hold it released, if any. */
    public CompletableFuture<RaidHoldRelease> releaseRaidHold() {
        return call("DELETE", "/v1/raid-hold", null, true, s -> s == 200)
                .thenApply(r -> parse(r, "DELETE /v1/raid-hold", RaidHoldRelease.class));
    }

    /**
     * {@code GET /v1/group}: the directory group as the first replica that answers sees it (any replica
     * answers, a follower too; a single directory answers itself as {@code single}).
     */
    public CompletableFuture<GroupInfo> group() {
        return call("GET", "/v1/group", null, false, s -> s == 200).thenApply(r -> parse(r, "GET /v1/group", GroupInfo.class));
    }

    /** {@code POST /v1/group/peers} (admin, on the leader): adds a replica to the group; answers the group after the change. */
    public CompletableFuture<GroupInfo> addReplica(String id, String raft, String httpAddress) {
        return call("POST", "/v1/group/peers", body(Map.of("id", id, "raft", raft, "http", httpAddress)), true, s -> s == 200)
                .thenApply(r -> parse(r, "POST /v1/group/peers", GroupInfo.class));
    }

    /** {@code DELETE /v1/group/peers/{id}} (admin, on the leader): removes a replica from the group. */
    public CompletableFuture<GroupInfo> removeReplica(String id) {
        String path = "/v1/group/peers/" + URLEncoder.encode(id, StandardCharsets.UTF_8);
        return call("DELETE", path, null, true, s -> s == 200).thenApply(r -> parse(r, "DELETE " + path, GroupInfo.class));
    }

    /** {@code POST /v1/group/leader} (admin, on the leader): hands the leadership to replica {@code id}. */
    public CompletableFuture<GroupInfo> transferLeader(String id) {
        return call("POST", "/v1/group/leader", body(Map.of("id", id)), true, s -> s == 200)
                .thenApply(r -> parse(r, "POST /v1/group/leader", GroupInfo.class));
    }

    /** {@code POST /v1/group/snapshot} (admin, on the leader): the group takes a snapshot now; completes with its log index. */
    public CompletableFuture<Long> snapshot() {
        return call("POST", "/v1/group/snapshot", body(Map.of()), true, s -> s == 200)
                .thenApply(r -> parse(r, "POST /v1/group/snapshot", SnapshotTaken.class).snapshotIndex());
    }

    /** The answer of {@code POST /v1/group/snapshot}. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record SnapshotTaken(long snapshotIndex) {
    }

    /**
     * For {@link NamespaceClient}: an admin call (the admin token when this client has one) with a JSON
     * body ({@code body} encoded; null: none), answered 200, parsed as {@code type}; the leader
     * following and error mapping of every call.
     */
    <T> CompletableFuture<T> adminCall(String method, String path, Object body, TypeReference<T> type) {
        return call(method, path, body == null ? null : body(body), true, s -> s == 200)
                .thenApply(r -> http.json(r.uri().getAuthority(), method + " " + path, r.body(), type, ERRORS));
    }

    private <T> T parse(HttpResponse<byte[]> r, String what, Class<T> type) {
        return http.json(r.uri().getAuthority(), what, r.body(), type, ERRORS);
    }

    private static byte[] body(Object o) {
        try {
            return HttpTransport.JSON.writeValueAsBytes(o);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("cannot encode " + o + " as JSON: " + e.getMessage(), e);
        }
    }

    private CompletableFuture<HttpResponse<byte[]>> call(String method, String path, byte[] json, boolean admin,
                                                         IntPredicate ok) {
        return call(method, path, json, admin, ok, Map.of());
    }

    private CompletableFuture<HttpResponse<byte[]>> call(String method, String path, byte[] json, boolean admin,
                                                         IntPredicate ok, Map<String, String> headers) {
        // Every call may go on to the next directory after a failure without an answer (as it always did,
        // POSTs included): one attempt per address, no backoff; HayloftClient retries whole operations.
        // A change carries one request id for all its attempts: the directory applies it once.
        String requestId = method.equals("GET") || method.equals("HEAD") ? null : UUID.randomUUID().toString();
        return http.call(addresses, method + " " + path, a -> {
            HttpRequest.Builder b = http.request(http.uri(a, path));
            headers.forEach(b::header);
            if (requestId != null) {
                b.header(REQUEST_ID_HEADER, requestId);
            }
            if (json != null) {
                b.header("Content-Type", "application/json");
            }
            b.method(method, json == null ? BodyPublishers.noBody() : BodyPublishers.ofByteArray(json));
            if (admin && adminToken != null) {
                b.header("Authorization", "Bearer " + adminToken);
            }
            return b.build();
        }, true, deadline, ok, ERRORS, policy);
    }
}
