package io.hayloft.directory;

import io.hayloft.client.http.HttpTransport;
import io.hayloft.directory.meta.MetaStore;
import io.hayloft.directory.raft.RaftChangeLog;
import java.io.IOException;
import java.nio.file.Files;
import io.hayloft.serverkit.http.HttpLimits;
import io.hayloft.serverkit.http.HttpServer;
import io.hayloft.serverkit.http.Router;
import io.hayloft.serverkit.metrics.PrometheusEndpoint;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running directory: the RocksDB metadata, the {@link Directory} logic, the {@link HealthChecker}
 * and the HTTP API. {@link #start} opens everything, {@link #close} stops it (idempotent).
 * Thread-safe.
 */
public final class DirectoryServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(DirectoryServer.class);

    private final DirectoryConfig config;
    private final MetaStore meta;
    private final ChangeLog log;
    private final Directory directory;
    private final HealthChecker health;
    private final ExecutorService executor;
    private final HttpServer http;
    private final Router router;
    private boolean closed;

    private DirectoryServer(DirectoryConfig config, StoreAdmin stores) throws InterruptedException {
        this.config = config.validate();
        Path dataDir = Path.of(config.dataDir);
        if (config.replicated()) {
            // A replica serves HTTP at its own peer entry's address (raft.bindHost, when set, for both listeners).
            DirectoryConfig.Peer self = config.raft.self();
            int colon = self.http.lastIndexOf(':');
            config.host = config.raft.bindHost != null ? config.raft.bindHost : self.http.substring(0, colon);
            config.port = Integer.parseInt(self.http.substring(colon + 1));
            if (Files.exists(dataDir.resolve("CURRENT"))) {
                throw new IllegalArgumentException(dataDir + " holds the database of a single directory; a replica keeps its "
                        + "database in dataDir/db. To turn a single directory into a group, take a backup and restore it on "
                        + "every replica (docs/operations.md, \"A replicated directory\")");
            }
            this.meta = MetaStore.openReplica(RaftChangeLog.databaseDir(dataDir), config.init);
        } else {
            this.meta = MetaStore.open(dataDir, config.init, !"never".equals(config.fsync));
        }
        ChangeLog changeLog = null;
        try {
            if (config.replicated()) {
                try {
                    changeLog = RaftChangeLog.start(config.raft, dataDir, meta);
                } catch (IOException e) {
                    throw new IllegalStateException("cannot start the Raft replica " + config.raft.id + ": " + e.getMessage(), e);
                }
            } else {
                changeLog = new LocalChangeLog(meta, this::address);
            }
            this.log = changeLog;
            if (!config.secured()) {
                LOG.warn("NO CLUSTER SECRET CONFIGURED: this cluster is OPEN. Anyone who can reach a store can write to it. "
                        + "Set clusterSecret (and adminToken) in the directory and store configs for production.");
            }
            // The directory's one transport for its calls to stores and peers: https with its certificate when it has a trust store.
            HttpTransport.Builder tb = HttpTransport.builder()
                    .connectTimeout(Duration.ofMillis(config.probeTimeoutMillis))
                    .requestTimeout(Duration.ofMillis(Math.max(config.probeTimeoutMillis, 5000)));
            SSLContext ssl = config.tls().clientContext();
            if (ssl != null) {
                tb.sslContext(ssl);
            }
            HttpTransport transport = tb.build();
            StoreAdmin admin = stores != null ? stores
                    : new HttpStoreAdmin(transport, Duration.ofMillis(config.probeTimeoutMillis), config.adminToken);
            this.directory = new Directory(config, meta, log, admin, Clock.systemUTC());
            // Requests wait on commits that many share (group commit): enough workers that a burst of independent
            // changes is in flight at once.
            this.executor = Executors.newFixedThreadPool(WORKERS, r -> {
                Thread t = new Thread(r, "hayloft-directory-worker");
                t.setDaemon(true);
                return t;
            });
            PrometheusEndpoint metrics = new PrometheusEndpoint();
            DirectoryHttp api = new DirectoryHttp(directory, metrics, transport);
            this.router = api.router();
            this.http = HttpServer.start(config.host, config.port, HttpLimits.defaults(), api, executor, 0,
                    config.tls().serverContext());
            this.http.bindMetrics(metrics.registry());
            if (log instanceof RaftChangeLog raft) {
                raft.bindMetrics(metrics.registry());
            }
            this.health = new HealthChecker(directory, admin);
            LOG.info("directory {} serving on {}:{} (data {})", meta.clusterId(), config.host, http.port(), config.dataDir);
        } catch (RuntimeException | InterruptedException e) {
            if (changeLog != null) {
                changeLog.close();
            }
            meta.close();
            throw e;
        }
    }

    /** Opens the database (creating it if {@code config.init}) and starts serving. */
    /** Worker threads of the HTTP API. */
    static final int WORKERS = 64;

    public static DirectoryServer start(DirectoryConfig config) throws InterruptedException {
        return new DirectoryServer(config, null);
    }

    /** As {@link #start(DirectoryConfig)} with a given store admin (tests use a failing one). */
    public static DirectoryServer start(DirectoryConfig config, StoreAdmin stores) throws InterruptedException {
        return new DirectoryServer(config, stores);
    }

    public int port() {
        return http.port();
    }

    /** {@code host:port} of the HTTP API. */
    /** The routes of the directory's HTTP API (docs/directory-api.md). */
    public Router router() {
        return router;
    }

    public String address() {
        return config.host + ":" + http.port();
    }

    public Directory directory() {
        return directory;
    }

    /** Where this directory's changes go: itself, or its Raft group. */
    public ChangeLog changeLog() {
        return log;
    }

    public HealthChecker healthChecker() {
        return health;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        health.close();
        directory.shutDown();
        http.close();
        executor.shutdown();
        try {
            executor.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        log.close();
        meta.close();
    }
}
