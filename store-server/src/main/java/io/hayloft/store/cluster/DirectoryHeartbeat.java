package io.hayloft.store.cluster;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.common.io.Disk;
import io.hayloft.common.wire.Wire;
import io.hayloft.store.Store;
import io.hayloft.store.volume.Volume;
import java.io.IOException;
import io.hayloft.client.http.HttpTransport;
import java.net.http.HttpRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registers the store with the directory and keeps telling it what the store holds: every
 * {@code interval} a {@link Wire.Heartbeat} with the store's id, advertised address, rack, disk
 * capacity and free space, and each volume's size and read-only flag. A heartbeat that fails is
 * logged (once per outage) and retried next period; it never stops the store. Thread-safe.
 */
public final class DirectoryHeartbeat implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(DirectoryHeartbeat.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Store store;
    private final String directory;
    private final String storeId;
    private final String address;
    private final String rack;
    private final Path dataDir;
    private final HttpTransport http;
    private final Duration interval;
    private final ScheduledExecutorService timer;
    private final String adminToken;
    private volatile boolean failing;

    /**
     * @param directory the directory's {@code host:port}
     * @param storeId   this store's stable id (see {@link #storeId(Path, String)})
     * @param address   the {@code host:port} other servers reach this store at
     */
    public DirectoryHeartbeat(Store store, String directory, String storeId, String address, String rack, Path dataDir,
                              Duration interval) {
        this(store, directory, storeId, address, rack, dataDir, interval, null);
    }

    /** @param adminToken the cluster's admin token, sent with each heartbeat (a secured directory needs it), or null */
    public DirectoryHeartbeat(Store store, String directory, String storeId, String address, String rack, Path dataDir,
                              Duration interval, String adminToken) {
        this(store, directory, storeId, address, rack, dataDir, interval, adminToken,
                HttpTransport.builder().connectTimeout(interval).requestTimeout(Duration.ofSeconds(5)).build());
    }

    /**
     * @param adminToken the cluster's admin token, sent with each heartbeat (a secured directory needs it), or null
     * @param http       the store's transport ({@code https://} and its certificate when the store has a trust store)
     */
    public DirectoryHeartbeat(Store store, String directory, String storeId, String address, String rack, Path dataDir,
                              Duration interval, String adminToken, HttpTransport http) {
        this.interval = interval;
        this.adminToken = adminToken == null || adminToken.isEmpty() ? null : adminToken;
        this.store = store;
        this.directory = directory;
        this.storeId = storeId;
        this.address = address;
        this.rack = rack;
        this.dataDir = dataDir;
        this.http = http;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "hayloft-store-heartbeat");
            t.setDaemon(true);
            return t;
        });
        timer.scheduleWithFixedDelay(() -> send(), 0, interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * The store's id, kept in {@code store.id} in its first data directory: read when present,
     * written (fsynced) on first start. A configured id that differs from the stored one is refused,
     * so two configurations never share one set of volumes by mistake.
     */
    public static String storeId(Path dataDir, String configured) throws IOException {
        return storeId(Disk.REAL, dataDir, configured);
    }

    /** {@link #storeId(Path, String)} on {@code disk}. */
    public static String storeId(Disk disk, Path dataDir, String configured) throws IOException {
        Path file = dataDir.resolve("store.id");
        if (disk.exists(file)) {
            String stored = new String(disk.readAllBytes(file), java.nio.charset.StandardCharsets.UTF_8).trim();
            if (configured != null && !configured.isBlank() && !configured.equals(stored)) {
                throw new IllegalArgumentException("storeId '" + configured + "' does not match '" + stored + "' recorded in " + file);
            }
            return stored;
        }
        String id = configured != null && !configured.isBlank() ? configured
                : "store-" + Long.toHexString(new java.security.SecureRandom().nextLong() & Long.MAX_VALUE);
        disk.createDirectories(dataDir);
        Path tmp = dataDir.resolve("store.id.tmp");
        try (var ch = disk.open(tmp, java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.TRUNCATE_EXISTING, java.nio.file.StandardOpenOption.WRITE)) {
            io.hayloft.store.volume.FileIo.writeFully(ch,
                    java.nio.ByteBuffer.wrap((id + "\n").getBytes(java.nio.charset.StandardCharsets.UTF_8)), 0);
            ch.force(true);
        }
        disk.move(tmp, file);
        io.hayloft.store.volume.FileIo.syncDirectory(disk, dataDir);
        return id;
    }

    /** Sends one heartbeat now; completes when the directory answered (or failed). */
    public CompletableFuture<Void> send() {
        try {
            List<Wire.VolumeReport> volumes = new ArrayList<>();
            for (Volume v : store.volumes()) {
                Volume.Status s = v.status();
                volumes.add(new Wire.VolumeReport((int) v.id(), s.sizeBytes(), s.readOnly()));
            }
            Disk disk = store.disk();
            Wire.Heartbeat hb = new Wire.Heartbeat(storeId, address, rack, disk.totalSpace(dataDir), disk.usableSpace(dataDir),
                    volumes);
            HttpRequest.Builder b = http.request(http.uri(directory, "/v1/heartbeat"))
                    .timeout(Duration.ofSeconds(5)).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(hb)));
            if (adminToken != null) {
                b.header("Authorization", "Bearer " + adminToken);
            }
            HttpRequest req = b.build();
            // A heartbeat is idempotent (the directory keeps the latest): retried within one interval (at least 5 s).
            Duration deadline = interval.compareTo(Duration.ofSeconds(5)) > 0 ? interval : Duration.ofSeconds(5);
            return http.call(directory, "POST /v1/heartbeat", req, true, deadline, s -> s == 200, HttpTransport.TYPED)
                    .handle((r, err) -> {
                String problem = err != null ? String.valueOf(io.hayloft.client.Futures.unwrap(err).getMessage()) : null;
                if (problem != null && !failing) {
                    LOG.warn("heartbeat to directory {} failed ({}); will keep trying", directory, problem);
                } else if (problem == null && failing) {
                    LOG.info("heartbeat to directory {} works again", directory);
                }
                failing = problem != null;
                return null;
            });
        } catch (IOException | RuntimeException e) {
            LOG.warn("could not build a heartbeat for directory {}", directory, e);
            return CompletableFuture.completedFuture(null);
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
