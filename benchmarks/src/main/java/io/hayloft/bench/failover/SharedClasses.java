package io.hayloft.bench.failover;

import io.hayloft.serverkit.config.Ports;
import io.hayloft.serverkit.io.FileTrees;
import io.hayloft.testkit.Await;
import io.hayloft.testkit.SimulatedHosts;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A class-data-sharing archive (AppCDS, {@code -XX:SharedArchiveFile}) of the classes the server
 * processes started from a class path load ({@code hayloft directory} and {@code hayloft store}), so
 * that each of the many server JVMs the tests start maps its classes from one file instead of reading,
 * parsing and verifying them from the jars: about a third less CPU for a group's start (three replicas
 * and three stores: 9 instead of 14 s of CPU), which on a 2-core machine is most of its time. The
 * servers run as ever, only their classes come from the archive.
 *
 * <p>Made once per class path and JVM, in a directory of its own under the directory given
 * (the tests': {@code target/cds}; archives of other class paths there are deleted): a training run
 * starts one replica (a group of one) and one store, each with {@code -XX:DumpLoadedClassList}, has the
 * store register and a lease made (volumes created), stops both (SIGTERM, so each list is complete),
 * then {@code java -Xshare:dump} archives the classes of both lists. That takes 10 to 15 s once;
 * a class path whose jars are unchanged (same sizes and times) finds its archive made. Only the jars can
 * be archived, not directories: the server class path ({@link #serverClassPath}) is this JVM's jars
 * first, then its directories. When anything fails the servers start without an archive (the reason
 * goes to standard error once).
 *
 * <p>Thread-safe: one archive is made at a time in this JVM, and under a file lock across JVMs.
 */
public final class SharedClasses {
    private static final String ARCHIVE = "servers.jsa";
    private static final Duration TRAINING = Duration.ofSeconds(180);

    private SharedClasses() {
    }

    /** This JVM's class path, its jars first, then its directories (only jars can be archived). */
    public static String serverClassPath() {
        List<String> jars = new ArrayList<>();
        List<String> others = new ArrayList<>();
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (e.isEmpty()) {
                continue;
            }
            (e.endsWith(".jar") && Files.isRegularFile(Path.of(e)) ? jars : others).add(e);
        }
        jars.addAll(others);
        return String.join(File.pathSeparator, jars);
    }

    /**
     * The options that make a server JVM started with {@link #serverClassPath} map the archive of its classes,
     * made under {@code archives} (its training and dump run with {@code jvmOptions}) when there is none yet; none
     * when it cannot be made. One archive serves any heap size and collector: only the classes are shared.
     */
    public static synchronized List<String> options(List<String> jvmOptions, Path archives) {
        String classPath = serverClassPath();
        List<String> jars = new ArrayList<>();
        for (String e : classPath.split(File.pathSeparator)) {
            if (e.endsWith(".jar") && Files.isRegularFile(Path.of(e))) {
                jars.add(e);
            }
        }
        try {
            Path dir = archives.resolve(key(jars));
            Path archive = dir.resolve(ARCHIVE);
            if (!Files.isRegularFile(archive)) {
                Files.createDirectories(archives);
                try (FileChannel ch = FileChannel.open(archives.resolve(".lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                     FileLock ignored = ch.lock()) {
                    if (!Files.isRegularFile(archive)) {
                        make(jvmOptions, classPath, String.join(File.pathSeparator, jars), archives, dir, archive);
                    }
                }
            }
            return List.of("-XX:SharedArchiveFile=" + archive.toAbsolutePath(), "-Xshare:auto");
        } catch (IOException | RuntimeException e) {
            System.err.println("shared classes: the servers start without an archive of their classes: " + e);
            return List.of();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return List.of();
        }
    }

    /** The archive's key: the JVM and every jar's path, size and time (a JVM checks these when it maps the archive). */
    private static String key(List<String> jars) throws IOException {
        try {
            MessageDigest d = MessageDigest.getInstance("SHA-256");
            StringBuilder s = new StringBuilder(System.getProperty("java.home")).append('\n')
                    .append(System.getProperty("java.vm.version")).append('\n');
            for (String j : jars) {
                Path p = Path.of(j);
                s.append(j).append(' ').append(Files.size(p)).append(' ').append(Files.getLastModifiedTime(p).toMillis()).append('\n');
            }
            return HexFormat.of().formatHex(d.digest(s.toString().getBytes(StandardCharsets.UTF_8))).substring(0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void make(List<String> jvmOptions, String classPath, String jars, Path archives, Path dir, Path archive)
            throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        try (var old = Files.list(archives)) { // the archives of other class paths (an earlier build's jars)
            for (Path p : old.toList()) {
                if (Files.isDirectory(p)) {
                    FileTrees.delete(p);
                }
            }
        }
        Files.createDirectories(dir);
        Path work = dir.resolve("training");
        Files.createDirectories(work);
        Set<String> classes = new LinkedHashSet<>();
        for (Path list : train(jvmOptions, classPath, work)) {
            List<String> lines = Files.readAllLines(list);
            String text = Files.readString(list);
            if (!text.isEmpty() && !text.endsWith("\n")) {
                lines.remove(lines.size() - 1); // cut short
            }
            classes.addAll(lines);
        }
        Path list = dir.resolve("servers.classlist");
        Files.write(list, classes);
        Path tmp = dir.resolve(ARCHIVE + ".tmp");
        List<String> cmd = new ArrayList<>(List.of(SimulatedHosts.java()));
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-Xshare:dump", "-XX:SharedClassListFile=" + list, "-XX:SharedArchiveFile=" + tmp, "-cp", jars));
        Path log = dir.resolve("dump.log");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        if (!p.waitFor(TRAINING.toSeconds(), TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("java -Xshare:dump still running after " + TRAINING.toSeconds() + " s");
        }
        if (p.exitValue() != 0 || !Files.isRegularFile(tmp)) {
            throw new IOException("java -Xshare:dump exited " + p.exitValue() + ": " + GroupProcesses.tail(log));
        }
        Files.move(tmp, archive, StandardCopyOption.ATOMIC_MOVE);
        FileTrees.delete(work);
        System.out.printf("shared classes: %,d classes of the servers archived in %s (%.1f s)%n", classes.size(), archive,
                (System.nanoTime() - t0) / 1e9);
    }

    /**
     * Starts a replica (a group of one) and a store on loopback with {@code -XX:DumpLoadedClassList}, waits until
     * the store is registered and a lease made volumes, and stops both (SIGTERM); returns their class lists.
     */
    private static List<Path> train(List<String> jvmOptions, String classPath, Path work) throws IOException, InterruptedException {
        int raft = Ports.free();
        int http = Ports.free();
        int storePort = Ports.free();
        String directory = "127.0.0.1:" + http;
        Path replicaConfig = work.resolve("t1.yaml");
        Files.writeString(replicaConfig, "dataDir: " + work.resolve("t1") + "\n"
                + "replication: 1\n"
                + "minWritableVolumes: 1\n"
                + "volumeLimitBytes: " + (64L << 20) + "\n"
                + "raft:\n"
                + "  id: t1\n"
                + "  peers:\n"
                + "    - {id: t1, raft: 127.0.0.1:" + raft + ", http: " + directory + "}\n");
        Path storeConfig = work.resolve("s1.yaml");
        Files.writeString(storeConfig, "dataDirs: [" + work.resolve("s1") + "]\n"
                + "host: 127.0.0.1\n"
                + "port: " + storePort + "\n"
                + "directory: " + directory + "\n"
                + "storeId: s1\n"
                + "rack: r1\n"
                + "heartbeatMillis: 200\n");
        Path replicaList = work.resolve("replica.classlist");
        Path storeList = work.resolve("store.classlist");
        List<Process> running = new ArrayList<>();
        try {
            running.add(start(jvmOptions, replicaList, classPath, work.resolve("t1.log"), "directory", "--init", "--config", replicaConfig.toString()));
            running.add(start(jvmOptions, storeList, classPath, work.resolve("s1.log"), "store", "--config", storeConfig.toString()));
            HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
            Await.until("the training store registered and a lease made", TRAINING, () -> {
                for (Process p : running) {
                    if (!p.isAlive()) {
                        throw new IllegalStateException("a training server exited: " + GroupProcesses.tail(work.resolve("t1.log"))
                                + GroupProcesses.tail(work.resolve("s1.log")));
                    }
                }
                HttpResponse<String> stores = send(client, HttpRequest.newBuilder(URI.create("http://" + directory + "/v1/stores")).GET());
                if (stores == null || stores.statusCode() != 200 || !stores.body().contains("\"UP\"")) {
                    return false;
                }
                HttpResponse<String> lease = send(client, HttpRequest.newBuilder(URI.create("http://" + directory + "/v1/leases"))
                        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{\"keys\":1,\"exclude\":[]}")));
                return lease != null && lease.statusCode() == 200;
            });
            for (Process p : running) {
                p.destroy(); // SIGTERM: the JVM exits, its class list complete
            }
            for (Process p : running) {
                if (!p.waitFor(30, TimeUnit.SECONDS)) {
                    p.destroyForcibly(); // its list so far serves
                }
            }
        } finally {
            running.forEach(Process::destroyForcibly);
        }
        return List.of(replicaList, storeList);
    }

    private static Process start(List<String> jvmOptions, Path classList, String classPath, Path log, String... command)
            throws IOException {
        List<String> cmd = new ArrayList<>(List.of(SimulatedHosts.java()));
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-XX:DumpLoadedClassList=" + classList, "-cp", classPath, "io.hayloft.cli.Hayloft"));
        cmd.addAll(List.of(command));
        return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
    }

    private static HttpResponse<String> send(HttpClient client, HttpRequest.Builder request) {
        try {
            return client.send(request.timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }
}
