package io.hayloft.raid;

import io.hayloft.format.errors.RaidErrors;
import io.hayloft.format.errors.ApiException;
import io.hayloft.format.errors.CommonErrors;
import io.hayloft.serverkit.http.HttpResponses;
import io.hayloft.serverkit.http.RequestHandler;
import io.hayloft.serverkit.http.Secrets;
import io.micrometer.core.instrument.Timer;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Routes the raid-node's HTTP API (docs/raid-api.md): {@code GET /health}, {@code GET /status},
 * {@code GET /metrics}, {@code POST /admin/run} and {@code POST /admin/scrub} (both wait for their
 * pass, at most {@code ?waitMillis=} or the configured {@code adminWaitMillis}; both need the
 * cluster's admin token as {@code Authorization: Bearer} when {@code adminToken} is set). Runs on the
 * server's blocking executor, never on an event loop. Stateless and thread-safe.
 */
final class RaidHttp implements RequestHandler {

    private final RaidServer server;
    private final byte[] adminToken; // null: the admin endpoints are open (a cluster without an admin token)

    RaidHttp(RaidServer server, String adminToken) {
        this.server = server;
        this.adminToken = Secrets.token(adminToken);
    }

    @Override
    public FullHttpResponse handle(FullHttpRequest req) {
        long t0 = System.nanoTime();
        String op = "other";
        FullHttpResponse r;
        try {
            QueryStringDecoder q = new QueryStringDecoder(req.uri());
            String path = q.path();
            switch (path) {
                case "/health" -> {
                    op = "health";
                    allow(req, HttpMethod.GET);
                    r = HttpResponses.json(HttpResponseStatus.OK, Map.of("status", "ok"));
                }
                case "/status" -> {
                    op = "status";
                    allow(req, HttpMethod.GET);
                    r = HttpResponses.json(HttpResponseStatus.OK, server.status());
                }
                case "/metrics" -> {
                    op = "metrics";
                    allow(req, HttpMethod.GET);
                    r = server.metrics().endpoint.response();
                }
                case "/admin/run" -> {
                    op = "run";
                    allow(req, HttpMethod.POST);
                    admin(req);
                    long wait = waitMillis(q);
                    r = HttpResponses.json(HttpResponseStatus.OK, await(server.runNow(), wait, "pass"));
                }
                case "/admin/scrub" -> {
                    op = "scrub";
                    allow(req, HttpMethod.POST);
                    admin(req);
                    long wait = waitMillis(q);
                    r = HttpResponses.json(HttpResponseStatus.OK, await(server.scrubNow(), wait, "scrub cycle"));
                }
                default -> throw CommonErrors.NOT_FOUND.exception("no such endpoint: " + path
                        + " (try /health, /status, /metrics, POST /admin/run, POST /admin/scrub)");
            }
        } catch (ApiException e) {
            r = HttpResponses.error(e);
        }
        Timer.builder("hayloft_raid_requests").tag("op", op).tag("status", Integer.toString(r.status().code()))
                .register(server.metrics().endpoint.registry()).record(System.nanoTime() - t0, TimeUnit.NANOSECONDS);
        return r;
    }

    private void admin(FullHttpRequest req) {
        if (adminToken != null && !Secrets.bearerMatches(req.headers().get(HttpHeaderNames.AUTHORIZATION), adminToken)) {
            throw CommonErrors.FORBIDDEN.exception("admin endpoint: missing or wrong 'Authorization: Bearer <admin token>'");
        }
    }

    private static void allow(FullHttpRequest req, HttpMethod m) {
        if (!req.method().equals(m)) {
            throw CommonErrors.METHOD_NOT_ALLOWED.exception(req.method() + " not allowed here; use " + m);
        }
    }

    private long waitMillis(QueryStringDecoder q) {
        List<String> v = q.parameters().get("waitMillis");
        if (v == null || v.isEmpty()) {
            return server.adminWaitMillis();
        }
        try {
            long w = Long.parseLong(v.get(0));
            if (w < 1) {
                throw new NumberFormatException();
            }
            return w;
        } catch (NumberFormatException e) {
            throw CommonErrors.BAD_REQUEST.exception("waitMillis must be a positive integer, was '" + v.get(0) + "'");
        }
    }

    private static Map<String, Object> await(Future<Map<String, Object>> f, long millis, String what) {
        try {
            return f.get(millis, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw RaidErrors.STILL_RUNNING.exception("the " + what + " did not finish within " + millis
                    + " ms; it goes on running (see /status)");
        } catch (ExecutionException e) {
            throw RaidErrors.PASS_FAILED.exception("the " + what + " failed: " + e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw RaidErrors.STOPPING.exception("interrupted while waiting for the " + what);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            throw RaidErrors.STOPPING.exception("the raid-node is shutting down");
        }
    }
}
