package io.hayloft.bench.directory;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.serverkit.config.Ports;
import io.hayloft.serverkit.io.FileTrees;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A directory of {@code n} replicas (1: a single directory, no {@code raft} section; 3: a Raft group)
 * and {@code stores} store servers, each its own JVM on loopback, started from this fat jar as
 * {@code hayloft directory --init --config F} and {@code hayloft store --config F} are (configs and
 * data in a temporary directory, logs in {@code DIR/*.log}, heap 512 MiB each); ready when a
 * replica leads and every store is {@code UP}. A process that exits while they start, or a start
 * that takes longer than two minutes, fails it with the end of the logs in the message (the
 * directory is deleted with them unless kept). {@link #launch(String, String, String...)} starts
 * further processes from the jar beside them (e.g. an S3 gateway) that {@link #close()} stops too;
 * {@link #processes()} names each for its CPU time. {@link #close()} stops them all (SIGTERM, then
 * SIGKILL after 20 s) and deletes the directory (unless asked to keep it).
 *
 * <p>Not thread-safe: one owner.
 */
public final class DirectoryProcesses implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SERVER_HEAP = "512m";
    /** Characters of a log's end that a failure quotes. */
    private static final int TAIL_CHARS = 2000;

    private final Path dir;
    private final List<Named> processes = new ArrayList<>();
    private final List<String> https = new ArrayList<>();
    private final List<String> stores = new ArrayList<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private final boolean keep;

    /** A process this group started, by the name of its log ({@code DIR/NAME.log}). */
    public record Named(String name, Process process) {
    }

    private DirectoryProcesses(Path dir, boolean keep) {
        this.dir = dir;
        this.keep = keep;
    }

    /** Starts the replicas and the stores and waits until they are ready (at most two minutes). */
    public static DirectoryProcesses start(int replicas, int storeCount, Path parent, boolean keep) throws IOException, InterruptedException {
        return start(replicas, storeCount, parent, keep, Map.of());
    }

    /** As {@link #start(int, int, Path, boolean)}, with {@code raft} settings ({@code packChanges: false}) added to each replica's raft section. */
    public static DirectoryProcesses start(int replicas, int storeCount, Path parent, boolean keep, Map<String, String> raft)
            throws IOException, InterruptedException {
        Path dir = Files.createTempDirectory(parent, "dir-" + replicas + "-");
        DirectoryProcesses p = new DirectoryProcesses(dir, keep);
        try {
            p.startAll(replicas, storeCount, raft);
        } catch (IOException | InterruptedException | RuntimeException e) {
            p.close();
            throw e;
        }
        return p;
    }

    private void startAll(int replicas, int storeCount, Map<String, String> raft) throws IOException, InterruptedException {
        List<String> peers = new ArrayList<>();
        for (int i = 0; i < replicas; i++) {
            String h = "127.0.0.1:" + Ports.free();
            https.add(h);
            peers.add("    - {id: n" + (i + 1) + ", raft: 127.0.0.1:" + Ports.free() + ", http: " + h + "}\n");
        }
        for (int i = 0; i < replicas; i++) {
            StringBuilder y = new StringBuilder();
            y.append("dataDir: ").append(dir.resolve("directory-n" + (i + 1))).append('\n');
            y.append("host: 127.0.0.1\nport: ").append(https.get(i).substring(https.get(i).indexOf(':') + 1)).append('\n');
            y.append("replication: ").append(Math.min(3, storeCount)).append('\n');
            y.append("minWritableVolumes: 1\n");
            // Lenient probes on a shared loopback machine (as the embedded cluster's): a busy store is not dead.
            y.append("probeTimeoutMillis: 5000\nfailureThreshold: 5\nautoRestore: true\n");
            if (replicas > 1) {
                y.append("raft:\n  id: n").append(i + 1).append("\n");
                raft.forEach((k, v) -> y.append("  ").append(k).append(": ").append(v).append('\n'));
                y.append("  peers:\n");
                peers.forEach(y::append);
            }
            Path f = dir.resolve("directory-n" + (i + 1) + ".yaml");
            Files.writeString(f, y.toString());
            launch("directory-n" + (i + 1), SERVER_HEAP, "directory", "--init", "--config", f.toString());
        }
        awaitLeader(Duration.ofMinutes(2));
        for (int s = 0; s < storeCount; s++) {
            String a = "127.0.0.1:" + Ports.free();
            stores.add(a);
            String y = "dataDirs: [" + dir.resolve("store-" + s) + "]\nhost: 127.0.0.1\nport: " + a.substring(a.indexOf(':') + 1)
                    + "\ndirectory: " + String.join(",", https) + "\nstoreId: store-" + s + "\nrack: rack-" + s + "\n";
            Path f = dir.resolve("store-" + s + ".yaml");
            Files.writeString(f, y);
            launch("store-" + s, SERVER_HEAP, "store", "--config", f.toString());
        }
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (true) {
            requireRunning();
            int up = 0;
            JsonNode all = getJson(leader(), "/v1/stores");
            if (all != null) {
                for (JsonNode s : all) {
                    if ("UP".equals(s.path("state").asText())) {
                        up++;
                    }
                }
            }
            if (up >= storeCount) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(up + " of " + storeCount + " stores UP after 2 minutes; logs in " + dir + tails());
            }
            Thread.sleep(100); // poll the directory
        }
    }

    /**
     * Starts {@code hayloft ARGS...} from this JVM's class path as one more process of this group
     * (heap {@code maxHeap}, e.g. {@code "2g"}; output to {@code DIR/NAME.log}); {@link #close()} stops it.
     */
    public Process launch(String name, String maxHeap, String... args) throws IOException {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx" + maxHeap, "--add-modules", "jdk.incubator.vector", "-cp",
                System.getProperty("java.class.path"), "io.hayloft.cli.Hayloft"));
        cmd.addAll(List.of(args));
        Process p = reaped(new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log(name).toFile()).start());
        processes.add(new Named(name, p));
        return p;
    }

    /**
     * {@code p}, killed when this JVM exits if it still runs: a benchmark stopped by Ctrl-C (SIGINT or
     * SIGTERM, which skip its {@code finally} blocks) leaves no server behind. Returns {@code p}.
     */
    public static Process reaped(Process p) {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            if (p.isAlive()) {
                p.destroyForcibly();
            }
        }, "reap-" + p.pid()));
        return p;
    }

    /** Where this group keeps its configs, data and logs. */
    public Path dir() {
        return dir;
    }

    /** Every process started, in order: the replicas, the stores, then those of {@link #launch}. */
    public List<Named> processes() {
        return List.copyOf(processes);
    }

    /** The last characters of process {@code name}'s log. */
    public String logTail(String name) {
        try {
            String s = Files.readString(log(name));
            return s.substring(Math.max(0, s.length() - TAIL_CHARS));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    /** Throws, quoting its log's end, when a process of this group has exited. */
    public void requireRunning() {
        for (Named n : processes) {
            if (!n.process().isAlive()) {
                throw new IllegalStateException(n.name() + " exited with status " + n.process().exitValue() + "; its log ends:\n"
                        + logTail(n.name()));
            }
        }
    }

    private Path log(String name) {
        return dir.resolve(name + ".log");
    }

    /** The end of every log, for a failure whose culprit is unknown (a timeout). */
    private String tails() {
        StringBuilder b = new StringBuilder();
        for (Named n : processes) {
            String t = logTail(n.name());
            b.append("\n--- ").append(n.name()).append(".log ends:\n").append(t.substring(Math.max(0, t.length() - TAIL_CHARS / 4)));
        }
        return b.toString();
    }

    /** The replicas' HTTP addresses. */
    public List<String> replicas() {
        return List.copyOf(https);
    }

    /** The stores' addresses. */
    public List<String> stores() {
        return List.copyOf(stores);
    }

    /** The leader's HTTP address (a single directory leads itself), or null when none is known. */
    public String leader() {
        for (String h : https) {
            // Each replica's own view (GET /v1/group/self, local): the one that says it leads.
            JsonNode g = getJson(h, "/v1/group/self");
            if (g != null && "LEADER".equals(g.path("replica").path("role").asText())) {
                return h;
            }
        }
        return null;
    }

    public String awaitLeader(Duration patience) throws InterruptedException {
        long deadline = System.nanoTime() + patience.toNanos();
        while (true) {
            requireRunning();
            String l = leader();
            if (l != null) {
                return l;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no directory replica leads after " + patience.toSeconds() + " s; logs in " + dir + tails());
            }
            Thread.sleep(100); // poll the replicas
        }
    }

    JsonNode getJson(String address, String path) {
        try {
            HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(URI.create("http://" + address + path)).timeout(Duration.ofSeconds(5))
                    .GET().build(), HttpResponse.BodyHandlers.ofByteArray());
            return r.statusCode() == 200 ? JSON.readTree(r.body()) : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** A POST of {@code body} (JSON) to the leader; returns the answer's JSON, or throws naming the status. */
    JsonNode post(String address, String path, Object body) throws IOException, InterruptedException {
        return post(address, path, body, Duration.ofSeconds(30));
    }

    /** {@link #post(String, String, Object)} with a timeout of its own (a batch of volume creations takes long). */
    JsonNode post(String address, String path, Object body, Duration timeout) throws IOException, InterruptedException {
        HttpResponse<byte[]> r = http.send(HttpRequest.newBuilder(URI.create("http://" + address + path)).timeout(timeout)
                .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body))).build(), HttpResponse.BodyHandlers.ofByteArray());
        if (r.statusCode() != 200) {
            throw new IOException("POST " + path + ": " + r.statusCode() + " " + new String(r.body()));
        }
        return JSON.readTree(r.body());
    }

    @Override
    public void close() {
        for (Named n : processes) {
            n.process().destroy();
        }
        for (Named n : processes) {
            Process p = n.process();
            try {
                if (!p.waitFor(20, TimeUnit.SECONDS)) {
                    p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                p.destroyForcibly();
            }
        }
        if (keep) {
            return;
        }
        try {
            FileTrees.delete(dir);
        } catch (IOException e) {
            // a temp directory left behind is no failure of the benchmark
        }
    }
}
