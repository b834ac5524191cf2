package io.hayloft.directory;

import io.hayloft.format.errors.DirectoryErrors;
import com.fasterxml.jackson.core.type.TypeReference;
import io.hayloft.format.errors.ApiException;
import io.hayloft.format.errors.CommonErrors;
import io.hayloft.serverkit.http.HttpResponses;
import io.hayloft.serverkit.http.RequestHandler;
import io.hayloft.serverkit.http.Secrets;
import io.hayloft.serverkit.metrics.PrometheusEndpoint;
import io.hayloft.format.wire.Wire;
import io.hayloft.format.wire.StripeMap;
import io.micrometer.core.instrument.Timer;
import io.netty.buffer.ByteBufInputStream;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
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

    public DirectoryHttp(Directory directory, PrometheusEndpoint metrics) {
        this(directory, metrics, null);
    }

    /** @param peers the directory's transport for the console's calls to its peers, or null for a plain one */
    public DirectoryHttp(Directory directory, PrometheusEndpoint metrics, io.hayloft.client.http.HttpTransport peers) {
        this.directory = directory;
        this.metrics = metrics;
        this.gauges = new DirectoryMetrics(directory, metrics.registry(), java.time.Clock.systemUTC());
        this.console = new Console(directory, peers == null ? new PeerStatusClient(Console.PEER_TIMEOUT)
                : new PeerStatusClient(peers, Console.PEER_TIMEOUT), java.time.Clock.systemUTC());
        String t = directory.config().adminToken;
        this.adminToken = Secrets.token(t);
    }

    static ApiException badRequest(String message) {
        return CommonErrors.BAD_REQUEST.exception(message);
    }

    @Override
    public FullHttpResponse handle(FullHttpRequest req) throws Exception {
        long t0 = System.nanoTime();
        String op = "other";
        FullHttpResponse r;
        try {
            // The server kit (HttpServer) has already refused a URI with a bad %-escape.
            QueryStringDecoder q = new QueryStringDecoder(req.uri());
            String path = q.path();
            List<String> seg = Arrays.stream(path.split("/")).filter(s -> !s.isEmpty()).toList();
            HttpMethod m = req.method();
            if (seg.size() == 1 && seg.get(0).equals("health")) {
                op = "health";
                allow(m, HttpMethod.GET);
                r = HttpResponses.json(HttpResponseStatus.OK, Map.of("status", "ok", "cluster", directory.meta().clusterId(),
                        "secured", directory.config().secured(), "admin", adminToken != null));
            } else if (seg.size() == 1 && seg.get(0).equals("metrics")) {
                op = "metrics";
                gauges.refresh();
                r = metrics.response();
            } else if (!seg.isEmpty() && seg.get(0).equals("ui")) {
                op = "ui";
                allow(m, HttpMethod.GET);
                r = ConsoleAssets.get(seg.subList(1, seg.size()), path);
            } else if (seg.size() >= 2 && seg.get(0).equals("v1")) {
                op = opName(seg, m);
                r = v1(req, m, seg.subList(1, seg.size()));
            } else {
                throw CommonErrors.NOT_FOUND.exception("no such endpoint: " + path);
            }
        } catch (ApiException e) {
            r = HttpResponses.error(e);
        }
        Timer.builder("hayloft_directory_requests").tag("op", op).tag("status", Integer.toString(r.status().code()))
                .serviceLevelObjectives(PrometheusEndpoint.LATENCY_BUCKETS)
                .register(metrics.registry()).record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
        return r;
    }

    /**
     * The {@code op} label of {@code hayloft_directory_requests_seconds}: the first path segment after
     * {@code /v1}, except the hot path's own names: {@code lease}, {@code volume_map},
     * {@code delete_log_append} and {@code delete_log_read}.
     */
    static String opName(List<String> seg, HttpMethod m) {
        String what = seg.get(1);
        if (what.equals("leases") && seg.size() == 2) {
            return "lease";
        }
        if (what.equals("volume-map") && seg.size() == 2) {
            return "volume_map";
        }
        if (what.equals("volumes") && seg.size() == 4 && seg.get(3).equals("deletes")) {
            return m.equals(HttpMethod.GET) ? "delete_log_read" : "delete_log_append";
        }
        return what;
    }

    private FullHttpResponse v1(FullHttpRequest req, HttpMethod m, List<String> seg) throws IOException, InterruptedException {
        String what = seg.get(0);
        int n = seg.size();
        if (what.equals("heartbeat") && n == 1) {
            allow(m, HttpMethod.POST);
            heartbeatAuth(req);
            var s = directory.heartbeat(body(req, Wire.Heartbeat.class));
            return ok(new Wire.HeartbeatAnswer(s.id(), s.state(), directory.hotPath().deleteHeads(s.id())));
        }
        if (what.equals("leases") && n == 1) {
            allow(m, HttpMethod.POST);
            return ok(directory.hotPath().lease(body(req, Wire.LeaseRequest.class)));
        }
        if (what.equals("volume-map") && n == 1) {
            allow(m, HttpMethod.GET);
            return volumeMap(req);
        }
        if (what.equals("volumes")) {
            if (n == 1 && m.equals(HttpMethod.POST)) {
                admin(req);
                Map<String, Object> b = req.content().isReadable() ? body(req, new TypeReference<Map<String, Object>>() { }) : Map.of();
                return ok(directory.createVolumes(intField(b, "count", 1)));
            }
            if (n == 1) {
                allow(m, HttpMethod.GET);
                return ok(directory.volumes());
            }
            int id = volumeId(seg.get(1));
            if (n == 2) {
                allow(m, HttpMethod.GET);
                return ok(directory.volume(id));
            }
            if (n == 3 && seg.get(2).equals("deletes")) {
                return deletes(req, m, id);
            }
            if (n >= 3 && (seg.get(2).equals("stripes") || seg.get(2).equals("encoding") || seg.get(2).equals("replicas-dropped")
                    || seg.get(2).equals("reclaim") || seg.get(2).equals("dead-keys"))) {
                return cold(req, m, id, seg.subList(2, n));
            }
            if (n == 4 && (seg.get(2).equals("replicas") || seg.get(2).equals("index")) && seg.get(3).equals("move")) {
                allow(m, HttpMethod.POST);
                admin(req);
                Move mv = body(req, Move.class);
                if (mv.from() == null || mv.to() == null || mv.from().isBlank() || mv.to().isBlank()) {
                    throw badRequest("a move needs {\"from\": store id, \"to\": store id}");
                }
                return ok(seg.get(2).equals("replicas") ? directory.verbs().moveReplica(id, mv.from(), mv.to())
                        : directory.verbs().moveIndex(id, mv.from(), mv.to()));
            }
            if (n == 3 && seg.get(2).equals("read-only")) {
                allow(m, HttpMethod.POST);
                admin(req);
                Map<String, Object> b = req.content().isReadable() ? body(req, new TypeReference<Map<String, Object>>() { }) : Map.of();
                Object reason = b.get("reason");
                return ok(directory.markReadOnly(id, reason == null ? null : reason.toString()));
            }
        }
        if (what.equals("backup") && n == 1) {
            allow(m, HttpMethod.POST);
            admin(req);
            Object dir = body(req, new TypeReference<Map<String, Object>>() { }).get("dir");
            return ok(DirectoryBackup.backup(directory.meta(), dir instanceof String d ? d : null));
        }
        if (what.equals("raid-hold") && n == 1) {
            if (m.equals(HttpMethod.DELETE)) {
                admin(req);
                String released = directory.raidLeases().releaseHold();
                java.util.Map<String, Object> answer = new java.util.HashMap<>();
                answer.put("released", released);
                return ok(answer);
            }
            allow(m, HttpMethod.GET);
            java.util.Map<String, Object> answer = new java.util.HashMap<>();
            answer.put("hold", directory.raidLeases().hold());
            return ok(answer);
        }
        if (what.equals("raid-lease") && n == 1) {
            return raidLease(req, m);
        }
        if (what.equals("stripes") && n == 1) {
            allow(m, HttpMethod.GET);
            return ok(directory.cold().stripeMaps());
        }
        if (what.equals("reclaims") && n == 1) {
            allow(m, HttpMethod.GET);
            return ok(directory.cold().reclaims());
        }
        if (what.equals("console") && n == 1) {
            allow(m, HttpMethod.GET);
            admin(req);
            FullHttpResponse r = ok(console.snapshot());
            r.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-store");
            return ConsoleAssets.secure(r);
        }
        if (what.equals("stores")) {
            if (n == 1) {
                allow(m, HttpMethod.GET);
                return ok(directory.stores());
            }
            if (n == 3 && seg.get(2).equals("restore")) {
                allow(m, HttpMethod.POST);
                admin(req);
                return ok(directory.restore(seg.get(1)));
            }
            if (n == 3 && (seg.get(2).equals("fail") || seg.get(2).equals("drain") || seg.get(2).equals("drained"))) {
                allow(m, HttpMethod.POST);
                admin(req);
                OperatorVerbs verbs = directory.verbs();
                if (seg.get(2).equals("fail")) {
                    Map<String, Object> b = req.content().isReadable() ? body(req, new TypeReference<Map<String, Object>>() { }) : Map.of();
                    return ok(verbs.fail(seg.get(1), b.get("reason") == null ? null : b.get("reason").toString()));
                }
                return ok(seg.get(2).equals("drain") ? verbs.drain(seg.get(1)) : verbs.drained(seg.get(1)));
            }
        }
        throw CommonErrors.NOT_FOUND.exception("no such endpoint: /v1/" + String.join("/", seg));
    }

    /** The raid-node's endpoints under {@code /v1/volumes/<id>/}: stripes, encoding, replicas-dropped, reclaim, dead-keys. */
    private FullHttpResponse cold(FullHttpRequest req, HttpMethod m, int id, List<String> seg) {
        ColdTier cold = directory.cold();
        String what = seg.get(0);
        if (what.equals("stripes") && seg.size() == 1) {
            allow(m, HttpMethod.GET);
            return ok(cold.stripeMap(id));
        }
        if (what.equals("stripes") && seg.size() == 4 && seg.get(2).equals("blocks")) {
            allow(m, HttpMethod.PUT);
            admin(req);
            String expect = new QueryStringDecoder(req.uri()).parameters().getOrDefault("expect", List.of()).stream()
                    .findFirst().orElse(null);
            return ok(cold.replaceBlock(id, volumeId(seg.get(1)), volumeId(seg.get(3)), expect,
                    body(req, StripeMap.Block.class)));
        }
        if (what.equals("encoding") && seg.size() == 1) {
            admin(req);
            if (m.equals(HttpMethod.DELETE)) {
                String job = new QueryStringDecoder(req.uri()).parameters().getOrDefault("job", List.of("")).get(0);
                return ok(cold.abortEncoding(id, job));
            }
            allow(m, HttpMethod.POST);
            return ok(cold.beginEncoding(checkVolume(body(req, StripeMap.class), id)));
        }
        if (what.equals("encoding") && seg.size() == 2 && seg.get(1).equals("commit")) {
            allow(m, HttpMethod.POST);
            admin(req);
            return ok(cold.commitEncoding(checkVolume(body(req, StripeMap.class), id)));
        }
        if (what.equals("reclaim") && seg.size() == 1) {
            if (m.equals(HttpMethod.GET)) {
                return ok(cold.reclaim(id));
            }
            admin(req);
            if (m.equals(HttpMethod.DELETE)) {
                return ok(cold.abortReclaim(id, query(req, "job")));
            }
            allow(m, HttpMethod.POST);
            return ok(cold.beginReclaim(checkVolume(body(req, StripeMap.class), id), query(req, "expect")));
        }
        if (what.equals("reclaim") && seg.size() == 2 && seg.get(1).equals("commit")) {
            allow(m, HttpMethod.POST);
            admin(req);
            return ok(cold.commitReclaim(checkVolume(body(req, StripeMap.class), id), query(req, "expect")));
        }
        if (what.equals("dead-keys") && seg.size() == 1) {
            allow(m, HttpMethod.POST);
            DeadKeys q = body(req, DeadKeys.class);
            return ok(Map.of("volume", id, "dead", cold.deadKeys(id, q.keys())));
        }
        if (what.equals("replicas-dropped") && seg.size() == 1) {
            allow(m, HttpMethod.POST);
            admin(req);
            return ok(cold.replicasDropped(id));
        }
        throw CommonErrors.NOT_FOUND.exception("no such endpoint: /v1/volumes/" + id + "/" + String.join("/", seg));
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
                    return r;
                }
            }
        }
        FullHttpResponse r = HttpResponses.bytes(HttpResponseStatus.OK, io.netty.buffer.Unpooled.wrappedBuffer(c.json()),
                "application/json");
        r.headers().set(HttpHeaderNames.ETAG, etag);
        r.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-cache");
        return r;
    }

    /** {@code POST|GET /v1/volumes/<id>/deletes}: the volume's delete log (see {@link HotPath}). */
    private FullHttpResponse deletes(FullHttpRequest req, HttpMethod m, int id) {
        if (m.equals(HttpMethod.POST)) {
            return ok(directory.hotPath().logDeletes(id, body(req, Wire.DeleteRequest.class)));
        }
        if (!m.equals(HttpMethod.GET)) {
            throw CommonErrors.METHOD_NOT_ALLOWED.exception("use GET or POST on /v1/volumes/" + id + "/deletes, not " + m);
        }
        Map<String, List<String>> p = new QueryStringDecoder(req.uri()).parameters();
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
    record DeadKeys(List<Long> keys) {
    }

    /** A required query parameter. */
    /** {@code GET|POST|DELETE /v1/raid-lease}: see {@link RaidLeases}. */
    private FullHttpResponse raidLease(FullHttpRequest req, HttpMethod m) {
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
        if (m.equals(HttpMethod.DELETE)) {
            String holder = new QueryStringDecoder(req.uri()).parameters().getOrDefault("holder", List.of("")).get(0);
            if (holder.isBlank()) {
                throw badRequest("DELETE /v1/raid-lease needs ?holder=");
            }
            return ok(leases.release(holder));
        }
        throw CommonErrors.METHOD_NOT_ALLOWED.exception("use GET, POST or DELETE on /v1/raid-lease, not " + m);
    }

    private static String query(FullHttpRequest req, String name) {
        String v = new QueryStringDecoder(req.uri()).parameters().getOrDefault(name, List.of("")).get(0);
        if (v.isEmpty()) {
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

    private static void allow(HttpMethod m, HttpMethod expected) {
        if (!m.equals(expected)) {
            throw CommonErrors.METHOD_NOT_ALLOWED.exception("method " + m + " not allowed here; use " + expected);
        }
    }

    private static <T> T body(FullHttpRequest req, Class<T> type) {
        try (ByteBufInputStream in = new ByteBufInputStream(req.content().duplicate())) {
            T t = HttpResponses.JSON.readValue((java.io.InputStream) in, type);
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
            T t = HttpResponses.JSON.readValue((java.io.InputStream) in, type);
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

    private static int volumeId(String s) {
        try {
            return Integer.parseInt(s);
        } catch (NumberFormatException e) {
            throw badRequest("volume id must be an integer, was '" + s + "'");
        }
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
