package io.hayloft.bench.s3;

import io.hayloft.bench.directory.DirectoryProcesses;
import io.hayloft.serverkit.config.Ports;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The Hayloft cluster that {@code bench s3} measures, started from this jar's class path in one of
 * two layouts, fsync on everywhere (the defaults):
 * <ul>
 *   <li>{@link #separate}: each directory replica (1, or 3 in a Raft group), each of 3 stores
 *       (replication 3) and the S3 gateway ({@code hayloft s3 --config s3.yaml}, given every replica)
 *       its own JVM on loopback, by {@link DirectoryProcesses}; ready when a replica leads, every store
 *       is UP and the gateway answers {@code /_hayloft/health};</li>
 *   <li>{@link #oneProcess}: {@code hayloft cluster --s3 PORT}, everything in one JVM (the layout of
 *       issue 27's figures); ready when it prints {@code READY}.</li>
 * </ul>
 * {@link #s3Servers()} and {@link #clientServers()} are the processes whose CPU time an S3 and a Java
 * client operation cost. {@link #close()} stops every process (SIGTERM, SIGKILL after 20 s); the data
 * directory is the caller's. A process that exits while starting fails the start with the end of its log.
 *
 * <p>Not thread-safe: one owner.
 */
final class HayloftUnderTest implements AutoCloseable {
    static final String ACCESS_KEY = "hayloft";
    static final String SECRET_KEY = "hayloft-secret-key";
    private static final Duration PATIENCE = Duration.ofMinutes(2);
    private static final int TAIL_LINES = 40;

    private final List<String> directories;
    private final URI s3;
    private final List<ProcessHandle> s3Servers;
    private final List<ProcessHandle> clientServers;
    private final String description;
    private final Runnable requireRunning;
    private final AutoCloseable owner;

    private HayloftUnderTest(List<String> directories, URI s3, List<ProcessHandle> s3Servers, List<ProcessHandle> clientServers,
                             String description, Runnable requireRunning, AutoCloseable owner) {
        this.directories = List.copyOf(directories);
        this.s3 = s3;
        this.s3Servers = List.copyOf(s3Servers);
        this.clientServers = List.copyOf(clientServers);
        this.description = description;
        this.requireRunning = requireRunning;
        this.owner = owner;
    }

    /** Replicas, stores and gateway each a process; the group's files under {@code parent}. */
    static HayloftUnderTest separate(int replicas, Path parent, boolean keep) throws IOException, InterruptedException {
        DirectoryProcesses p = DirectoryProcesses.start(replicas, 3, parent, keep);
        try {
            int port = Ports.free();
            Path config = p.dir().resolve("s3.yaml");
            Files.writeString(config, "directory: " + String.join(",", p.replicas()) + "\nhost: 127.0.0.1\nport: " + port
                    + "\naccessKey: " + ACCESS_KEY + "\nsecretKey: " + SECRET_KEY + "\n");
            List<ProcessHandle> cluster = new ArrayList<>();
            for (DirectoryProcesses.Named n : p.processes()) {
                cluster.add(n.process().toHandle());
            }
            // The gateway's heap: workerThreads x 2 x chunkBytes at the defaults (docs/s3.md).
            Process gateway = p.launch("s3", "2g", "s3", "--config", config.toString());
            awaitHealth(p, "127.0.0.1:" + port);
            List<ProcessHandle> withGateway = new ArrayList<>(cluster);
            withGateway.add(gateway.toHandle());
            String what = String.format("%d directory %s, 3 stores (replication 3, fsync always) and the S3 gateway, each its own process",
                    replicas, replicas == 1 ? "(fsync always)" : "replicas (Raft group, log synced)");
            return new HayloftUnderTest(p.replicas(), URI.create("http://127.0.0.1:" + port), withGateway, cluster, what, p::requireRunning, p);
        } catch (IOException | InterruptedException | RuntimeException e) {
            p.close();
            throw e;
        }
    }

    /** {@code hayloft cluster --s3} in one process, its data in {@code data}. */
    static HayloftUnderTest oneProcess(int replicas, Path data) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(ProcessHandle.current().info().command().orElse("java"),
                "-Xmx2g", "--add-modules", "jdk.incubator.vector", "-cp", System.getProperty("java.class.path"),
                "io.hayloft.cli.Hayloft", "cluster", "--dir", data.toString(), "--port", String.valueOf(Ports.free()),
                "--s3", String.valueOf(Ports.free()), "--directories", String.valueOf(replicas)));
        Process cluster = DirectoryProcesses.reaped(new ProcessBuilder(cmd).redirectErrorStream(true).start());
        AutoCloseable stop = () -> stop(cluster);
        try {
            Ready r = awaitReady(cluster);
            List<ProcessHandle> one = List.of(cluster.toHandle());
            String what = "one process (hayloft cluster --s3): " + (replicas == 1 ? "1 directory" : replicas + " directory replicas (Raft)")
                    + ", 3 stores (replication 3) and the gateway, fsync always";
            Runnable running = () -> {
                if (!cluster.isAlive()) {
                    throw new IllegalStateException("the cluster process exited with status " + cluster.exitValue());
                }
            };
            return new HayloftUnderTest(List.of(r.directory.split(",")), URI.create(r.s3), one, one, what, running, stop);
        } catch (IOException | RuntimeException e) {
            stop(cluster);
            throw e;
        }
    }

    /** Every directory replica's address, for the Java client. */
    List<String> directories() {
        return directories;
    }

    /** The gateway's endpoint (path style). */
    URI s3() {
        return s3;
    }

    /** The processes an S3 operation costs CPU in: the cluster's and the gateway's. */
    List<ProcessHandle> s3Servers() {
        return s3Servers;
    }

    /** The processes a Java client operation costs CPU in: the directory's and the stores'. */
    List<ProcessHandle> clientServers() {
        return clientServers;
    }

    /** Which processes {@link #s3Servers()} and {@link #clientServers()} are, for the report's header. */
    String cpuNote() {
        return s3Servers.size() == 1 ? "Hayloft S3 and the Java client: the cluster process"
                : "the Java client: the directory replicas and stores; Hayloft S3: those and the gateway";
    }

    /** The layout and its durability, for the report's header. */
    String description() {
        return description;
    }

    /** Throws when a server process has exited (with the end of its log, where it has one). */
    void requireRunning() {
        requireRunning.run();
    }

    @Override
    public void close() throws Exception {
        owner.close();
    }

    /** Polls the gateway's health endpoint until it answers 200, failing with its log when it exits. */
    private static void awaitHealth(DirectoryProcesses p, String address) throws InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        HttpRequest health = HttpRequest.newBuilder(URI.create("http://" + address + "/_hayloft/health"))
                .timeout(Duration.ofSeconds(5)).GET().build();
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (true) {
            p.requireRunning();
            try {
                if (http.send(health, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the S3 gateway did not answer /_hayloft/health within " + PATIENCE.toSeconds()
                        + " s; its log ends:\n" + p.logTail("s3"));
            }
            Thread.sleep(100); // poll the gateway
        }
    }

    private record Ready(String directory, String s3) {
    }

    /**
     * Reads {@code hayloft cluster}'s output until READY (its directory and S3 endpoint), then keeps
     * draining it so that it never blocks on a full pipe. A process that ends first, or prints no
     * READY within two minutes, fails with its last lines.
     */
    private static Ready awaitReady(Process p) throws IOException {
        AtomicBoolean ready = new AtomicBoolean();
        Thread watchdog = new Thread(() -> {
            try {
                // A process silent past the deadline would block readLine forever: ending it ends the output.
                if (!p.waitFor(PATIENCE.toMillis(), TimeUnit.MILLISECONDS) && !ready.get()) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "cluster-start-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        Deque<String> last = new ArrayDeque<>();
        String directory = null;
        String s3 = null;
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        String line;
        while (true) {
            line = out.readLine();
            if (line == null) {
                throw new IOException("the cluster process ended (or was ended after " + PATIENCE.toMinutes()
                        + " minutes) before READY; its output ends:\n" + String.join("\n", last));
            }
            last.addLast(line);
            if (last.size() > TAIL_LINES) {
                last.removeFirst();
            }
            if (line.startsWith("DIRECTORY ")) {
                directory = line.substring("DIRECTORY ".length()).trim();
            } else if (line.startsWith("S3 ")) {
                s3 = line.substring(3).trim().split(" ")[0];
            } else if (line.equals("READY")) {
                ready.set(true);
                break;
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("the cluster process was not ready within " + PATIENCE.toMinutes() + " minutes; its output ends:\n"
                        + String.join("\n", last));
            }
        }
        if (directory == null || s3 == null) {
            throw new IOException("the cluster process printed no DIRECTORY or S3 line before READY:\n" + String.join("\n", last));
        }
        Thread drain = new Thread(() -> {
            try {
                while (out.readLine() != null) {
                    // discarded
                }
            } catch (IOException ended) {
                // the process ended
            }
        }, "cluster-output");
        drain.setDaemon(true);
        drain.start();
        return new Ready(directory, s3);
    }

    private static void stop(Process p) throws InterruptedException {
        p.destroy();
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
