package io.hayloft.store;

import io.hayloft.client.http.HttpTransport;
import io.hayloft.serverkit.http.ClusterStance;
import io.hayloft.serverkit.http.Router;
import io.hayloft.serverkit.io.Disk;
import io.hayloft.store.cluster.ClusterAuthorizer;
import io.hayloft.store.cluster.DirectoryHeartbeat;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLContext;

import io.hayloft.serverkit.http.HttpServer;
import io.hayloft.serverkit.metrics.PrometheusEndpoint;
import io.hayloft.store.http.StoreHttpHandler;
import io.hayloft.store.volume.Volume;
import io.micrometer.core.instrument.Gauge;
import java.io.IOException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running store server: the {@link Store}, its disk executor and its HTTP server.
 *
 * <p>Thread-safe; {@link #close} stops the HTTP server, drains the disk executor, then closes the
 * volumes (flushing their {@code .idx}); {@link #crash} is what {@code kill -9} leaves. After a
 * simulated power cut of the server's {@link Disk} both complete without throwing (the errors are
 * logged) and change nothing on the disk: the server's session of the disk died with the cut.
 */
public final class StoreServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StoreServer.class);
    private final Store store;
    private final ExecutorService disk;
    private final HttpServer http;
    private final Router router;
    private final DirectoryHeartbeat heartbeat;
    /** The store's one transport for its calls to the directory and other stores (https when it has a trust store). */
    private final HttpTransport transport;

    private StoreServer(StoreConfig config, WriteAuthorizer authorizer, Disk files) throws IOException, InterruptedException {
        config.validate();
        HttpTransport.Builder tb = HttpTransport.builder()
                .connectTimeout(Duration.ofSeconds(5)).requestTimeout(Duration.ofSeconds(60));
        SSLContext ssl = config.tls().clientContext();
        if (ssl != null) {
            tb.sslContext(ssl);
        }
        transport = tb.build();
        if (config.directory != null && !config.directory.isBlank()) {
            // Never run half-secured: a secret or token the directory lacks (or the reverse) stops the start here.
            ClusterStance.require("store", config.directory, "clusterSecret", config.clusterSecret != null && !config.clusterSecret.isEmpty(),
                    "adminToken", config.adminToken != null && !config.adminToken.isEmpty(), ClusterStance.DEFAULT_PATIENCE,
                    p -> transport.getPatiently(config.directories(), "/health", p, ClusterStance.PERIOD));
        }
        store = new Store(config, files);
        if (config.deleteSyncRequired()) {
            store.requireDeleteSync(); // before serving: reads wait for the first delete-log sync
        }
        AtomicInteger n = new AtomicInteger();
        disk = new ThreadPoolExecutor(config.diskThreads, config.diskThreads, 60, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, "store-disk-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        PrometheusEndpoint metrics = new PrometheusEndpoint();
        Gauge.builder("hayloft_store_volumes", store, s -> s.volumes().size()).register(metrics.registry());
        Gauge.builder("hayloft_store_needles", store,
                s -> s.volumes().stream().mapToLong(v -> v.status().needles()).sum()).register(metrics.registry());
        Gauge.builder("hayloft_store_volume_bytes", store,
                s -> s.volumes().stream().mapToLong(v -> v.status().sizeBytes()).sum()).register(metrics.registry());
        HttpServer started = null;
        try {
            StoreHttpHandler api = new StoreHttpHandler(store, authorizer, metrics, transport, config.encodeStripes,
                    config.directory == null || config.directory.isBlank() ? null : config.directory, config.maxBlockBytes);
            router = api.router();
            started = HttpServer.start(config.host, config.port, config.limits(), api, disk, config.ioThreads,
                    config.tls().serverContext());
            http = started;
            started.bindMetrics(metrics.registry());
            if (config.directory == null || config.directory.isBlank()) {
                heartbeat = null;
            } else {
                heartbeat = startHeartbeat(config, started.port());
                awaitFirstSync(heartbeat, config);
            }
        } catch (RuntimeException | InterruptedException | IOException e) {
            if (started != null) {
                started.close();
            }
            disk.shutdownNow();
            store.close();
            throw e;
        }
    }

    /**
     * Waits (bounded) for the first heartbeat and the delete-log sync after it, so that a store
     * that answers {@link #start} serves its volumes at once when the directory is reachable;
     * otherwise its volumes answer 503 VOLUME_SYNCING until a later heartbeat gets through.
     */
    private static void awaitFirstSync(DirectoryHeartbeat heartbeat, StoreConfig config) throws InterruptedException {
        try {
            heartbeat.firstSync().get(5, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("the first heartbeat to the directory {} has not completed; volumes serve reads once it does",
                    config.directory);
        }
    }

    private DirectoryHeartbeat startHeartbeat(StoreConfig config, int port) throws IOException {
        Path dir = Path.of(config.dataDirs.get(0));
        String id = DirectoryHeartbeat.storeId(store.disk(), dir, config.storeId);
        String advertise = config.advertiseAddress != null && !config.advertiseAddress.isBlank() ? config.advertiseAddress
                : ("0.0.0.0".equals(config.host) || "::".equals(config.host) ? "127.0.0.1" : config.host) + ":" + port;
        return new DirectoryHeartbeat(store, config.directories(), id, advertise, config.rack, dir,
                Duration.ofMillis(config.heartbeatMillis), config.adminToken, transport);
    }

    /**
     * Starts a store whose writes are checked against the directory's write tokens when
     * {@code clusterSecret} is set, and which heartbeats to {@code directory} when that is set.
     */
    public static StoreServer start(StoreConfig config) throws IOException, InterruptedException {
        return start(config, new ClusterAuthorizer(config.clusterSecret, config.adminToken, Clock.systemUTC()));
    }

    public static StoreServer start(StoreConfig config, WriteAuthorizer authorizer) throws IOException, InterruptedException {
        return start(config, authorizer, Disk.REAL);
    }

    /** A store whose files all live on {@code disk} (the chaos checker passes a simulated disk). */
    public static StoreServer start(StoreConfig config, WriteAuthorizer authorizer, Disk disk)
            throws IOException, InterruptedException {
        return new StoreServer(config, authorizer, disk);
    }

    public int port() {
        return http.port();
    }

    /** The routes of the store's HTTP API (docs/store-api.md). */
    public Router router() {
        return router;
    }

    public Store store() {
        return store;
    }

    public Volume volume(long id) {
        return store.volume(id);
    }

    /** The heartbeat to the directory, or null when no directory is configured. */
    public DirectoryHeartbeat heartbeat() {
        return heartbeat;
    }

    @Override
    public void close() throws InterruptedException {
        if (heartbeat != null) {
            heartbeat.close();
        }
        http.close();
        disk.shutdown();
        disk.awaitTermination(30, TimeUnit.SECONDS);
        store.close();
    }

    /**
     * What {@code kill -9} leaves behind: stops serving (closes the HTTP server, abandons the disk
     * executor's queue) and closes every file without writing anything more: queued {@code .idx}
     * records are dropped, nothing is flushed or forced. Never throws; errors are logged.
     */
    public void crash() {
        if (heartbeat != null) {
            heartbeat.close();
        }
        disk.shutdownNow();
        try {
            http.close();
        } catch (RuntimeException e) {
            LOG.warn("crash: closing the HTTP server failed", e);
        }
        store.crash();
    }
}
