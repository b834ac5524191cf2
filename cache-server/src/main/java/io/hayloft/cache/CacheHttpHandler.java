package io.hayloft.cache;

import io.hayloft.format.errors.CacheErrors;
import io.hayloft.format.errors.ApiException;
import io.hayloft.format.errors.CommonErrors;
import io.hayloft.serverkit.http.HttpResponses;
import io.hayloft.serverkit.http.RequestHandler;
import io.hayloft.serverkit.http.Router;
import io.hayloft.serverkit.metrics.PrometheusEndpoint;
import io.hayloft.format.wire.WriteToken;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Routes the cache's HTTP API (docs/cache-api.md): {@code GET} of a cache URL reads through,
 * {@code PUT} pushes a fresh needle, {@code DELETE} invalidates one; {@code /health},
 * {@code /metrics}, {@code /stats}. {@link #hitOnEventLoop} answers hits on the event loop, from
 * memory, without blocking; everything else runs in {@link #handle} on the server's worker executor
 * (a miss blocks its worker while the store answers).
 *
 * <p>Buffer ownership: a hit's response wraps the cached array without copying (the array is
 * immutable once cached, so Netty may write it while other requests share it); the request is
 * released by {@link io.hayloft.serverkit.http.HttpServer}.
 *
 * <p>Thread-safe (stateless apart from thread-safe collaborators).
 */
public final class CacheHttpHandler implements RequestHandler {
    /** Response header: {@code hit}, {@code miss}, {@code wait} (served by another read's fill) or {@code bypass}. */
    public static final String SOURCE_HEADER = "X-Hayloft-Cache";

    private final CacheConfig config;
    private final ReadThroughCache cache;
    private final PrometheusEndpoint metrics;
    private final WriteToken tokens;
    private final Clock clock;
    private final Router router;
    private final Router.Route needle; // the route of cache URLs, which hitOnEventLoop answers when it can

    public CacheHttpHandler(CacheConfig config, ReadThroughCache cache, PrometheusEndpoint metrics, Clock clock) {
        this.config = config;
        this.cache = cache;
        this.metrics = metrics;
        this.tokens = config.secured() ? new WriteToken(config.clusterSecret) : null;
        this.clock = clock;
        this.router = routes();
        this.needle = router.routes().stream().filter(r -> r.name().equals("needle")).findFirst().orElseThrow();
    }

    /**
     * The cache's routes (docs/cache-api.md). Every other path is a malformed cache URL: answered
     * {@code 400 BAD_CACHE_URL} naming what is wrong with it (or {@code 405} for another method than
     * a cache URL's), not 404. Exact paths: an empty segment is a malformed URL too.
     */
    private Router routes() {
        return Router.builder(CacheErrors.BAD_CACHE_URL).strictSlashes()
                .route("health", "GET /health", (req, p) -> {
                    Map<String, Object> h = new LinkedHashMap<>();
                    h.put("status", "ok");
                    h.put("role", config.gutter() ? "gutter" : "primary");
                    h.put("entries", cache.stats().snapshot().get("entries"));
                    h.put("bytes", cache.weightedBytes());
                    h.put("maxBytes", config.maxBytes);
                    h.put("leasesInFlight", cache.leasesInFlight());
                    return HttpResponses.json(HttpResponseStatus.OK, h);
                })
                .route("metrics", "GET /metrics", (req, p) -> metrics.response())
                .route("stats", "GET /stats", (req, p) -> HttpResponses.json(HttpResponseStatus.OK, cache.stats().snapshot()))
                .route("needle", "GET PUT DELETE /{store}/{volume}/{key}/{alt}", (req, p) -> {
                    QueryStringDecoder q = new QueryStringDecoder(req.uri());
                    if (req.method().equals(HttpMethod.GET)) {
                        return read(req, q);
                    }
                    return req.method().equals(HttpMethod.PUT) ? push(req, q) : invalidate(req, q);
                })
                .unmatched(req -> {
                    HttpMethod m = req.method();
                    if (m.equals(HttpMethod.GET) || m.equals(HttpMethod.PUT) || m.equals(HttpMethod.DELETE)) {
                        CacheUrl.parse(req.uri(), !m.equals(HttpMethod.DELETE)); // throws, naming the bad part
                        throw CacheErrors.BAD_CACHE_URL.exception("not a cache URL: " + new QueryStringDecoder(req.uri()).path());
                    }
                    FullHttpResponse r = HttpResponses.error(CommonErrors.METHOD_NOT_ALLOWED, "method " + m
                            + " not allowed on a cache URL; use GET, PUT or DELETE");
                    r.headers().set(HttpHeaderNames.ALLOW, "GET, PUT, DELETE");
                    return r;
                })
                .build();
    }

    /** The cache's routes, as documented in docs/cache-api.md. */
    public Router router() {
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

    /**
     * The event-loop fast path: answers a GET that hits memory, or returns null (anything else, bad
     * input included, goes to {@link #handle} on a worker). Never blocks.
     */
    public FullHttpResponse hitOnEventLoop(FullHttpRequest req) {
        if (!req.method().equals(HttpMethod.GET) || router.route(HttpMethod.GET, req.uri()) != needle) {
            return null; // not a read of a cache URL: /health, /stats, /metrics, a push, a malformed URL
        }
        CacheUrl url;
        try {
            url = CacheUrl.parse(req.uri(), true);
        } catch (ApiException e) {
            return null;
        }
        if (!url.cold() && !config.allowedStores.isEmpty() && !config.allowedStores.contains(url.store())) {
            return null;
        }
        ReadThroughCache.Answer a = cache.hit(url);
        return a == null ? null : response(a);
    }

    private FullHttpResponse read(FullHttpRequest req, QueryStringDecoder q) throws InterruptedException {
        CacheUrl url = CacheUrl.parse(q, true);
        checkStoreAllowed(url);
        return response(cache.get(url, cache.admission().admitsRequest(req)));
    }

    private static FullHttpResponse response(ReadThroughCache.Answer a) {
        FullHttpResponse r = HttpResponses.bytes(HttpResponseStatus.valueOf(a.status()), Unpooled.wrappedBuffer(a.body()),
                a.contentType() == null ? "application/octet-stream" : a.contentType());
        if (a.crcHex() != null) {
            r.headers().set(StoreFetcher.CRC_HEADER, a.crcHex());
        }
        // Every answer but a 200 says "miss", whatever path produced it (a lease joined, a bypass): a wrong
        // cookie must not be told from a missing key by this header either.
        r.headers().set(SOURCE_HEADER, a.status() != 200 ? ReadThroughCache.Source.MISS.header : a.source().header);
        return r;
    }

    private FullHttpResponse push(FullHttpRequest req, QueryStringDecoder q) {
        CacheUrl url = CacheUrl.parse(q, true);
        authorize(req, "push", url);
        String sent = req.headers().get(StoreFetcher.CRC_HEADER);
        if (sent == null) {
            throw CacheErrors.PUSH_CRC_MISMATCH.exception("a pushed needle needs the " + StoreFetcher.CRC_HEADER + " header");
        }
        int n = req.content().readableBytes();
        if (n > config.objectLimit()) {
            throw CacheErrors.PUSH_TOO_LARGE.exception("needle " + url.needle() + " has " + n
                    + " bytes, more than maxObjectBytes " + config.objectLimit());
        }
        byte[] data = ByteBufUtil.getBytes(req.content()); // a copy: the request buffer is released after us
        long crc = StoreFetcher.crc32c(data);
        long expected;
        try {
            expected = Long.parseLong(sent.trim(), 16);
        } catch (NumberFormatException e) {
            throw CacheErrors.PUSH_CRC_MISMATCH.exception(StoreFetcher.CRC_HEADER + " must be 8 hex digits, got '" + sent + "'");
        }
        if (crc != expected) {
            throw CacheErrors.PUSH_CRC_MISMATCH.exception("pushed needle " + url.needle() + " has CRC32C "
                    + StoreFetcher.crcHex(crc) + ", header says " + sent);
        }
        boolean stored = cache.push(url.needle(), url.cookie(), url.cold(), data, crc);
        return HttpResponses.json(stored ? HttpResponseStatus.CREATED : HttpResponseStatus.ACCEPTED,
                Map.of("needle", url.needle().toString(), "bytes", n, "stored", stored));
    }

    private FullHttpResponse invalidate(FullHttpRequest req, QueryStringDecoder q) {
        CacheUrl url = CacheUrl.parse(q, false);
        authorize(req, "invalidate", url);
        cache.invalidate(url.needle());
        return HttpResponses.empty(HttpResponseStatus.NO_CONTENT);
    }

    private void checkStoreAllowed(CacheUrl url) {
        if (!url.cold() && !config.allowedStores.isEmpty() && !config.allowedStores.contains(url.store())) {
            throw CacheErrors.STORE_NOT_ALLOWED.exception("store " + url.store() + " is not in allowedStores");
        }
    }

    private void authorize(FullHttpRequest req, String op, CacheUrl url) {
        if (tokens == null) {
            return;
        }
        String why = tokens.check(req.headers().get(WriteToken.HEADER), url.needle().volume(), url.needle().key(), clock.millis());
        if (why != null) {
            throw CommonErrors.FORBIDDEN.exception(op + " of needle " + url.needle() + " refused: " + why);
        }
    }
}
