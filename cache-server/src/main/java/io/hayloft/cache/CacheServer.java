package io.hayloft.cache;

import io.hayloft.client.http.HttpTransport;
import io.hayloft.serverkit.http.ClusterStance;
import io.hayloft.serverkit.http.HttpServer;
import io.hayloft.serverkit.http.Router;
import io.hayloft.serverkit.metrics.PrometheusEndpoint;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;

/**
 * A running cache node: the {@link ReadThroughCache}, its store fetcher, its worker threads and its
 * HTTP server. A node is a ring member ({@code role: primary}) or a gutter node
 * ({@code role: gutter}, entries expire after {@code gutterTtlMillis}); the code is the same.
 *
 * <p>Thread-safe; {@link #close} stops the HTTP server, then the workers and the fetcher. Idempotent.
 */
public final class CacheServer implements AutoCloseable {
    private final CacheConfig config;
    private final ReadThroughCache cache;
    private final StoreFetcher fetcher;
    private final ColdFetcher cold; // null without a directory
    private final ExecutorService workers;
    private final HttpServer http;
    private final Router router;

    private CacheServer(CacheConfig config) throws InterruptedException {
        config.validate();
        this.config = config;
        // The cache's one transport for its calls to stores and the directory: https with its certificate when it has a trust store.
        ExecutorService fetchPool = Executors.newFixedThreadPool(2, named("cache-fetch"));
        HttpTransport.Builder tb = HttpTransport.builder()
                .connectTimeout(Duration.ofMillis(config.storeTimeoutMillis))
                .requestTimeout(Duration.ofMillis(config.storeTimeoutMillis)).executor(fetchPool);
        SSLContext ssl = config.tls().clientContext();
        if (ssl != null) {
            tb.sslContext(ssl);
        }
        HttpTransport transport = tb.build();
        if (config.coldEnabled()) {
            // Never run half-secured: a cache that would accept unsigned pushes in a secured cluster (or the reverse)
            // stops here. The directory's admin token is not compared: cold reads use only its open endpoints.
            ClusterStance.require("cache", config.directory, "clusterSecret", config.secured(), null, false,
                    ClusterStance.DEFAULT_PATIENCE,
                    p -> transport.getPatiently(config.directories(), "/health", p, ClusterStance.PERIOD));
        }
        fetcher = new StoreFetcher(config.storeTimeoutMillis, fetchPool, transport);
        cold = config.coldEnabled() ? new ColdFetcher(config.directory, config.directoryToken, config.storeTimeoutMillis,
                config.coldTimeoutMillis, config.coldIndexCacheBytes, Executors.newFixedThreadPool(config.coldThreads, named("cache-cold")), transport)
                : null;
        cache = new ReadThroughCache(config, fetcher, cold);
        PrometheusEndpoint metrics = new PrometheusEndpoint();
        cache.stats().register(metrics.registry());
        workers = new ThreadPoolExecutor(config.workerThreads, config.workerThreads, 60, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), named("cache-worker"));
        try {
            CacheHttpHandler handler = new CacheHttpHandler(config, cache, metrics, Clock.systemUTC());
            router = handler.router();
            // Hits are answered on the event loop from memory; misses, pushes and the rest go to the workers.
            http = HttpServer.start(config.host, config.port, config.limits(), handler, workers, config.ioThreads,
                    config.tls().serverContext(), handler::hitOnEventLoop);
            http.bindMetrics(metrics.registry());
        } catch (RuntimeException | InterruptedException e) {
            workers.shutdownNow();
            fetcher.close();
            if (cold != null) {
                cold.close();
            }
            throw e;
        }
    }

    /** Validates {@code config} and starts serving. */
    public static CacheServer start(CacheConfig config) throws InterruptedException {
        return new CacheServer(config);
    }

    public int port() {
        return http.port();
    }

    /** The routes of the cache's HTTP API (docs/cache-api.md). */
    public Router router() {
        return router;
    }

    /** {@code host:port} to put in a ring (the bound port; 127.0.0.1 when bound to every address). */
    public String address() {
        String h = "0.0.0.0".equals(config.host) || "::".equals(config.host) ? "127.0.0.1" : config.host;
        return h + ":" + port();
    }

    public ReadThroughCache cache() {
        return cache;
    }

    /** The cold reader, or null when no directory is configured. */
    public ColdFetcher cold() {
        return cold;
    }

    public CacheConfig config() {
        return config;
    }

    @Override
    public void close() throws InterruptedException {
        http.close();
        workers.shutdownNow();
        workers.awaitTermination(10, TimeUnit.SECONDS);
        fetcher.close();
        if (cold != null) {
            cold.close();
        }
    }

    private static ThreadFactory named(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
