package io.hayloft.cli.cluster;

import io.hayloft.client.DirectoryClient;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import io.hayloft.directory.raft.LocalGroup;
import io.hayloft.format.wire.Wire;
import io.hayloft.s3.S3Config;
import io.hayloft.s3.S3Server;
import io.hayloft.serverkit.io.Disk;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import io.hayloft.store.WriteAuthorizer;
import io.hayloft.store.cluster.ClusterAuthorizer;
import io.hayloft.store.cluster.DeleteLogSync;
import io.hayloft.store.volume.Volume;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A whole Hayloft cluster in one process on loopback ports: a directory server and N store servers,
 * each store sending heartbeats to the directory like a separate one would. Everything is kept under
 * one data directory, so a restart (of the process, of the directory, of one store) keeps every
 * photo; the ports are recorded there ({@link ClusterLayout}) and reused, so addresses survive a
 * restart. It is what {@code hayloft cluster} runs and what the end-to-end tests use, in the manner
 * of Hadoop's MiniDFSCluster: tests stop, start and restart single stores or the directory.
 *
 * <pre>
 * DATA/cluster.properties   ports and racks (ClusterLayout)
 * DATA/directory/           the directory's RocksDB
 * DATA/directory-&lt;i&gt;/       with {@code directories} &gt; 1: replica n&lt;i+1&gt; of the directory group (db/ and raft/)
 * DATA/store-&lt;i&gt;/           store i's volumes
 * </pre>
 *
 * <p>With {@link ClusterOptions#withS3(int)}, an S3 gateway runs beside it ({@link #s3Address()},
 * the user of {@link ClusterOptions#s3AccessKey()}), started last and stopped first; its port is
 * kept across {@link #crashS3()} and {@link #startS3()}.
 *
 * <p>With {@link ClusterOptions#directories()} &gt; 1 the directory is a Raft group of that many
 * replicas ({@code n1}, {@code n2}, ...) in this process, each on its own HTTP and Raft port; the stores
 * and clients are given every replica's address ({@link #directoryAddress()} is the comma-separated
 * list) and {@link #directory()} is the replica that leads.
 *
 * <p>Thread-safe: the life-cycle methods are synchronized; heartbeats run on their own thread.
 */
public final class EmbeddedCluster implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(EmbeddedCluster.class);
    /** How long a store's start waits for the directory to take its registration (first heartbeat). */
    static final Duration REGISTRATION_PATIENCE = Duration.ofSeconds(60);

    private final ClusterOptions options;
    private final ClusterLayout layout;
    private final StoreServer[] stores;
    private final Disk[] disks;
    private final HttpTransport http;
    private DirectoryServer directory;
    /** The replicas of a directory group; null for a single directory. */
    private final LocalGroup group;
    private volatile DirectoryClient heartbeats;
    /** The address list of a directory run elsewhere ({@link #startWithDirectory}), or null. */
    private String external;
    /** The address the stores bind to and register. */
    private String storeHost = "127.0.0.1";
    private volatile ScheduledExecutorService timer;
    private final AtomicBoolean urgentQueued = new AtomicBoolean();
    private boolean closed;
    private Consumer<DirectoryConfig> directoryExtras = c -> { };
    private S3Server s3; // null while not running
    private int s3Port; // the gateway's port once it ran (0 before)

    private EmbeddedCluster(ClusterOptions options, IntFunction<Disk> disks) throws IOException {
        this.options = options;
        Files.createDirectories(options.dataDir());
        this.layout = ClusterLayout.load(options.dataDir(), options.stores(), options.racks(), options.directoryPort(),
                options.directories());
        this.group = layout.replicas() == 0 ? null : LocalGroup.builder(layout.replicas(), this::replicaBase, options.dataDir())
                .dirNames(i -> "directory-" + i).ports(layout::replicaHttpPort, layout::replicaRaftPort).build();
        this.stores = new StoreServer[layout.stores()];
        this.disks = new Disk[layout.stores()];
        for (int i = 0; i < this.disks.length; i++) {
            Disk d = disks.apply(i);
            this.disks[i] = d == null ? Disk.REAL : d;
        }
        this.http = HttpTransport.builder().connectTimeout(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(5)).build();
    }

    /** Starts a directory and the stores of {@code options}, registered and ready for writes. */
    public static EmbeddedCluster start(ClusterOptions options) throws IOException, InterruptedException {
        return start(options, i -> Disk.REAL);
    }

    /**
     * As {@link #start(ClusterOptions)}, store {@code i} writing through {@code disks.apply(i)} (asked
     * once per store; the same disk is used again when the store restarts, so a simulated disk keeps
     * what it made durable across a crash or power cut).
     */
    public static EmbeddedCluster start(ClusterOptions options, IntFunction<Disk> disks) throws IOException, InterruptedException {
        return start(options, disks, c -> { });
    }

    /**
     * As {@link #start(ClusterOptions, IntFunction)}, with settings applied to the directory's
     * configuration after the cluster's own, at this and every later start of the directory: e.g. the
     * {@code raidNode}, {@code cacheNodes} or {@code gutterNodes} of servers run beside the cluster.
     */
    public static EmbeddedCluster start(ClusterOptions options, IntFunction<Disk> disks,
                                        Consumer<DirectoryConfig> directoryExtras)
            throws IOException, InterruptedException {
        EmbeddedCluster c = new EmbeddedCluster(options, disks);
        c.directoryExtras = Objects.requireNonNull(directoryExtras, "directoryExtras");
        try {
            c.startDirectory();
            for (int i = 0; i < c.stores.length; i++) {
                c.startStore(i);
            }
            c.startHeartbeats();
            if (options.s3Port() >= 0) {
                c.startS3();
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    /**
     * Starts the stores of {@code options} (no directory of its own) against a directory run elsewhere,
     * e.g. a group of replicas: {@code directory} is its address list {@code h1:p1,h2:p2,h3:p3}. The
     * directory's life cycle is the caller's ({@link #startDirectory()} and {@link #stopDirectory()} do
     * nothing); build its replicas' configuration with {@link #directoryConfig(ClusterOptions)}.
     */
    public static EmbeddedCluster startWithDirectory(ClusterOptions options, IntFunction<Disk> disks, String directory)
            throws IOException, InterruptedException {
        return startWithDirectory(options, disks, directory, "127.0.0.1");
    }

    /**
     * As {@link #startWithDirectory(ClusterOptions, IntFunction, String)}, the stores bound to and registered
     * with {@code storeHost}, an address of this machine the directory reaches them at (e.g. this
     * namespace's end of a link to replicas on simulated hosts, where {@code 127.0.0.1} is their own).
     */
    public static EmbeddedCluster startWithDirectory(ClusterOptions options, IntFunction<Disk> disks, String directory,
                                                     String storeHost) throws IOException, InterruptedException {
        EmbeddedCluster c = new EmbeddedCluster(options, disks);
        c.storeHost = Objects.requireNonNull(storeHost, "storeHost");
        c.external = Objects.requireNonNull(directory, "directory");
        c.heartbeats = new DirectoryClient(c.http, List.of(directory.split(",")), options.adminToken());
        try {
            for (int i = 0; i < c.stores.length; i++) {
                c.startStore(i);
            }
            c.startHeartbeats();
            if (options.s3Port() >= 0) {
                c.startS3();
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            c.close();
            throw e;
        }
        return c;
    }

    private void startHeartbeats() {
        timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "hayloft-cluster-heartbeats");
            t.setDaemon(true);
            return t;
        });
        long period = options.heartbeatMillis();
        timer.scheduleWithFixedDelay(this::heartbeatQuietly, period, period, TimeUnit.MILLISECONDS);
    }

    /**
     * The configuration a cluster's directory starts with (data in {@code DATA/directory}, a free port,
     * {@code options}' replication, volume limit, probe timing, secret and token; not validated), for a
     * directory run beside {@link #startWithDirectory}.
     */
    public static DirectoryConfig directoryConfig(ClusterOptions options) {
        DirectoryConfig c = new DirectoryConfig();
        c.dataDir = options.dataDir().resolve("directory").toString();
        c.host = "127.0.0.1";
        c.port = 0;
        c.init = true;
        c.replication = Math.min(options.replication(), options.stores());
        c.volumeLimitBytes = options.volumeLimitBytes();
        c.probeIntervalMillis = options.probeIntervalMillis();
        c.probeTimeoutMillis = Math.max(5000, 2 * options.probeIntervalMillis());
        c.autoRestore = true;
        c.failureThreshold = options.failureThreshold();
        c.clusterSecret = options.clusterSecret();
        c.adminToken = options.adminToken();
        return c;
    }

    public ClusterOptions options() {
        return options;
    }

    /** {@code host:port} of the directory; for a directory group, every replica's, comma-separated. */
    public synchronized String directoryAddress() {
        return external != null ? external : String.join(",", directoryAddresses());
    }

    /** {@code host:port} of the directory, or of each replica of the directory group (an external one's too). */
    public synchronized List<String> directoryAddresses() {
        if (external != null) {
            return List.of(external.split(","));
        }
        return group == null ? List.of("127.0.0.1:" + layout.directoryPort()) : group.addresses();
    }

    /**
     * The running directory server, or null while it is stopped; for a directory group, the replica
     * that leads now (else the first one running).
     */
    public synchronized DirectoryServer directory() {
        if (group == null) {
            return directory;
        }
        int leader = group.leader();
        if (leader >= 0) {
            return group.server(leader);
        }
        for (int i = 0; i < group.size(); i++) {
            if (group.server(i) != null) {
                return group.server(i);
            }
        }
        return null;
    }

    /** {@code host:port} of replica {@code i}'s Raft RPC. */
    public synchronized String replicaRaftAddress(int i) {
        return "127.0.0.1:" + layout.replicaRaftPort(checkReplica(i));
    }

    /** Directory replicas: 1 for a single directory. */
    public int directoryCount() {
        return group == null ? 1 : group.size();
    }

    /** Replica {@code i} of the directory group (the single directory for 0), or null while it is stopped. */
    public synchronized DirectoryServer directory(int i) {
        if (group == null && i == 0) {
            return directory;
        }
        return group.server(checkReplica(i));
    }

    public int storeCount() {
        return stores.length;
    }

    /** The id store {@code i} registers with: {@code store-<i>}. */
    public static String storeId(int i) {
        return "store-" + i;
    }

    /** {@code host:port} of store {@code i} (its recorded port, also while it is stopped). */
    public synchronized String storeAddress(int i) {
        return storeHost + ":" + layout.storePort(i);
    }

    /** The index of the store at {@code address}, or -1. */
    public synchronized int storeIndex(String address) {
        for (int i = 0; i < stores.length; i++) {
            if (storeAddress(i).equals(address) || address.endsWith("//" + storeAddress(i))) {
                return i;
            }
        }
        return -1;
    }

    /** The running store server {@code i}, or null while it is stopped. */
    public synchronized StoreServer store(int i) {
        return stores[check(i)];
    }

    /** The disk store {@code i} writes through ({@link Disk#REAL} unless one was given to {@link #start(ClusterOptions, IntFunction)}). */
    public Disk disk(int i) {
        return disks[check(i)];
    }

    /** Store {@code i}'s data directory ({@code DATA/store-<i>}); its block files are in {@code blocks/} below it. */
    public Path storeDir(int i) {
        return options.dataDir().resolve(storeId(check(i)));
    }

    /** A client for this cluster (with its admin token, if any) and short timeouts suited to loopback; the caller closes it. */
    public HayloftClient newClient() {
        return clientBuilder().build();
    }

    /** The builder {@link #newClient()} uses (short timeouts and backoffs, the admin token), to change before building. */
    public HayloftClient.Builder clientBuilder() {
        HayloftClient.Builder b = HayloftClient.builder().directory(directoryAddresses().toArray(String[]::new)).connectTimeout(Duration.ofSeconds(1))
                .requestTimeout(Duration.ofSeconds(5)).backoff(Duration.ofMillis(20), Duration.ofMillis(200));
        if (options.adminToken() != null) {
            b.adminToken(options.adminToken());
        }
        return b;
    }

    /** Starts the directory (after {@link #stopDirectory()}); it opens its existing database. A group: every replica. */
    public synchronized void startDirectory() throws InterruptedException {
        if (external != null) {
            return;
        }
        if (group != null) {
            group.startAll(); // every replica not running, at once
            awaitLeader(Duration.ofSeconds(60));
            LOG.info("embedded directory group on {}", directoryAddress());
            return;
        }
        if (directory != null) {
            return;
        }
        DirectoryConfig c = directoryConfig();
        c.dataDir = options.dataDir().resolve("directory").toString();
        c.port = layout.directoryPort();
        directoryExtras.accept(c);
        try {
            directory = DirectoryServer.start(c.validate());
        } catch (Exception e) {
            if (!(e instanceof BindException) || c.port == 0) {
                throw e;
            }
            LOG.warn("directory cannot bind its recorded port {} ({}); taking a free one", c.port, e.getMessage());
            c.port = 0;
            directory = DirectoryServer.start(c);
        }
        if (layout.directoryPort() != directory.port()) {
            layout.setDirectoryPort(directory.port());
            save();
        }
        heartbeats = new DirectoryClient(http, List.of(directoryAddress()), options.adminToken());
        LOG.info("embedded directory on {}", directoryAddress());
    }

    /** The configuration every directory of this cluster shares, but its {@code dataDir} (a replica adds its raft section). */
    private DirectoryConfig directoryConfig() {
        DirectoryConfig c = new DirectoryConfig();
        c.host = "127.0.0.1";
        c.init = true;
        c.replication = Math.min(options.replication(), stores.length);
        c.volumeLimitBytes = options.volumeLimitBytes();
        c.probeIntervalMillis = options.probeIntervalMillis();
        // Lenient probes for one shared machine: a store busy with a burst of fsynced writes is not dead,
        // and one that answers again comes back by itself.
        // A stopped store fails a probe at once (connection refused); the timeout only guards against a
        // hung one, so it is generous: a busy machine must not fail healthy stores.
        c.probeTimeoutMillis = Math.max(5000, 2 * options.probeIntervalMillis());
        c.autoRestore = true;
        c.failureThreshold = options.failureThreshold();
        c.clusterSecret = options.clusterSecret();
        c.adminToken = options.adminToken();
        return c;
    }

    /** The id of replica {@code i} of the directory group: {@code n<i+1>}. */
    public static String replicaId(int i) {
        return LocalGroup.replicaId(i);
    }

    /**
     * Waits until a running replica of the directory group leads (its first entries applied), then
     * points the heartbeats at it first (the others after it, in order). A single directory leads
     * while it runs.
     *
     * @throws IllegalStateException when none leads within {@code patience}
     */
    public void awaitLeader(Duration patience) throws InterruptedException {
        if (group == null) {
            synchronized (this) {
                if (directory == null) {
                    throw new IllegalStateException("the directory " + directoryAddress() + " is stopped");
                }
                return;
            }
        }
        int leader = group.awaitLeader(patience);
        List<String> order = new ArrayList<>(group.addresses());
        order.add(0, order.remove(leader));
        heartbeats = new DirectoryClient(http, order, options.adminToken());
    }

    /**
     * A replica's configuration before the group gives it its place (data directory, ports, raft id
     * and peers): the cluster's directory settings, a {@code raft} section of defaults, then the extras.
     */
    private DirectoryConfig replicaBase() {
        DirectoryConfig c = directoryConfig();
        c.raft = new DirectoryConfig.Raft();
        directoryExtras.accept(c);
        return c;
    }

    /** Stops the directory (clean close; a group: every replica); stores keep running and their heartbeats fail meanwhile. */
    public synchronized void stopDirectory() {
        if (directory != null) {
            directory.close();
            directory = null;
        }
        if (group != null) {
            group.stopAll();
        }
    }

    /** Stops replica {@code i} of the directory group (clean close); the others elect a leader among them. */
    public synchronized void stopDirectory(int i) {
        group.stop(checkReplica(i));
    }

    /** Starts replica {@code i} of the directory group again (its data kept: it catches up from the leader). */
    public synchronized void startDirectory(int i) throws InterruptedException {
        group.start(checkReplica(i));
    }

    private int checkReplica(int i) {
        if (group == null || i < 0 || i >= group.size()) {
            throw new IllegalArgumentException(group == null ? "this cluster runs a single directory, not a group"
                    : "directory replica index must be in 0.." + (group.size() - 1) + ", was " + i);
        }
        return i;
    }

    public synchronized void restartDirectory() throws InterruptedException {
        stopDirectory();
        startDirectory();
        heartbeat();
    }

    /** Starts store {@code i} on its recorded port (a free one if that is taken) and registers it. */
    public synchronized void startStore(int i) throws IOException, InterruptedException {
        if (stores[check(i)] != null) {
            return;
        }
        StoreServer s;
        try {
            s = startServer(storeConfig(i, layout.storePort(i)), i);
        } catch (Exception e) {
            // Netty rethrows the BindException undeclared.
            if (!(e instanceof BindException) || layout.storePort(i) == 0) {
                throw e;
            }
            LOG.warn("store {} cannot bind its port {} ({}); taking a free one", i, layout.storePort(i), e.getMessage());
            s = startServer(storeConfig(i, 0), i);
        }
        stores[i] = s;
        if (layout.storePort(i) != s.port()) {
            layout.setStorePort(i, s.port());
            save();
        }
        StoreServer started = s;
        s.store().onReadOnly(id -> heartbeatSoon()); // a full or sealed volume: tell the directory at once
        if (directory() != null || external != null) {
            // Registration: retried until the start-up deadline, so a directory slow to answer the first
            // heartbeat (a loaded machine, a group still electing) does not end the cluster's start. An
            // external directory too: without it, clients started right after the cluster found no store
            // registered and every put failed (ConcurrentChaosTest's group schedule, once in a fresh verify).
            heartbeatAndSync(i, started, REGISTRATION_PATIENCE);
        }
        LOG.info("embedded store {} on {}", i, storeAddress(i));
    }

    /** Stops store {@code i} (clean close: its volumes are flushed); the directory's health checker will notice. */
    public synchronized void stopStore(int i) throws InterruptedException {
        StoreServer s = stores[check(i)];
        if (s != null) {
            stores[i] = null;
            s.close();
        }
    }

    /**
     * Stops store {@code i} as {@code kill -9} would: it stops serving and its files are closed with
     * nothing more written (no flush of the {@code .idx} checkpoint, no clean shutdown of volumes).
     * Start it again with {@link #startStore(int)}.
     */
    public synchronized void crashStore(int i) throws InterruptedException {
        StoreServer s = stores[check(i)];
        if (s != null) {
            stores[i] = null;
            s.crash();
        }
    }

    public synchronized void restartStore(int i) throws IOException, InterruptedException {
        stopStore(i);
        startStore(i);
    }

    /**
     * Sends one heartbeat for every running store now and waits for the answers. A heartbeat that
     * times out or meets an election is sent again (it is idempotent) until the registration patience
     * has run out: a directory just started on a loaded machine may be slow to answer the first.
     */
    public void heartbeat() {
        heartbeatRound(REGISTRATION_PATIENCE);
    }

    /** One heartbeat of every running store; with {@code patience}, each retried until it has run out. */
    private void heartbeatRound(Duration patience) {
        // The calls go out without the cluster's lock: a directory slow to commit (a Raft group on a
        // loaded machine) must not hold up a store's stop or crash. A store stopped meanwhile may still
        // get this round's heartbeat, as a real store killed right after sending one does.
        StoreServer[] running;
        synchronized (this) {
            if (directory() == null && external == null) {
                return;
            }
            running = stores.clone();
        }
        RuntimeException failed = null;
        for (int i = 0; i < running.length; i++) {
            if (running[i] != null) {
                try {
                    heartbeatAndSync(i, running[i], patience);
                } catch (RuntimeException e) {
                    if (patience != null) {
                        throw e;
                    }
                    // The timer's round goes on with the other stores: one store's failing heartbeat (a
                    // directory group electing, a commit timing out) must not keep those after it unregistered.
                    if (failed == null) {
                        failed = e;
                    } else {
                        failed.addSuppressed(e);
                    }
                }
            }
        }
        if (failed != null) {
            throw failed;
        }
    }

    /**
     * One heartbeat for store {@code i}, then the delete-log sync its answer asks for (as a store's
     * own {@link io.hayloft.store.cluster.DirectoryHeartbeat} does): the store's volumes serve reads
     * once it is done. With {@code patience}, the heartbeat is retried until it has run out.
     */
    private void heartbeatAndSync(int i, StoreServer s, Duration patience) {
        Wire.Heartbeat hb = heartbeat(i, s);
        Wire.HeartbeatAnswer answer = Futures.await(patience == null ? heartbeats.heartbeatAnswer(hb)
                : heartbeats.register(hb, patience));
        List<Long> reported = new ArrayList<>();
        for (Wire.VolumeReport v : hb.volumes()) {
            reported.add((long) v.id());
        }
        DeleteLogSync.sync(s.store(), heartbeats, answer, reported);
    }

    /** A heartbeat of every store soon, out of turn (a volume turned read-only); one queued at a time. */
    private void heartbeatSoon() {
        ScheduledExecutorService t = timer;
        if (t != null && urgentQueued.compareAndSet(false, true)) {
            try {
                t.execute(() -> {
                    urgentQueued.set(false);
                    heartbeatQuietly();
                });
            } catch (RejectedExecutionException closed) {
                urgentQueued.set(false);
            }
        }
    }

    private void heartbeatQuietly() {
        try {
            heartbeatRound(null); // the timer's round: one try, the next round is the retry
        } catch (RuntimeException e) {
            LOG.debug("heartbeat failed: {}", e.getMessage());
        }
    }

    private Wire.Heartbeat heartbeat(int i, StoreServer s) {
        List<Wire.VolumeReport> volumes = new ArrayList<>();
        for (Volume v : s.store().volumes()) {
            Volume.Status st = v.status();
            volumes.add(new Wire.VolumeReport((int) st.id(), st.sizeBytes(), st.readOnly()));
        }
        long capacity;
        long free;
        try {
            FileStore fs = Files.getFileStore(options.dataDir());
            capacity = fs.getTotalSpace();
            free = fs.getUsableSpace();
        } catch (IOException e) {
            capacity = 0;
            free = 0;
        }
        return new Wire.Heartbeat(storeId(i), storeAddress(i), layout.rack(i), capacity, free, volumes);
    }

    private StoreServer startServer(StoreConfig config, int i) throws IOException, InterruptedException {
        return StoreServer.start(config, authorizer(), disks[i]);
    }

    private WriteAuthorizer authorizer() {
        return new ClusterAuthorizer(options.clusterSecret(), options.adminToken(), Clock.systemUTC());
    }

    private StoreConfig storeConfig(int i, int port) throws IOException {
        Path dir = options.dataDir().resolve(storeId(i));
        Files.createDirectories(dir);
        StoreConfig c = new StoreConfig();
        c.dataDirs = List.of(dir.toString());
        c.host = storeHost;
        c.port = port;
        c.volumeSizeLimit = options.volumeLimitBytes();
        c.fsync = options.fsync() ? "always" : "never";
        c.diskThreads = 8;
        c.ioThreads = 1;
        c.awaitDeleteSync = true; // the cluster heartbeats for its stores and applies their delete logs
        return c.validate();
    }

    private void save() {
        try {
            layout.save(options.dataDir());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot record the cluster layout in " + options.dataDir() + ": " + e.getMessage(), e);
        }
    }

    private int check(int i) {
        if (i < 0 || i >= stores.length) {
            throw new IllegalArgumentException("store index must be in 0.." + (stores.length - 1) + ", was " + i);
        }
        return i;
    }

    // ---------------------------------------------------------------- the S3 gateway

    /** {@code 127.0.0.1:PORT} of the S3 gateway (path-style endpoint {@code http://} + this). */
    public synchronized String s3Address() {
        if (s3Port == 0) {
            throw new IllegalStateException("no S3 gateway: ClusterOptions.withS3(port)");
        }
        return "127.0.0.1:" + s3Port;
    }

    /** The running S3 gateway, or null. */
    public synchronized S3Server s3() {
        return s3;
    }

    /** The gateway's configuration: this cluster's directory, loopback, the options' user, no periodic sweep. */
    public synchronized S3Config s3Config() {
        S3Config c = new S3Config();
        c.directory = directoryAddress();
        c.directoryToken = options.adminToken();
        c.host = "127.0.0.1";
        c.port = s3Port > 0 ? s3Port : Math.max(0, options.s3Port());
        c.accessKey = options.s3AccessKey();
        c.secretKey = options.s3SecretKey();
        return c;
    }

    /** Starts the S3 gateway (again), on the port it had before. */
    public synchronized void startS3() throws InterruptedException {
        if (s3 != null) {
            throw new IllegalStateException("the S3 gateway runs already");
        }
        s3 = S3Server.start(s3Config().validate());
        s3Port = s3.port();
    }

    /**
     * Stops the S3 gateway without any cleanup of its own work (as a kill -9 would leave it: uploads
     * in flight are neither committed nor aborted; their pending records stay for the sweep).
     */
    public synchronized void crashS3() {
        if (s3 != null) {
            S3Server g = s3;
            s3 = null;
            g.close();
        }
    }

    /** Runs the gateway's orphan sweep once (its orphanAfterMillis, abandonedUploadMillis); returns needles deleted. */
    public synchronized long sweepS3() {
        if (s3 == null) {
            throw new IllegalStateException("no S3 gateway running");
        }
        return s3.sweep();
    }

    /** Stops the S3 gateway, the heartbeats, the stores and the directory (each flushed and closed). Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            crashS3();
        } catch (RuntimeException e) {
            LOG.warn("stopping the S3 gateway failed", e);
        }
        if (timer != null) {
            timer.shutdownNow();
        }
        for (int i = 0; i < stores.length; i++) {
            try {
                stopStore(i);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                LOG.warn("stopping store {} failed", i, e);
            }
        }
        stopDirectory();
    }
}
