package io.hayloft.directory;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.directory.meta.LogEntry;
import io.hayloft.directory.raft.RaftChangeLog;
import io.hayloft.format.directory.DeadKeys;
import io.hayloft.format.directory.Health;
import io.hayloft.format.directory.RaidHold;
import io.hayloft.format.directory.RaidHoldRelease;
import io.hayloft.format.errors.ApiError;
import io.hayloft.format.errors.ApiException;
import io.hayloft.format.errors.CommonErrors;
import io.hayloft.format.errors.DirectoryErrors;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.Wire;
import io.hayloft.serverkit.http.HttpResponses;
import io.hayloft.serverkit.http.RequestHandler;
import io.hayloft.serverkit.http.RouteParams;
import io.hayloft.serverkit.http.Router;
import io.hayloft.serverkit.http.Secrets;
import io.hayloft.serverkit.metrics.PrometheusEndpoint;
import io.micrometer.core.instrument.Timer;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Routes the directory's HTTP API (docs/directory-api.md) to {@link Directory}. Runs on the
 * server's blocking executor, never on an event loop (RocksDB calls block). Stateless and thread-safe.
 */
public final class DirectoryHttp implements RequestHandler {

    private final Directory directory;
    private final PrometheusEndpoint metrics;
    private final byte[] adminToken;
    private final DirectoryMetrics gauges;
    private final Console console;
    private final Router router;
    private final PeerStatusClient peerClient;
    private final boolean replicated;

    public DirectoryHttp(Directory directory, PrometheusEndpoint metrics) {
        this(directory, metrics, null);
    }

    /** @param peers the directory's transport for the console's calls to its peers, or null for a plain one */
    public DirectoryHttp(Directory directory, PrometheusEndpoint metrics, HttpTransport peers) {
        this.directory = directory;
        this.metrics = metrics;
        this.gauges = new DirectoryMetrics(directory, metrics.registry(), Clock.systemUTC());
        this.peerClient = peers == null ? new PeerStatusClient(Console.PEER_TIMEOUT)
                : new PeerStatusClient(peers, Console.PEER_TIMEOUT);
        this.console = new Console(directory, peerClient, Clock.systemUTC());
        String t = directory.config().adminToken;
        this.adminToken = Secrets.token(t);
        this.router = routes();
        this.replicated = directory.log().replicated();
    }

    static ApiException badRequest(String message) {
        return CommonErrors.BAD_REQUEST.exception(message);
    }

    /**
     * The wire error of a domain {@link Refusal} (the router's {@link Router.Translator}): the error of
     * its kind with its message, the same JSON object the HTTP layer's own errors are. Null for any
     * other exception.
     */
    static ApiException translate(Exception e) {
        return e instanceof Refusal r ? errorOf(r.kind()).exception(r.getMessage()) : null;
    }

    private static ApiError errorOf(Refusal.Kind kind) {
        return switch (kind) {
            case INVALID -> CommonErrors.BAD_REQUEST;
        };
    }

    /** The directory's routes (docs/directory-api.md). */
    private Router routes() {
        return NamespaceHttp.routes(Router.builder(CommonErrors.BAD_REQUEST), directory, this::admin)
                .route("health", "GET /health", (req, p) -> HttpResponses.json(HttpResponseStatus.OK, new Health("ok",
                        directory.meta().clusterId(), directory.config().secured(), adminToken != null)))
                .route("metrics", "GET /metrics", (req, p) -> {
                    gauges.refresh();
                    return metrics.response();
                })
                .route("ui", "GET /ui", (req, p) -> ConsoleAssets.get(List.of(), p.path()))
                .route("ui.file", "GET /ui/{file}", (req, p) -> ConsoleAssets.get(List.of(p.string("file")), p.path()))
                .route("heartbeat", "POST /v1/heartbeat", (req, p) -> {
                    heartbeatAuth(req);
                    var s = directory.heartbeat(body(req, Wire.Heartbeat.class));
                    return ok(new Wire.HeartbeatAnswer(s.id(), s.state(), directory.hotPath().deleteHeads(s.id())));
                })
                .route("lease", "POST /v1/leases", (req, p) -> ok(directory.hotPath().lease(body(req, Wire.LeaseRequest.class))))
                .route("volume_map", "GET /v1/volume-map", (req, p) -> volumeMap(req))
                .route("volumes", "GET POST /v1/volumes", (req, p) -> {
                    if (req.method().equals(HttpMethod.GET)) {
                        return ok(directory.volumes());
                    }
                    admin(req);
                    Map<String, Object> b = req.content().isReadable() ? body(req, new TypeReference<Map<String, Object>>() { }) : Map.of();
                    return ok(directory.createVolumes(intField(b, "count", 1)));
                })
                .route("volume", "GET /v1/volumes/{volume}", (req, p) -> ok(directory.volume(p.int32("volume"))))
                .route("deletes", "GET POST /v1/volumes/{volume}/deletes", (req, p) -> deletes(req, p))
                .route("volume.read-only", "POST /v1/volumes/{volume}/read-only", (req, p) -> {
                    int id = p.int32("volume");
                    admin(req);
                    Map<String, Object> b = req.content().isReadable() ? body(req, new TypeReference<Map<String, Object>>() { }) : Map.of();
                    Object reason = b.get("reason");
                    return ok(directory.markReadOnly(id, reason == null ? null : reason.toString()));
                })
                .route("replicas.move", "POST /v1/volumes/{volume}/replicas/move", (req, p) -> move(req, p.int32("volume"), true))
                .route("index.move", "POST /v1/volumes/{volume}/index/move", (req, p) -> move(req, p.int32("volume"), false))
                .route("volume.stripes", "GET /v1/volumes/{volume}/stripes", (req, p) -> ok(directory.cold().stripeMap(p.int32("volume"))))
                .route("stripe.block", "PUT /v1/volumes/{volume}/stripes/{stripe}/blocks/{unit}", (req, p) -> {
                    int id = p.int32("volume");
                    admin(req);
                    int stripe = p.int32("stripe");
                    int unit = p.int32("unit");
                    return ok(directory.cold().replaceBlock(id, stripe, unit, p.query("expect"), body(req, StripeMap.Block.class), fence(req)));
                })
                .route("encoding", "POST DELETE /v1/volumes/{volume}/encoding", (req, p) -> {
                    int id = p.int32("volume");
                    admin(req);
                    if (req.method().equals(HttpMethod.DELETE)) {
                        String job = p.query("job");
                        return ok(directory.cold().abortEncoding(id, job == null ? "" : job, fence(req)));
                    }
                    return ok(directory.cold().beginEncoding(checkVolume(body(req, StripeMap.class), id), fence(req)));
                })
                .route("encoding.commit", "POST /v1/volumes/{volume}/encoding/commit", (req, p) -> {
                    int id = p.int32("volume");
                    admin(req);
                    return ok(directory.cold().commitEncoding(checkVolume(body(req, StripeMap.class), id), fence(req)));
                })
                .route("reclaim", "GET POST DELETE /v1/volumes/{volume}/reclaim", (req, p) -> {
                    int id = p.int32("volume");
                    ColdTier cold = directory.cold();
                    if (req.method().equals(HttpMethod.GET)) {
                        return ok(cold.reclaim(id));
                    }
                    admin(req);
                    if (req.method().equals(HttpMethod.DELETE)) {
                        return ok(cold.abortReclaim(id, query(p, "job"), fence(req)));
                    }
                    return ok(cold.beginReclaim(checkVolume(body(req, StripeMap.class), id), query(p, "expect"), fence(req)));
                })
                .route("reclaim.commit", "POST /v1/volumes/{volume}/reclaim/commit", (req, p) -> {
                    int id = p.int32("volume");
                    admin(req);
                    return ok(directory.cold().commitReclaim(checkVolume(body(req, StripeMap.class), id), query(p, "expect"), fence(req)));
                })
                .route("dead-keys", "POST /v1/volumes/{volume}/dead-keys", (req, p) -> {
                    int id = p.int32("volume");
                    DeadKeysQuery q = body(req, DeadKeysQuery.class);
                    return ok(new DeadKeys(id, directory.cold().deadKeys(id, q.keys())));
                })
                .route("replicas-dropped", "POST /v1/volumes/{volume}/replicas-dropped", (req, p) -> {
                    int id = p.int32("volume");
                    admin(req);
                    return ok(directory.cold().replicasDropped(id, fence(req)));
                })
                .route("backup", "POST /v1/backup", (req, p) -> {
                    admin(req);
                    Object dir = body(req, new TypeReference<Map<String, Object>>() { }).get("dir");
                    return ok(DirectoryBackup.backup(directory.meta(), dir instanceof String d ? d : null));
                })
                .route("raid-hold", "GET DELETE /v1/raid-hold", (req, p) -> {
                    if (req.method().equals(HttpMethod.DELETE)) {
                        admin(req);
                        return ok(new RaidHoldRelease(directory.raidLeases().releaseHold()));
                    }
                    return ok(new RaidHold(directory.raidLeases().hold()));
                })
                .route("raid-lease", "GET POST DELETE /v1/raid-lease", (req, p) -> raidLease(req, p))
                .route("stripes", "GET /v1/stripes", (req, p) -> ok(directory.cold().stripeMaps()))
                .route("reclaims", "GET /v1/reclaims", (req, p) -> ok(directory.cold().reclaims()))
                .route("console", "GET /v1/console", (req, p) -> {
                    admin(req);
                    FullHttpResponse r = ok(console.snapshot());
                    r.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store");
                    return ConsoleAssets.secure(r);
                })
                .route("stores", "GET /v1/stores", (req, p) -> ok(directory.stores()))
                .route("store.restore", "POST /v1/stores/{store}/restore", (req, p) -> {
                    admin(req);
                    return ok(directory.restore(p.string("store")));
                })
                .route("store.fail", "POST /v1/stores/{store}/fail", (req, p) -> {
                    admin(req);
                    Map<String, Object> b = req.content().isReadable() ? body(req, new TypeReference<Map<String, Object>>() { }) : Map.of();
                    return ok(directory.verbs().fail(p.string("store"), b.get("reason") == null ? null : b.get("reason").toString()));
                })
                .route("store.drain", "POST /v1/stores/{store}/drain", (req, p) -> {
                    admin(req);
                    return ok(directory.verbs().drain(p.string("store"), fence(req)));
                })
                .route("store.drained", "POST /v1/stores/{store}/drained", (req, p) -> {
                    admin(req);
                    return ok(directory.verbs().drained(p.string("store"), fence(req)));
                })
                .route("group", "GET /v1/group", (req, p) -> ok(GroupView.of(directory.log(), peerClient)))
                .route("group.self", "GET /v1/group/self", (req, p) -> ok(GroupView.self(directory.log())))
                .route("state", "GET /v1/state", (req, p) -> {
                    admin(req);
                    return ok(Map.of("appliedIndex", directory.log().appliedIndex(), "families", directory.meta().digest()));
                })
                .route("group.peers", "POST /v1/group/peers", (req, p) -> {
                    admin(req);
                    DirectoryConfig.Peer peer = body(req, DirectoryConfig.Peer.class);
                    GroupView.check(peer);
                    raft().addPeer(peer);
                    return ok(GroupView.of(directory.log(), peerClient));
                })
                .route("group.peer", "DELETE /v1/group/peers/{id}", (req, p) -> {
                    admin(req);
                    raft().removePeer(p.string("id"));
                    return ok(GroupView.of(directory.log(), peerClient));
                })
                .route("group.leader", "POST /v1/group/leader", (req, p) -> {
                    admin(req);
                    Object id = body(req, new TypeReference<Map<String, Object>>() { }).get("id");
                    if (!(id instanceof String s) || s.isBlank()) {
                        throw badRequest("a leader transfer needs {\"id\": replica id}");
                    }
                    raft().transferLeader(s);
                    return ok(GroupView.of(directory.log(), peerClient));
                })
                .route("group.snapshot", "POST /v1/group/snapshot", (req, p) -> {
                    admin(req);
                    return ok(Map.of("snapshotIndex", directory.log().snapshot()));
                })
                .translate(DirectoryHttp::translate)
                .observe(this::record)
                .build();
    }

    /** The directory's routes, as documented in docs/directory-api.md. */
    public Router router() {
        return router;
    }

    /**
     * Answers a request. On a replica of a Raft group, only what may come from any replica's own state
     * is answered by a follower ({@link #answeredByAnyReplica}); everything else is answered NOT_LEADER
     * (421, naming the leader) on a follower. On the leader a read first passes the change log's
     * barrier, which makes it linearizable; a change begins with that barrier itself.
     */
    @Override
    public FullHttpResponse handle(FullHttpRequest req) throws Exception {
        FullHttpResponse refused = refusedByReplica(req);
        if (refused != null) {
            return refused;
        }
        String id;
        try {
            id = requestId(req);
        } catch (ApiException e) {
            return HttpResponses.error(e);
        }
        if (id == null) {
            return router.handle(req);
        }
        return once(id, () -> router.handle(req));
    }

    /**
     * A change carrying request id {@code id} ({@link RequestScope}): {@code route}'s answer, made in the
     * id's scope, or the recorded answer when the route's change turned out to be a repeat (its id was
     * recorded when the change took its latches, or when the state machine applied it). The route runs
     * first, its admin check included, so a recorded answer goes only to a caller the route admits.
     */
    private FullHttpResponse once(String id, Callable<FullHttpResponse> route) throws Exception {
        try (RequestScope scope = RequestScope.open(id, DirectoryHttp::render)) {
            FullHttpResponse r = route.call();
            if (scope.repeated()) {
                FullHttpResponse again = recorded(id);
                if (again != null) {
                    r.release();
                    return again;
                }
            }
            return r;
        }
    }

    /** The recorded answer of request {@code id} (200, its JSON body, {@code Hayloft-Repeated: true}); null when none is. */
    private FullHttpResponse recorded(String id) {
        String answer = directory.meta().requestAnswer(id);
        if (answer == null) {
            return null;
        }
        FullHttpResponse r = HttpResponses.bytes(HttpResponseStatus.OK,
                Unpooled.wrappedBuffer(answer.getBytes(StandardCharsets.UTF_8)), "application/json");
        r.headers().set(REPEATED_HEADER, "true");
        return r;
    }

    /** Header of an answer given from the record of an applied request id: the request was a repeat. */
    public static final String REPEATED_HEADER = "Hayloft-Repeated";

    /** A domain answer as the body {@link #ok} gives it. */
    private static String render(Object answer) {
        try {
            return HttpResponses.JSON.writeValueAsString(answer);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The request id of a change ({@value RequestScope#HEADER}); null for a read or a request without one. */
    private static String requestId(FullHttpRequest req) {
        String id = req.headers().get(RequestScope.HEADER);
        if (id == null || req.method().equals(HttpMethod.GET) || req.method().equals(HttpMethod.HEAD)) {
            return null;
        }
        if (!RequestScope.ID.matcher(id).matches()) {
            throw badRequest(RequestScope.HEADER + " must be 1 to 128 characters of letters, digits, '-', '_', '.' and ':', was '"
                    + (id.length() > 40 ? id.substring(0, 40) + "..." : id) + "'");
        }
        return id;
    }

    /**
     * As {@link #handle}, given as a future: the router's asynchronous routes answer without holding
     * the executor's thread (a change waiting on its consensus round). The replica check runs first,
     * on this thread, as in {@link #handle}.
     */
    @Override
    public CompletableFuture<FullHttpResponse> handleAsync(FullHttpRequest req) {
        FullHttpResponse refused;
        try {
            refused = refusedByReplica(req);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        if (refused != null) {
            return CompletableFuture.completedFuture(refused);
        }
        String id;
        try {
            id = requestId(req);
        } catch (ApiException e) {
            return CompletableFuture.completedFuture(HttpResponses.error(e));
        }
        if (id == null) {
            return router.handleAsync(req);
        }
        try {
            return CompletableFuture.completedFuture(once(id, () -> router.handle(req)));
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** The NOT_LEADER (or NO_LEADER) answer to a request this replica may not answer, or null, as {@link #handle} says. */
    private FullHttpResponse refusedByReplica(FullHttpRequest req) {
        if (replicated && !answeredByAnyReplica(req.uri())) {
            try {
                if (req.method().equals(HttpMethod.GET) || req.method().equals(HttpMethod.HEAD)) {
                    directory.log().readBarrier();
                } else {
                    directory.log().checkLeader();
                }
            } catch (ApiException e) {
                return HttpResponses.error(e);
            }
        }
        return null;
    }

    /**
     * Paths any replica answers from its own applied state: health, metrics, the console, the volume
     * map, the group, and the digest of its state ({@code /v1/state}, to compare replicas).
     */
    static boolean answeredByAnyReplica(String uri) {
        int q = uri.indexOf('?');
        String path = q < 0 ? uri : uri.substring(0, q);
        return path.equals("/health") || path.equals("/metrics") || path.equals("/ui") || path.startsWith("/ui/")
                || path.equals("/v1/volume-map") || path.equals("/v1/group") || path.equals("/v1/group/self")
                || path.equals("/v1/console") || path.equals("/v1/state");
    }

    private RaftChangeLog raft() {
        if (directory.log() instanceof RaftChangeLog r) {
            return r;
        }
        throw DirectoryErrors.WRONG_STATE.exception("this directory is a single process, not a replica of a Raft group "
                + "(no raft section in its configuration)");
    }

    /** Header of a raid-node's commit: the epoch of the raid lease it holds (docs/directory-api.md "Raid lease"). */
    public static final String RAID_EPOCH_HEADER = "X-Hayloft-Raid-Epoch";

    /** The raid lease a commit is fenced by, from {@value #RAID_EPOCH_HEADER}; null when the request names none. */
    private LogEntry.Fence fence(FullHttpRequest req) {
        String e = req.headers().get(RAID_EPOCH_HEADER);
        if (e == null) {
            return null;
        }
        try {
            return new LogEntry.Fence(Long.parseLong(e.trim()), Clock.systemUTC().millis());
        } catch (NumberFormatException x) {
            throw badRequest(RAID_EPOCH_HEADER + " must be a raid lease epoch (an integer), was '"
                    + (e.length() > 40 ? e.substring(0, 40) + "..." : e) + "'");
        }
    }

    /**
     * What a request timer's labels are made of: the route (null: none matched), whether it was a GET
     * (the one part of the method {@link #opName} reads) and the status. Not the method itself: a
     * client may send any token as a method, and a key per token would grow without bound.
     */
    private record TimerKey(Router.Route route, boolean get, int status) {
    }

    /**
     * The timers by their labels, each registered once: building and registering a timer (its id, tags
     * and buckets) on every request redid, on the lease path, work whose result exists after the first.
     */
    private final java.util.concurrent.ConcurrentHashMap<TimerKey, Timer> timers = new java.util.concurrent.ConcurrentHashMap<>();

    /** Records a request in {@code hayloft_directory_requests{op,route,status}}. */
    private void record(Router.Route route, HttpMethod m, int status, long nanos) {
        TimerKey key = new TimerKey(route, m.equals(HttpMethod.GET), status);
        Timer t = timers.get(key);
        if (t == null) {
            t = timers.computeIfAbsent(key, k -> {
                String name = route == null ? "none" : route.name();
                return Timer.builder("hayloft_directory_requests").tag("op", opName(name, m)).tag("route", name)
                        .tag("status", Integer.toString(status)).serviceLevelObjectives(PrometheusEndpoint.LATENCY_BUCKETS)
                        .register(metrics.registry());
            });
        }
        t.record(nanos, TimeUnit.NANOSECONDS);
    }

    /**
     * The {@code op} label of {@code hayloft_directory_requests_seconds}: the first path segment after
     * {@code /v1} ({@code volumes} for every route under {@code /v1/volumes/}, {@code stores} under
     * {@code /v1/stores/}, {@code s3} under {@code /v1/s3/}), except the hot path's own names: {@code lease}, {@code volume_map},
     * {@code delete_log_append} and {@code delete_log_read}; {@code health}, {@code metrics},
     * {@code ui} outside {@code /v1}, and {@code other} for a request no route took.
     */
    static String opName(String route, HttpMethod m) {
        return switch (route) {
            case "none" -> "other";
            case "health", "metrics", "lease", "volume_map", "heartbeat", "backup", "raid-hold", "raid-lease", "stripes",
                    "reclaims", "console", "stores" -> route;
            case "ui", "ui.file" -> "ui";
            case "deletes" -> m.equals(HttpMethod.GET) ? "delete_log_read" : "delete_log_append";
            default -> route.startsWith("store.") ? "stores" : route.startsWith("s3.") ? "s3" : "volumes";
        };
    }

    /** {@code POST /v1/volumes/<id>/replicas/move} and {@code .../index/move}. */
    private FullHttpResponse move(FullHttpRequest req, int id, boolean replicas) {
        admin(req);
        Move mv = body(req, Move.class);
        if (mv.from() == null || mv.to() == null || mv.from().isBlank() || mv.to().isBlank()) {
            throw badRequest("a move needs {\"from\": store id, \"to\": store id}");
        }
        LogEntry.Fence fence = fence(req);
        return ok(replicas ? directory.verbs().moveReplica(id, mv.from(), mv.to(), fence)
                : directory.verbs().moveIndex(id, mv.from(), mv.to(), fence));
    }

    /**
     * {@code GET /v1/volume-map}: the map with {@code ETag: "<version>"}; {@code 304} with an empty body
     * when {@code If-None-Match} names the current version (or is {@code *}).
     */
    private FullHttpResponse volumeMap(FullHttpRequest req) {
        HotPath.CachedMap c = directory.hotPath().volumeMap();
        String etag = "\"" + c.map().version() + "\"";
        String inm = req.headers().get(HttpHeaderNames.IF_NONE_MATCH);
        if (inm != null) {
            for (String t : inm.split(",")) {
                String tag = t.trim();
                if (tag.startsWith("W/")) {
                    tag = tag.substring(2);
                }
                if (tag.equals(etag) || tag.equals("*")) {
                    FullHttpResponse r = HttpResponses.empty(HttpResponseStatus.NOT_MODIFIED);
                    r.headers().set(HttpHeaderNames.ETAG, etag);
                    r.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-cache");
                    r.headers().set(APPLIED_INDEX_HEADER, directory.log().appliedIndex());
                    return r;
                }
            }
        }
        FullHttpResponse r = HttpResponses.bytes(HttpResponseStatus.OK, Unpooled.wrappedBuffer(c.json()),
                "application/json");
        r.headers().set(HttpHeaderNames.ETAG, etag);
        r.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-cache");
        r.headers().set(APPLIED_INDEX_HEADER, directory.log().appliedIndex());
        return r;
    }

    /**
     * Header of the volume map: the Raft index of the last change the answering replica applied (a
     * follower may answer; a client that saw a higher index from another replica knows this map is older).
     */
    public static final String APPLIED_INDEX_HEADER = "X-Hayloft-Applied-Index";

    /** {@code POST|GET /v1/volumes/<id>/deletes}: the volume's delete log (see {@link HotPath}). */
    private FullHttpResponse deletes(FullHttpRequest req, RouteParams params) {
        int id = params.int32("volume");
        if (req.method().equals(HttpMethod.POST)) {
            return ok(directory.hotPath().logDeletes(id, body(req, Wire.DeleteRequest.class)));
        }
        Map<String, List<String>> p = params.queryParameters();
        long after = longParam(p, "after", 0);
        long limit = longParam(p, "limit", HotPath.MAX_DELETE_READ);
        if (limit < 1 || limit > HotPath.MAX_DELETE_READ) {
            throw badRequest("limit must be in 1.." + HotPath.MAX_DELETE_READ + ", was " + limit);
        }
        return ok(directory.hotPath().deleteLog(id, after, (int) limit));
    }

    private static long longParam(Map<String, List<String>> p, String name, long dflt) {
        List<String> v = p.get(name);
        if (v == null || v.isEmpty()) {
            return dflt;
        }
        try {
            long x = Long.parseLong(v.get(0));
            if (x < 0) {
                throw new NumberFormatException();
            }
            return x;
        } catch (NumberFormatException e) {
            String shown = v.get(0).length() > 40 ? v.get(0).substring(0, 40) + "..." : v.get(0);
            throw badRequest("query parameter '" + name + "' must be a non-negative integer, was '" + shown + "'");
        }
    }

    /** Body of {@code POST /v1/volumes/<id>/replicas/move} and {@code .../index/move}. */
    record Move(String from, String to) {
    }

    /** Body of {@code POST /v1/volumes/<id>/dead-keys}. */
    record DeadKeysQuery(List<Long> keys) {
    }

    /** {@code GET|POST|DELETE /v1/raid-lease}: see {@link RaidLeases}. */
    private FullHttpResponse raidLease(FullHttpRequest req, RouteParams p) {
        HttpMethod m = req.method();
        RaidLeases leases = directory.raidLeases();
        if (m.equals(HttpMethod.GET)) {
            return ok(leases.current());
        }
        admin(req);
        if (m.equals(HttpMethod.POST)) {
            Map<String, Object> b = body(req, new TypeReference<Map<String, Object>>() { });
            Object holder = b.get("holder");
            Object ttl = b.get("ttlMillis");
            if (!(holder instanceof String h) || !(ttl instanceof Number t)) {
                throw badRequest("a raid lease request needs {\"holder\": string, \"ttlMillis\": number}, got " + b);
            }
            return ok(leases.acquire(h, t.longValue()));
        }
        // DELETE (the route takes no other method)
        String holder = p.query("holder");
        if (holder == null || holder.isBlank()) {
            throw badRequest("DELETE /v1/raid-lease needs ?holder=");
        }
        return ok(leases.release(holder));
    }

    /** A required query parameter (a job id). */
    private static String query(RouteParams p, String name) {
        String v = p.query(name);
        if (v == null || v.isEmpty()) {
            throw badRequest("query parameter '" + name + "' (a job id) is required");
        }
        return v;
    }

    private static StripeMap checkVolume(StripeMap map, int id) {
        if (map.volume() != id) {
            throw badRequest("stripe map names volume " + map.volume() + " but was sent to volume " + id);
        }
        return map;
    }

    private void admin(FullHttpRequest req) {
        if (adminToken == null) {
            return;
        }
        if (!Secrets.bearerMatches(req.headers().get(HttpHeaderNames.AUTHORIZATION), adminToken)) {
            throw DirectoryErrors.UNAUTHORIZED.exception("admin endpoint: missing or wrong 'Authorization: Bearer <admin token>'");
        }
    }

    /**
     * A heartbeat registers a store, so in a cluster with an admin token it must carry it: an
     * unsecured store is refused with a message that says what to set, not left to fail later.
     */
    private void heartbeatAuth(FullHttpRequest req) {
        if (adminToken == null) {
            return;
        }
        String h = req.headers().get(HttpHeaderNames.AUTHORIZATION);
        if (h == null) {
            throw DirectoryErrors.UNAUTHORIZED.exception("heartbeat refused: this cluster is secured: set clusterSecret/adminToken "
                    + "on the store, the same as the directory's");
        }
        if (!Secrets.bearerMatches(h, adminToken)) {
            throw DirectoryErrors.UNAUTHORIZED.exception("heartbeat refused: the store's adminToken is not the directory's");
        }
    }

    private static FullHttpResponse ok(Object body) {
        return HttpResponses.json(HttpResponseStatus.OK, body);
    }

    static <T> T body(FullHttpRequest req, Class<T> type) {
        try (ByteBufInputStream in = new ByteBufInputStream(req.content().duplicate())) {
            T t = HttpResponses.JSON.readValue((InputStream) in, type);
            if (t == null) {
                throw badRequest("request body is empty; expected a JSON " + type.getSimpleName());
            }
            return t;
        } catch (IOException e) {
            throw badRequest("malformed JSON body for " + type.getSimpleName() + ": " + firstLine(e.getMessage()));
        }
    }

    private static <T> T body(FullHttpRequest req, TypeReference<T> type) {
        try (ByteBufInputStream in = new ByteBufInputStream(req.content().duplicate())) {
            T t = HttpResponses.JSON.readValue((InputStream) in, type);
            if (t == null) {
                throw badRequest("request body is empty");
            }
            return t;
        } catch (IOException e) {
            throw badRequest("malformed JSON body: " + firstLine(e.getMessage()));
        }
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    private static int intField(Map<String, Object> b, String name, int dflt) {
        Object v = b.get(name);
        if (v == null) {
            return dflt;
        }
        if (v instanceof Integer i) {
            return i;
        }
        if (v instanceof Number) {
            throw badRequest(name + " must be a whole number in " + Integer.MIN_VALUE + ".." + Integer.MAX_VALUE + ", was " + v);
        }
        throw badRequest(name + " must be a number, was '" + v + "'" + (v instanceof String ? "" : " (" + v.getClass().getSimpleName().toLowerCase(Locale.ROOT) + ")"));
    }
}
