package io.hayloft.bench.failover;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.serverkit.config.Ports;
import io.hayloft.serverkit.io.FileTrees;
import io.hayloft.testkit.Await;
import io.hayloft.testkit.HostProcess;
import io.hayloft.testkit.PrometheusText;
import io.hayloft.testkit.SimulatedHost;
import io.hayloft.testkit.SimulatedHosts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * A replicated directory of three replicas and a few stores, each a separate process started the
 * way an operator starts them ({@code hayloft directory --init --config F} with the issue's {@code raft}
 * section, {@code hayloft store --config F} with {@code directory: a,b,c}), for the failover load tool
 * and the failover tests: kill -9 a process and start it again with the same command, wipe a
 * replica's data, ask each replica who leads.
 *
 * <p>On {@link SimulatedHosts} (when {@link Options#simulated}) every replica and every store is a host of
 * its own (replica {@code nI} and store {@code sI} on rack {@code rI}), all using the same ports on their
 * own addresses, so a test can cut hosts apart; the caller (this JVM) reaches every host. Otherwise all
 * run on loopback with free ports.
 *
 * <p>With {@link Options#directoryBase} the replicas' settings are those of a given {@link DirectoryConfig}
 * (its {@code raft} section made here) instead of this class's own; with {@link Options#stores} 0 there
 * are no store processes (the caller runs its stores, e.g. in its own process: on simulated hosts they
 * must listen on {@link SimulatedHosts#testJvm()}'s address for the replicas to reach them).
 *
 * <p>The processes are started with {@link Options#launcher} (e.g. {@code java -jar cli/target/hayloft.jar},
 * or the test class path); their output goes to {@code dir/logs/NAME.log}, their temporary files to
 * {@code dir/tmp}. {@link #close()} kills them all (and the simulated hosts).
 *
 * <p>Thread-safe: the process of a node is swapped atomically; the methods that start and kill are synchronized.
 */
public final class GroupProcesses implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory())
            .setDefaultPropertyInclusion(JsonInclude.Include.NON_NULL);
    /** Ports on simulated hosts (every host has its own address). */
    private static final int HTTP_PORT = 7000;
    private static final int RAFT_PORT = 7100;
    private static final int STORE_PORT = 8080;
    /**
     * How often a wait asks the servers (each asking a round of HTTP calls to several of them): asked every
     * few milliseconds, they spent on answering the CPU that a restarting replica needed to get there.
     */
    public static final Duration ASK_EVERY = Duration.ofMillis(50);
    /** The log line of a replica that loads a leader's snapshot (DirectoryStateMachine). */
    private static final String INSTALLING = "loading the leader's snapshot";

    /** How to start the group; public fields, mutable until {@link #start}. */
    public static final class Options {
        /** Where configs, data and logs go. */
        public Path dir;
        /** Run on simulated hosts (network namespaces); else on loopback. */
        public boolean simulated;
        /** The command that runs {@code hayloft} (followed by the subcommand and its arguments), a java first. */
        public List<String> launcher;
        public long electionTimeoutMillis = 500;
        public long snapshotEvery = 10_000;
        public long logSegmentBytes = 8L << 20;
        public int stores = 3;
        public long volumeLimitBytes = 64L << 20;
        public int heartbeatMillis = 1000;
        public int minWritableVolumes = 2;
        /** The directory's health-checker period (large: no probe verdicts, so a test's state holds still once stores stop). */
        public long probeIntervalMillis = 1000;
        public long commitTimeoutMillis = 5000;
        /** How long the processes may take to start and form the group (JVMs start slowly on a busy machine). */
        public Duration startTimeout = Duration.ofSeconds(180);
        /**
         * The replicas' settings (a fresh copy per replica; its {@code dataDir} and {@code raft} section are set
         * here, from this class's data directories, addresses and raft options), or null for this class's own.
         */
        public Supplier<DirectoryConfig> directoryBase;
    }

    /** {@code java OPTS -jar JAR}: the fat jar. */
    public static List<String> jarLauncher(Path jar, List<String> jvmOptions) {
        List<String> l = new ArrayList<>(List.of(SimulatedHosts.java()));
        l.addAll(jvmOptions);
        l.addAll(List.of("-jar", jar.toAbsolutePath().toString()));
        return l;
    }

    /** {@code java OPTS -cp CLASSPATH io.hayloft.cli.Hayloft}: this JVM's class path (tests). */
    public static List<String> classPathLauncher(List<String> jvmOptions) {
        List<String> l = new ArrayList<>(List.of(SimulatedHosts.java()));
        l.addAll(jvmOptions);
        l.addAll(List.of("-cp", System.getProperty("java.class.path"), "io.hayloft.cli.Hayloft"));
        return l;
    }

    /**
     * {@code java OPTS -cp CLASSPATH io.hayloft.cli.Hayloft} with this JVM's class path, its jars first, and the
     * servers' classes mapped from a class-data-sharing archive made once under {@code archives}
     * ({@link SharedClasses}: a JVM start takes a third less CPU); tests.
     */
    public static List<String> classPathLauncher(List<String> jvmOptions, Path archives) {
        List<String> l = new ArrayList<>(List.of(SimulatedHosts.java()));
        l.addAll(jvmOptions);
        l.addAll(SharedClasses.options(jvmOptions, archives));
        l.addAll(List.of("-cp", SharedClasses.serverClassPath(), "io.hayloft.cli.Hayloft"));
        return l;
    }

    /** JVM options for each server process: small heaps, so seven JVMs fit a small machine. */
    public static List<String> smallJvm() {
        return List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k");
    }

    /** One server: a directory replica or a store. */
    public final class Node {
        private final String name;
        private final SimulatedHost host;
        private final String http;
        private final String raft;
        private final Path config;
        private final Path data;
        private final Path log;
        private final List<String> command;
        private volatile Object process; // HostProcess or Process
        /** Length of its log when it was last launched: what it logged since then comes after it. */
        private volatile long logOffset;

        Node(String name, SimulatedHost host, String http, String raft, Path config, Path data, List<String> command) {
            this.name = name;
            this.host = host;
            this.http = http;
            this.raft = raft;
            this.config = config;
            this.data = data;
            this.log = options.dir.resolve("logs").resolve(name + ".log");
            this.command = command;
        }

        public String name() {
            return name;
        }

        /** Its simulated host, or null on loopback. */
        public SimulatedHost host() {
            return host;
        }

        /** Its HTTP address, {@code host:port}. */
        public String http() {
            return http;
        }

        /** Its Raft address (replicas), or null. */
        public String raft() {
            return raft;
        }

        public Path data() {
            return data;
        }

        public Path log() {
            return log;
        }

        public Path config() {
            return config;
        }

        public boolean alive() {
            Object p = process;
            return p instanceof HostProcess hp ? hp.isAlive() : p instanceof Process pr && pr.isAlive();
        }

        @Override
        public String toString() {
            return name + " (" + http + ")";
        }
    }

    private final Options options;
    private final SimulatedHosts net;
    private final List<Node> replicas = new ArrayList<>();
    private final List<Node> stores = new ArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    private GroupProcesses(Options options, SimulatedHosts net) {
        this.options = options;
        this.net = net;
    }

    /**
     * Writes the configs and starts the three replicas and the stores; returns once a leader is
     * known, every store is registered and UP and the group has writable volumes.
     */
    public static GroupProcesses start(Options o) throws Exception {
        Files.createDirectories(o.dir.resolve("logs"));
        SimulatedHosts net = o.simulated ? SimulatedHosts.create() : null;
        GroupProcesses g = new GroupProcesses(o, net);
        try {
            g.configure();
            // Replicas and stores at once: a store that finds no leader yet keeps heartbeating until one answers.
            for (Node n : g.replicas) {
                g.launch(n);
            }
            for (Node n : g.stores) {
                g.launch(n);
            }
            if (o.stores == 0) {
                g.awaitReplicas(o.startTimeout);
                return g; // the caller's stores
            }
            g.awaitReady(o.startTimeout);
            return g;
        } catch (Exception | Error e) {
            g.close();
            throw e;
        }
    }

    private void configure() throws IOException {
        List<String[]> peers = new ArrayList<>(); // id, raft, http
        List<SimulatedHost> hosts = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            if (net != null) {
                SimulatedHost h = net.add("n" + i, "r" + i);
                hosts.add(h);
                peers.add(new String[] {"n" + i, h.address() + ":" + RAFT_PORT, h.address() + ":" + HTTP_PORT});
            } else {
                peers.add(new String[] {"n" + i, "127.0.0.1:" + Ports.free(), "127.0.0.1:" + Ports.free()});
            }
        }
        String peerYaml = peers.stream().map(p -> "    - {id: " + p[0] + ", raft: " + p[1] + ", http: " + p[2] + "}")
                .collect(Collectors.joining("\n"));
        for (int i = 0; i < 3; i++) {
            String id = peers.get(i)[0];
            Path data = options.dir.resolve(id);
            Path config = options.dir.resolve(id + ".yaml");
            if (options.directoryBase != null) {
                Files.writeString(config, replicaYaml(id, data, peers));
            } else {
                Files.writeString(config, "dataDir: " + data + "\n"
                        + "replication: 3\n"
                        + "minWritableVolumes: " + options.minWritableVolumes + "\n"
                        + "volumeLimitBytes: " + options.volumeLimitBytes + "\n"
                        + "probeIntervalMillis: " + options.probeIntervalMillis + "\n"
                        // Lenient probes: on a busy machine a store's /health may take seconds; a store that fails them comes back.
                        + "probeTimeoutMillis: 5000\n"
                        + "failureThreshold: 5\n"
                        + "autoRestore: true\n"
                        + "raft:\n"
                        + "  id: " + id + "\n"
                        + "  electionTimeoutMillis: " + options.electionTimeoutMillis + "\n"
                        + "  commitTimeoutMillis: " + options.commitTimeoutMillis + "\n"
                        + "  snapshotEvery: " + options.snapshotEvery + "\n"
                        + "  logSegmentBytes: " + options.logSegmentBytes + "\n"
                        + "  peers:\n" + peerYaml + "\n");
            }
            List<String> cmd = command();
            cmd.addAll(List.of("directory", "--init", "--config", config.toString()));
            replicas.add(new Node(id, net == null ? null : hosts.get(i), peers.get(i)[2], peers.get(i)[1], config, data, cmd));
        }
        String list = directoryList();
        for (int i = 1; i <= options.stores; i++) {
            String id = "s" + i;
            SimulatedHost h = net == null ? null : net.add(id, "r" + ((i - 1) % 3 + 1));
            String address = h == null ? "127.0.0.1:" + Ports.free() : h.address() + ":" + STORE_PORT;
            int colon = address.lastIndexOf(':');
            Path data = options.dir.resolve(id);
            Path config = options.dir.resolve(id + ".yaml");
            Files.writeString(config, "dataDirs: [" + data + "]\n"
                    + "host: " + address.substring(0, colon) + "\n"
                    + "port: " + address.substring(colon + 1) + "\n"
                    + "directory: " + list + "\n"
                    + "storeId: " + id + "\n"
                    + "rack: r" + ((i - 1) % 3 + 1) + "\n"
                    + "heartbeatMillis: " + options.heartbeatMillis + "\n"
                    + "volumeSizeLimit: " + options.volumeLimitBytes + "\n"
                    + "diskThreads: 8\n"
                    + "ioThreads: 2\n");
            List<String> cmd = command();
            cmd.addAll(List.of("store", "--config", config.toString()));
            stores.add(new Node(id, h, address, null, config, data, cmd));
        }
    }

    /**
     * The launcher with {@code -Djava.io.tmpdir=dir/tmp} after its java: what a process leaves in its temporary
     * directory when killed with SIGKILL (RocksDB's native library, 15 MB, extracted at each start) stays under
     * {@code dir}, not in /tmp.
     */
    private List<String> command() throws IOException {
        Path tmp = Files.createDirectories(options.dir.resolve("tmp"));
        List<String> cmd = new ArrayList<>(options.launcher);
        cmd.add(1, "-Djava.io.tmpdir=" + tmp);
        return cmd;
    }

    /** A replica's configuration from {@link Options#directoryBase}: its settings, this data directory and raft section. */
    private String replicaYaml(String id, Path data, List<String[]> peers) throws IOException {
        DirectoryConfig c = options.directoryBase.get();
        c.dataDir = data.toString();
        c.init = true;
        c.raft = new DirectoryConfig.Raft();
        c.raft.id = id;
        for (String[] p : peers) {
            c.raft.peers.add(new DirectoryConfig.Peer(p[0], p[1], p[2]));
        }
        c.raft.electionTimeoutMillis = options.electionTimeoutMillis;
        c.raft.commitTimeoutMillis = options.commitTimeoutMillis;
        c.raft.snapshotEvery = options.snapshotEvery;
        c.raft.logSegmentBytes = options.logSegmentBytes;
        return YAML.writeValueAsString(c.validate());
    }

    /** Starts the node's process with its one command (again after a kill). */
    public synchronized void launch(Node n) throws IOException {
        if (n.alive()) {
            throw new IllegalStateException(n + " is running");
        }
        n.logOffset = Files.exists(n.log) ? Files.size(n.log) : 0;
        if (n.host != null) {
            n.process = n.host.start(n.command, n.log);
        } else {
            n.process = new ProcessBuilder(n.command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(n.log.toFile()))
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        }
    }

    /** SIGKILLs the node's process and waits until it is gone. */
    public synchronized void kill9(Node n) throws InterruptedException {
        Object p = n.process;
        if (p instanceof HostProcess hp) {
            hp.kill9();
        } else if (p instanceof Process pr) {
            pr.descendants().forEach(ProcessHandle::destroyForcibly);
            pr.destroyForcibly();
            if (!pr.waitFor(20, TimeUnit.SECONDS)) {
                throw new IllegalStateException(n + " still alive 20 s after SIGKILL");
            }
        }
    }

    /** Stops the node's process in an orderly way (SIGTERM), SIGKILL when it is still running after 30 s; nothing when stopped. */
    public synchronized void stop(Node n) throws InterruptedException {
        Object p = n.process;
        Process pr = p instanceof HostProcess hp ? hp.process() : p instanceof Process x ? x : null;
        if (pr == null || !pr.isAlive()) {
            return;
        }
        pr.destroy();
        if (!pr.waitFor(30, TimeUnit.SECONDS)) {
            kill9(n);
        }
    }

    /** Deletes everything under a (stopped) node's data directory. */
    public void wipe(Node n) throws IOException {
        if (n.alive()) {
            throw new IllegalStateException("wipe " + n + " while it runs");
        }
        if (Files.exists(n.data)) {
            FileTrees.delete(n.data);
        }
    }

    public List<Node> replicas() {
        return List.copyOf(replicas);
    }

    public List<Node> stores() {
        return List.copyOf(stores);
    }

    /** The replicas' HTTP addresses as every caller takes them: {@code a,b,c}. */
    public String directoryList() {
        return replicas.stream().map(Node::http).collect(Collectors.joining(","));
    }

    public List<String> directoryAddresses() {
        return replicas.stream().map(Node::http).toList();
    }

    /** The simulated hosts, or null on loopback. */
    public SimulatedHosts net() {
        return net;
    }

    /** The replica with this id. */
    public Node replica(String id) {
        return replicas.stream().filter(n -> n.name.equals(id)).findFirst().orElseThrow();
    }

    // ------------------------------------------------------------------ asking the servers

    /** {@code GET path} on {@code address}; null when it cannot be reached or does not answer within {@code timeout}. */
    public HttpResponse<String> get(String address, String path, Duration timeout) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create("http://" + address + path)).timeout(timeout).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** {@code POST path} with a JSON body; null when it cannot be reached or does not answer within {@code timeout}. */
    public HttpResponse<String> post(String address, String path, String json, Duration timeout) {
        try {
            return http.send(HttpRequest.newBuilder(URI.create("http://" + address + path)).timeout(timeout)
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** {@code GET /v1/group} of one replica, or null when it does not answer. */
    public JsonNode group(Node replica) {
        HttpResponse<String> r = get(replica.http, "/v1/group", Duration.ofSeconds(3));
        if (r == null || r.statusCode() != 200) {
            return null;
        }
        try {
            return JSON.readTree(r.body());
        } catch (IOException e) {
            return null;
        }
    }

    /** {@code GET /v1/group/self} of one replica (its role and applied index), or null when it does not answer. */
    public JsonNode self(Node replica) {
        HttpResponse<String> r = get(replica.http, "/v1/group/self", Duration.ofSeconds(3)); // a busy machine answers slowly
        if (r == null || r.statusCode() != 200) {
            return null;
        }
        try {
            return JSON.readTree(r.body());
        } catch (IOException e) {
            return null;
        }
    }

    /** The leader's id as {@code replica} sees it, or null when it names none or does not answer. */
    public String leaderSeenBy(Node replica) {
        JsonNode self = self(replica);
        if (self == null) {
            return null;
        }
        JsonNode l = self.path("leader");
        return !l.isTextual() || l.asText().isEmpty() ? null : l.asText();
    }

    /**
     * The replica that says it leads (role LEADER in its own {@code /v1/group/self}), when exactly
     * one of the reachable replicas does; else null.
     */
    public Node leaderNow() {
        return leaderNowAmong(replicas);
    }

    /** The one of {@code among} that says it leads, when exactly one does; else null. */
    public Node leaderNowAmong(List<Node> among) {
        Node found = null;
        for (Node n : among) {
            JsonNode s = self(n);
            if (s != null && "LEADER".equals(role(s))) {
                if (found != null) {
                    return null;
                }
                found = n;
            }
        }
        return found;
    }

    /** A replica's own role ({@code LEADER}, {@code FOLLOWER}, {@code CANDIDATE}), or "" when it does not answer. */
    public String role(Node replica) {
        JsonNode s = self(replica);
        return s == null ? "" : role(s);
    }

    /** A replica's own role in its {@code /v1/group/self} answer. */
    static String role(JsonNode self) {
        return self.path("replica").path("role").asText("");
    }

    /**
     * About the first index still in a replica's Raft log (the entries below it were purged behind a
     * snapshot, so a replica that needs them gets the snapshot instead): its committed index + 1 less the
     * entries in its log, from one {@code GET /metrics}; -1 when it does not answer.
     */
    public long logStartIndex(Node replica) {
        HttpResponse<String> r = get(replica.http, "/metrics", Duration.ofSeconds(3));
        if (r == null || r.statusCode() != 200) {
            return -1;
        }
        double committed = PrometheusText.sum(r.body(), "hayloft_directory_raft_committed_index");
        double entries = PrometheusText.sum(r.body(), "hayloft_directory_raft_log_entries");
        return (long) (committed + 1 - entries);
    }

    /** Snapshots a replica installed from a leader since its last {@link #launch}, counted in its log; -1 when the log cannot be read. */
    public long installedSnapshots(Node replica) {
        try {
            byte[] all = Files.readAllBytes(replica.log);
            int from = (int) Math.min(all.length, replica.logOffset);
            String since = new String(all, from, all.length - from, StandardCharsets.UTF_8);
            long n = 0;
            for (int at = since.indexOf(INSTALLING); at >= 0; at = since.indexOf(INSTALLING, at + 1)) {
                n++;
            }
            return n;
        } catch (IOException e) {
            return -1;
        }
    }

    /** A replica's applied index from its {@code /v1/group/self}, or -1 when it does not answer. */
    public long appliedIndex(Node replica) {
        JsonNode s = self(replica);
        return s == null ? -1 : s.path("replica").path("appliedIndex").asLong(-1);
    }

    /** Waits for one leader that every running replica names. */
    public Node awaitLeader(Duration timeout) throws InterruptedException {
        Node[] found = new Node[1];
        Await.until("one leader that every running replica names", timeout, ASK_EVERY, () -> {
            Node l = leaderNow();
            if (l == null) {
                return false;
            }
            for (Node n : replicas) {
                if (n.alive() && !l.name.equals(leaderSeenBy(n))) {
                    return false;
                }
            }
            found[0] = l;
            return true;
        });
        return found[0];
    }

    /** Waits for a leader, every store registered and UP, and writable volumes. */
    public void awaitReady(Duration timeout) throws InterruptedException {
        Node leader = awaitReplicas(timeout);
        Await.until("every store registered and UP at the leader", timeout, ASK_EVERY, () -> {
            stores.forEach(this::requireAlive);
            HttpResponse<String> r = get(leaderNowOr(leader).http, "/v1/stores", Duration.ofSeconds(2));
            if (r == null || r.statusCode() != 200) {
                return false;
            }
            try {
                Set<String> up = new HashSet<>();
                for (JsonNode s : JSON.readTree(r.body())) {
                    if ("UP".equals(s.path("state").asText())) {
                        up.add(s.path("id").asText());
                    }
                }
                return up.size() >= stores.size();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        // Volumes are made on the first lease: one lease makes them, and proves a put could start.
        Await.until("a lease of one key (writable volumes made)", timeout, ASK_EVERY, () -> {
            HttpResponse<String> r = post(leaderNowOr(leader).http, "/v1/leases", "{\"keys\":1,\"exclude\":[]}", Duration.ofSeconds(10));
            return r != null && r.statusCode() == 200;
        });
    }

    /** Asks the leader to hand the leadership to {@code to} ({@code POST /v1/group/leader}) and waits until {@code to} leads. */
    public void transferLeader(Node to, Duration timeout) throws InterruptedException {
        Await.until(to + " leads after a transfer", timeout, ASK_EVERY, () -> {
            Node l = leaderNow();
            if (l == to) {
                return true;
            }
            if (l != null) {
                post(l.http, "/v1/group/leader", "{\"id\":\"" + to.name + "\"}", Duration.ofSeconds(10));
            }
            return false;
        });
    }

    /** The replicated state as the leader answers it: stores, volumes, stripe maps, reclaim plans (parsed). */
    public static final List<String> STATE_PATHS = List.of("/v1/stores", "/v1/volumes", "/v1/stripes", "/v1/reclaims");

    /** The state {@code leader} answers ({@link #STATE_PATHS}), path by path; fails when it answers anything but 200. */
    public Map<String, JsonNode> state(Node leader) throws IOException {
        Map<String, JsonNode> m = new LinkedHashMap<>();
        for (String path : STATE_PATHS) {
            HttpResponse<String> r = get(leader.http, path, Duration.ofSeconds(10));
            if (r == null || r.statusCode() != 200) {
                throw new AssertionError(leader + " answered " + path + " with " + (r == null ? "nothing" : r.statusCode() + " " + r.body()));
            }
            m.put(path, JSON.readTree(r.body()));
        }
        return m;
    }

    /**
     * Whether every replica holds the same state: with the stores stopped (so nothing changes any more),
     * waits until every replica applied the same index, then hands the leadership to each replica in turn
     * and reads {@link #STATE_PATHS} from it. Returns each replica's state; the caller compares them.
     */
    public Map<String, Map<String, JsonNode>> statesOfEveryReplica(Duration timeout) throws Exception {
        Await.until("every replica applied the same index", timeout, ASK_EVERY, () -> {
            Set<Long> applied = new HashSet<>();
            for (Node n : replicas) {
                applied.add(appliedIndex(n));
            }
            return applied.size() == 1 && !applied.contains(-1L);
        });
        Map<String, Map<String, JsonNode>> out = new LinkedHashMap<>();
        for (Node n : replicas) {
            transferLeader(n, timeout);
            out.put(n.name, state(n));
        }
        return out;
    }

    /** Kills every store (SIGKILL): nothing changes the directory's state any more (tests, before comparing states). */
    public void killStores() throws InterruptedException {
        for (Node n : stores) {
            kill9(n);
        }
    }

    /** Waits until every replica answers {@code /health} and names one leader; returns the leader. */
    public Node awaitReplicas(Duration timeout) throws InterruptedException {
        for (Node n : replicas) {
            Await.until(n + " answers /health", timeout, ASK_EVERY, () -> {
                requireAlive(n);
                HttpResponse<String> r = get(n.http, "/health", Duration.ofSeconds(1));
                return r != null && r.statusCode() == 200;
            });
        }
        return awaitLeader(timeout);
    }

    private Node leaderNowOr(Node fallback) {
        Node l = leaderNow();
        return l == null ? fallback : l;
    }

    private void requireAlive(Node n) {
        if (!n.alive()) {
            throw new AssertionError(n + " exited; its log ends:\n" + tail(n.log));
        }
    }

    /** The last 3,000 characters of a log. */
    public static String tail(Path log) {
        try {
            String s = Files.readString(log);
            return s.substring(Math.max(0, s.length() - 3000));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    @Override
    public void close() {
        for (Node n : replicas.isEmpty() ? stores : concat()) {
            try {
                kill9(n);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                // already gone
            }
        }
        if (net != null) {
            try {
                net.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private List<Node> concat() {
        List<Node> all = new ArrayList<>(stores);
        all.addAll(replicas);
        return all;
    }
}
