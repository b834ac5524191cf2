package io.hayloft.s3;

import io.hayloft.client.DirectoryClient;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.NamespaceClient;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.s3.auth.SigV4Verifier;
import io.hayloft.s3.data.ChunkStore;
import io.hayloft.serverkit.http.HttpServer;
import io.hayloft.serverkit.metrics.PrometheusEndpoint;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.HexFormat;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An S3 gateway process: the HTTP server, the cluster client, the orphan sweep. Start with
 * {@link #start(S3Config)}; close to stop. Thread-safe.
 *
 * <p>Parts: an {@link HttpTransport} (the config's trust store when set) shared by a
 * {@link HayloftClient} (needles) and a {@link DirectoryClient} (the directory token as admin token)
 * under the {@link NamespaceClient}; a {@link ChunkStore}; the SigV4 verifier of the config's users
 * and region; server-kit's {@link HttpServer} with the {@link S3Handler} (PutObject and UploadPart
 * bodies streamed, the rest aggregated up to {@code maxBodyBytes}) and S3's XML errors for the
 * pipeline's own refusals ({@link S3Errors}); a sweep every {@code sweepIntervalMillis} (0: never).
 */
public final class S3Server implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(S3Server.class);

    private final S3Config config;
    private final HttpTransport transport;
    private final HayloftClient client;
    private final ChunkStore chunks;
    private final ExecutorService workers;
    private final ScheduledExecutorService sweeper;
    private final HttpServer http;
    private final AtomicBoolean closed = new AtomicBoolean();

    private S3Server(S3Config config) throws InterruptedException {
        this.config = config;
        HttpTransport.Builder tb = HttpTransport.builder();
        HayloftClient.Builder cb = HayloftClient.builder().directories(config.directories())
                .maxObjectBytes(Math.max(config.chunkBytes, 1 << 20));
        SSLContext ssl = config.tls().clientContext();
        if (ssl != null) {
            tb.sslContext(ssl);
            cb.sslContext(ssl);
        }
        if (config.directoryToken != null) {
            cb.adminToken(config.directoryToken);
        }
        transport = tb.build();
        client = cb.build();
        DirectoryClient directory = new DirectoryClient(transport, config.directories(), config.directoryToken);
        NamespaceClient namespace = new NamespaceClient(directory);
        ChunkStore store = null;
        ExecutorService pool = null;
        ScheduledExecutorService sweep = null;
        try {
            store = new ChunkStore(client, namespace, config.chunkBytes);
            PrometheusEndpoint prometheus = new PrometheusEndpoint();
            Gateway g = new Gateway(config, namespace, store, Clock.systemUTC(), new S3Metrics(prometheus.registry()),
                    owner(config));
            S3Handler handler = new S3Handler(g, verifier(config), prometheus);
            pool = new ThreadPoolExecutor(config.workerThreads, config.workerThreads, 60, TimeUnit.SECONDS,
                    new LinkedBlockingQueue<>(), named("s3-worker"));
            http = HttpServer.start(config.host, config.port, config.limits(), handler, pool, config.ioThreads,
                    config.tls().serverContext(), null, new S3Errors());
            http.bindMetrics(prometheus.registry());
            if (config.sweepIntervalMillis > 0) {
                sweep = Executors.newSingleThreadScheduledExecutor(named("s3-sweep"));
                sweep.scheduleWithFixedDelay(this::sweepQuietly, config.sweepIntervalMillis, config.sweepIntervalMillis,
                        TimeUnit.MILLISECONDS);
            }
        } catch (RuntimeException | InterruptedException | Error e) {
            if (pool != null) {
                pool.shutdownNow();
            }
            if (store != null) {
                store.close();
            }
            client.close();
            throw e;
        }
        chunks = store;
        workers = pool;
        sweeper = sweep;
    }

    /** The SigV4 verifier of the config's users and region. */
    private static Authenticator verifier(S3Config config) {
        return new SigV4Verifier(config.users(), config.region, Clock.systemUTC())::verify;
    }

    /** A stable owner id for listings and ACLs: a hash of the first access key (never the secret). */
    private static String owner(S3Config config) {
        try {
            String key = config.users().keySet().iterator().next();
            byte[] h = MessageDigest.getInstance("SHA-256").digest(("hayloft-owner:" + key).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(h);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Starts a gateway on a validated config; returns once it listens. */
    public static S3Server start(S3Config config) throws InterruptedException {
        return new S3Server(config);
    }

    /** The port it listens on. */
    public int port() {
        return http.port();
    }

    public S3Config config() {
        return config;
    }

    /** Runs the orphan sweep once now (also what {@code hayloft s3 sweep} does); returns needles deleted. */
    public long sweep() {
        return chunks.sweep(config.orphanAfterMillis, config.abandonedUploadMillis);
    }

    private void sweepQuietly() {
        try {
            long n = sweep();
            if (n > 0) {
                LOG.info("orphan sweep deleted {} needles", n);
            }
        } catch (RuntimeException e) {
            LOG.warn("orphan sweep failed; it runs again in {} ms", config.sweepIntervalMillis, e);
        }
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (sweeper != null) {
            sweeper.shutdownNow();
        }
        http.close();
        workers.shutdownNow();
        try {
            workers.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        chunks.close();
        client.close();
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
