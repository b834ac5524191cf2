package io.hayloft.raid;

import io.hayloft.format.errors.CommonErrors;
import io.hayloft.format.errors.RaidErrors;
import io.hayloft.serverkit.http.HttpResponses;
import io.hayloft.serverkit.http.RequestHandler;
import io.hayloft.serverkit.http.RouteParams;
import io.hayloft.serverkit.http.Router;
import io.hayloft.serverkit.http.Secrets;
import io.micrometer.core.instrument.Timer;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
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
    private final Router router;

    RaidHttp(RaidServer server, String adminToken) {
        this.server = server;
        this.adminToken = Secrets.token(adminToken);
        this.router = routes();
    }

    /** The raid-node's routes (docs/raid-api.md); exact paths, no empty segments. */
    private Router routes() {
        return Router.builder(CommonErrors.BAD_REQUEST).strictSlashes()
                .route("health", "GET /health", (req, p) -> HttpResponses.json(HttpResponseStatus.OK, Map.of("status", "ok")))
                .route("status", "GET /status", (req, p) -> HttpResponses.json(HttpResponseStatus.OK, server.status()))
                .route("metrics", "GET /metrics", (req, p) -> server.metrics().endpoint.response())
                .route("run", "POST /admin/run", (req, p) -> {
                    admin(req);
                    long wait = waitMillis(p);
                    return HttpResponses.json(HttpResponseStatus.OK, await(server.runNow(), wait, "pass"));
                })
                .route("scrub", "POST /admin/scrub", (req, p) -> {
                    admin(req);
                    long wait = waitMillis(p);
                    return HttpResponses.json(HttpResponseStatus.OK, await(server.scrubNow(), wait, "scrub cycle"));
                })
                .observe((route, m, status, nanos) -> Timer.builder("hayloft_raid_requests")
                        .tag("op", route == null ? "other" : route.name()).tag("route", route == null ? "none" : route.name())
                        .tag("status", Integer.toString(status))
                        .register(server.metrics().endpoint.registry()).record(nanos, TimeUnit.NANOSECONDS))
                .build();
    }

    /** The raid-node's routes, as documented in docs/raid-api.md. */
    Router router() {
        return router;
    }

    @Override
    public FullHttpResponse handle(FullHttpRequest req) throws Exception {
        return router.handle(req);
    }

    /** The router's answer as a future, so that an asynchronous route holds no executor thread. */
    @Override
    public CompletableFuture<FullHttpResponse> handleAsync(FullHttpRequest req) {
        return router.handleAsync(req);
    }

    private void admin(FullHttpRequest req) {
        if (adminToken != null && !Secrets.bearerMatches(req.headers().get(HttpHeaderNames.AUTHORIZATION), adminToken)) {
            throw CommonErrors.FORBIDDEN.exception("admin endpoint: missing or wrong 'Authorization: Bearer <admin token>'");
        }
    }

    private long waitMillis(RouteParams p) {
        List<String> v = p.queryParameters().get("waitMillis");
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
        } catch (RejectedExecutionException e) {
            throw RaidErrors.STOPPING.exception("the raid-node is shutting down");
        }
    }
}
