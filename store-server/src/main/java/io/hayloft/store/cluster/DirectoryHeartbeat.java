package io.hayloft.store.cluster;

import io.hayloft.client.DirectoryClient;
import io.hayloft.client.Futures;
import io.hayloft.client.http.AddressList;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.format.io.PositionalIo;
import io.hayloft.format.wire.Wire;
import io.hayloft.serverkit.io.Disk;
import io.hayloft.store.Store;
import io.hayloft.store.volume.FileIo;
import io.hayloft.store.volume.Volume;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registers the store with the directory and keeps telling it what the store holds: every
 * {@code interval} (the first at once) a {@link Wire.Heartbeat} with the store's id, advertised
 * address, rack, disk capacity and free space, and each volume's size and read-only flag; and at
 * once, out of turn, when a volume turns read-only ({@link #volumeReadOnly}), so the directory
 * stops leasing it. A heartbeat that fails is logged (once per outage) and retried next period; it
 * never stops the store.
 *
 * <p>Delete-log sync: the directory answers with each volume's delete-log head
 * ({@link Wire.HeartbeatAnswer#deleteHeads()}); {@link DeleteLogSync} applies what a volume lacks
 * and marks it synced, so it serves reads. Syncs run on one thread of their own, so
 * two never touch one volume at once, and a slow sync never delays a heartbeat. A volume whose sync
 * fails stays as it was (still syncing if it never synced) and is tried again after the next
 * heartbeat.
 *
 * <p>Thread-safe.
 */
public final class DirectoryHeartbeat implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(DirectoryHeartbeat.class);

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
    private final DirectoryClient directoryClient;
    /** Runs the delete-log syncs, one at a time. */
    private final ExecutorService syncer;
    /** Volumes reported read-only in a heartbeat already: a 409 of a full volume triggers one heartbeat, not one per write. */
    private final Set<Long> reportedReadOnly = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean urgentQueued = new AtomicBoolean();
    private final CompletableFuture<Void> firstSync = new CompletableFuture<>();

    /**
     * @param directory the directory's {@code host:port}, or its replicas' as a comma-separated list
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
        this(store, AddressList.parse("directory", directory), storeId, address, rack, dataDir, interval, adminToken, http);
    }

    /**
     * @param directories the directory's {@code host:port}, or its group's replicas' (the heartbeat goes to the
     *                    leader: a follower's "not the leader" is followed by the transport)
     * @param adminToken  the cluster's admin token, sent with each heartbeat (a secured directory needs it), or null
     * @param http        the store's transport ({@code https://} and its certificate when the store has a trust store)
     */
    public DirectoryHeartbeat(Store store, List<String> directories, String storeId, String address, String rack, Path dataDir,
                              Duration interval, String adminToken, HttpTransport http) {
        String directory = String.join(",", directories);
        this.interval = interval;
        this.adminToken = adminToken == null || adminToken.isEmpty() ? null : adminToken;
        this.store = store;
        this.directory = directory;
        this.storeId = storeId;
        this.address = address;
        this.rack = rack;
        this.dataDir = dataDir;
        this.http = http;
        this.directoryClient = new DirectoryClient(http, directories, this.adminToken);
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "hayloft-store-heartbeat");
            t.setDaemon(true);
            return t;
        });
        this.syncer = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "hayloft-store-delete-sync");
            t.setDaemon(true);
            return t;
        });
        store.onReadOnly(this::volumeReadOnly);
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
            String stored = new String(disk.readAllBytes(file), StandardCharsets.UTF_8).trim();
            if (configured != null && !configured.isBlank() && !configured.equals(stored)) {
                throw new IllegalArgumentException("storeId '" + configured + "' does not match '" + stored + "' recorded in " + file);
            }
            return stored;
        }
        String id = configured != null && !configured.isBlank() ? configured
                : "store-" + Long.toHexString(new SecureRandom().nextLong() & Long.MAX_VALUE);
        disk.createDirectories(dataDir);
        Path tmp = dataDir.resolve("store.id.tmp");
        try (var ch = disk.open(tmp, StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            PositionalIo.writeFully(ch,
                    ByteBuffer.wrap((id + "\n").getBytes(StandardCharsets.UTF_8)), 0);
            ch.force(true);
        }
        disk.move(tmp, file);
        FileIo.syncDirectory(disk, dataDir);
        return id;
    }

    /**
     * Sends one heartbeat now and applies the delete logs its answer says are ahead; completes when
     * that is done (or failed: never exceptionally).
     */
    public CompletableFuture<Void> send() {
        try {
            List<Wire.VolumeReport> volumes = new ArrayList<>();
            Set<Long> readOnly = new HashSet<>();
            List<Long> reported = new ArrayList<>();
            for (Volume v : store.volumes()) {
                reported.add(v.id());
                Volume.Status s = v.status();
                volumes.add(new Wire.VolumeReport((int) v.id(), s.sizeBytes(), s.readOnly()));
                if (s.readOnly()) {
                    readOnly.add(v.id());
                }
            }
            Disk disk = store.disk();
            Wire.Heartbeat hb = new Wire.Heartbeat(storeId, address, rack, disk.totalSpace(dataDir), disk.usableSpace(dataDir),
                    volumes);
            return directoryClient.heartbeatAnswer(hb).handle((answer, err) -> {
                String problem = err != null ? String.valueOf(Futures.unwrap(err).getMessage()) : null;
                if (problem != null && !failing) {
                    LOG.warn("heartbeat to directory {} failed ({}); will keep trying", directory, problem);
                } else if (problem == null && failing) {
                    LOG.info("heartbeat to directory {} works again", directory);
                }
                failing = problem != null;
                if (answer != null) {
                    reportedReadOnly.addAll(readOnly);
                }
                return answer;
            }).thenComposeAsync(answer -> {
                if (answer != null) {
                    syncDeletes(answer, reported);
                }
                return CompletableFuture.<Void>completedFuture(null);
            }, syncer).handle((v, err) -> {
                if (err != null && !syncer.isShutdown()) {
                    LOG.warn("delete-log sync after a heartbeat failed", err);
                }
                firstSync.complete(null);
                return null;
            });
        } catch (IOException | RuntimeException e) {
            LOG.warn("could not build a heartbeat for directory {}", directory, e);
            firstSync.complete(null);
            return CompletableFuture.completedFuture(null);
        }
    }

    /**
     * Completes when the first heartbeat since start and the delete-log sync after it are done
     * (or failed); the store server waits for it, bounded, before it reports itself started.
     */
    public CompletableFuture<Void> firstSync() {
        return firstSync;
    }

    /**
     * Volume {@code id} turned read-only: sends a heartbeat at once (unless one is queued already
     * or a heartbeat reported the volume read-only before), so the directory stops leasing it
     * within milliseconds rather than at the next tick.
     */
    public void volumeReadOnly(long id) {
        if (reportedReadOnly.contains(id) || !urgentQueued.compareAndSet(false, true)) {
            return;
        }
        try {
            timer.execute(() -> {
                urgentQueued.set(false);
                send();
            });
        } catch (RejectedExecutionException closed) {
            urgentQueued.set(false);
        }
    }

    /** Applies what the answer says each volume lacks of its delete log; runs on the syncer thread. */
    private void syncDeletes(Wire.HeartbeatAnswer answer, List<Long> reported) {
        DeleteLogSync.sync(store, directoryClient, answer, reported);
    }

    @Override
    public void close() {
        timer.shutdownNow();
        syncer.shutdownNow();
        store.onReadOnly(null);
    }
}
