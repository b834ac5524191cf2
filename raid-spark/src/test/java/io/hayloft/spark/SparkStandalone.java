package io.hayloft.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.serverkit.config.Ports;
import io.hayloft.testkit.Await;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.net.URL;
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
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A Spark standalone cluster of separate JVMs on loopback, for tests: a master and workers started with
 * {@code java -cp <the test's class path>} (the Spark jars from Maven Central are on it), awaited by
 * polling the master's {@code /json/}; applications submitted in <em>cluster</em> deploy mode by
 * {@code org.apache.spark.deploy.SparkSubmit} in a child JVM, so each driver runs in a JVM a worker
 * starts, and its executors in JVMs the workers start.
 *
 * <p>Spark's launcher builds the driver and executor command lines from {@code SPARK_HOME}: this
 * cluster gives every process a {@code SPARK_HOME} with an empty {@code jars/} (no Spark
 * distribution is installed) and {@code SPARK_SCALA_VERSION=2.13}; the classes come from
 * {@code spark.driver.extraClassPath} and {@code spark.executor.extraClassPath}: by default the test's
 * class path (every JVM is on this machine), or what the caller sets, such as
 * {@link #sparkDistributionClassPath()} with the packaged jar as the application jar. Spark copies the
 * application jar into the driver's work directory and serves it to the executors.
 *
 * <p>Process output goes to files under the cluster's directory; {@link #driverOutput} reads a driver's
 * from its worker's work directory. Not thread-safe.
 */
final class SparkStandalone implements AutoCloseable {

    /** A worker JVM and where it works. */
    record Worker(String name, Process process, int port, Path workDir) {
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration START = Duration.ofMinutes(3);

    private final Path dir;
    private final Path home;
    private final String classPath = System.getProperty("java.class.path");
    private final List<String> jvmFlags;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final Map<String, Worker> workers = new LinkedHashMap<>();
    private final List<Process> others = new ArrayList<>();
    private final List<ProcessHandle> orphans = new ArrayList<>();
    private final int masterPort;
    private final int masterWebPort;

    /** Starts the master and the named workers (each 2 cores, 1200 MiB) and waits until the master lists them ALIVE. */
    SparkStandalone(Path dir, String... workerNames) throws Exception {
        this.dir = Files.createDirectories(dir);
        this.home = Files.createDirectories(dir.resolve("spark-home"));
        Files.createDirectories(home.resolve("jars"));
        Files.createDirectories(home.resolve("conf"));
        String flags = System.getProperty("hayloft.spark.jvmArgs", "");
        this.jvmFlags = Stream.of(flags.trim().split("\\s+")).filter(s -> !s.isEmpty()).toList();
        this.masterPort = Ports.free();
        this.masterWebPort = Ports.free();
        others.add(launch("master", List.of("org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                "--port", String.valueOf(masterPort), "--webui-port", String.valueOf(masterWebPort))));
        for (String w : workerNames) {
            startWorker(w);
        }
        awaitAliveWorkers(workerNames.length);
    }

    String masterUrl() {
        return "spark://127.0.0.1:" + masterPort;
    }

    /** The JVM flags every Spark JVM here gets (JDK 17 opens, the Vector API), as one option string. */
    String javaOptions() {
        URL log = SparkStandalone.class.getResource("/log4j2-test.properties"); // quiet drivers and executors
        return String.join(" ", jvmFlags) + " -XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
                + (log == null || !log.getProtocol().equals("file") ? "" : " -Dlog4j2.configurationFile=" + log.getPath());
    }

    /** Starts a worker JVM (does not wait for it to register). */
    Worker startWorker(String name) throws IOException {
        int port = Ports.free();
        Path work = Files.createDirectories(dir.resolve("work-" + name));
        Process p = launch("worker-" + name, List.of("org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                "--port", String.valueOf(port), "--webui-port", "0", "--cores", "2", "--memory", "1200m",
                "--work-dir", work.toString(), masterUrl()));
        Worker w = new Worker(name, p, port, work);
        workers.put(name, w);
        return w;
    }

    private Process launch(String name, List<String> mainAndArgs) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
        cmd.addAll(jvmFlags);
        cmd.add("-cp");
        cmd.add(classPath);
        cmd.addAll(mainAndArgs);
        ProcessBuilder b = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve(name + ".log").toFile()));
        b.environment().put("SPARK_HOME", home.toString());
        b.environment().put("SPARK_SCALA_VERSION", "2.13");
        b.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
        b.environment().put("SPARK_LOCAL_DIRS", Files.createDirectories(dir.resolve("local-" + name)).toString());
        return b.start();
    }

    /** The master's state ({@code GET /json/}). */
    JsonNode master() throws IOException, InterruptedException {
        return getJson("http://127.0.0.1:" + masterWebPort + "/json/");
    }

    JsonNode getJson(String url) throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("GET " + url + " answered " + r.statusCode());
        }
        return JSON.readTree(r.body());
    }

    /** As {@link #master()}, null while the master does not answer yet. */
    private JsonNode masterOrNull() {
        try {
            return master();
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** Waits until the master lists {@code n} ALIVE workers. */
    void awaitAliveWorkers(int n) throws InterruptedException {
        Await.until(n + " ALIVE Spark workers at the master", START, () -> {
            JsonNode m = masterOrNull();
            return m != null && m.path("aliveworkers").asInt() >= n;
        });
    }

    /** The master's entry of worker {@code name} (its id ends in its RPC port), or null. */
    JsonNode workerEntry(String name) throws IOException, InterruptedException {
        String suffix = "-127.0.0.1-" + workers.get(name).port();
        for (JsonNode w : master().path("workers")) {
            if (w.path("id").asText().endsWith(suffix) && !w.path("state").asText().equals("DEAD")) {
                return w;
            }
        }
        return null;
    }

    /** The worker named in this cluster whose master id is {@code id}. */
    String workerName(String id) {
        return workers.values().stream().filter(w -> id.endsWith("-127.0.0.1-" + w.port())).map(Worker::name).findFirst()
                .orElseThrow(() -> new AssertionError("no worker of this cluster is " + id));
    }

    /** The driver entry of the master ({@code activedrivers} or {@code completeddrivers}), or null. */
    JsonNode driver(String id) throws IOException, InterruptedException {
        JsonNode m = master();
        for (String list : List.of("activedrivers", "completeddrivers")) {
            for (JsonNode d : m.path(list)) {
                if (d.path("id").asText().equals(id)) {
                    return d;
                }
            }
        }
        return null;
    }

    private Set<String> driverIds() throws IOException, InterruptedException {
        Set<String> ids = new HashSet<>();
        JsonNode m = master();
        for (String list : List.of("activedrivers", "completeddrivers")) {
            m.path(list).forEach(d -> ids.add(d.path("id").asText()));
        }
        return ids;
    }

    /**
     * Submits {@code mainClass} of {@code appJar} in cluster deploy mode with {@code conf}; waits for the
     * submitting JVM to end (the standalone client returns once the master has the driver) and returns
     * the driver's id.
     */
    String submit(String mainClass, Path appJar, Map<String, String> conf, List<String> args) throws Exception {
        Set<String> before = driverIds();
        List<String> cmd = new ArrayList<>(List.of("org.apache.spark.deploy.SparkSubmit", "--master", masterUrl(),
                "--deploy-mode", "cluster", "--class", mainClass));
        Map<String, String> all = new LinkedHashMap<>();
        all.put("spark.driver.extraClassPath", classPath);
        all.put("spark.executor.extraClassPath", classPath);
        all.put("spark.driver.extraJavaOptions", javaOptions());
        all.put("spark.executor.extraJavaOptions", javaOptions());
        all.put("spark.driver.memory", "512m");
        all.put("spark.executor.memory", "512m");
        all.put("spark.executor.cores", "1");
        all.putAll(conf);
        all.forEach((k, v) -> {
            cmd.add("--conf");
            cmd.add(k + "=" + v);
        });
        cmd.add(appJar.toString());
        cmd.addAll(args);
        String name = "submit-" + mainClass.substring(mainClass.lastIndexOf('.') + 1) + "-" + System.nanoTime();
        Process p = launch(name, cmd);
        others.add(p);
        if (!p.waitFor(START.toSeconds(), TimeUnit.SECONDS)) {
            throw new AssertionError("spark-submit did not return within " + START.toSeconds() + " s: " + tail(dir.resolve(name + ".log")));
        }
        if (p.exitValue() != 0) {
            throw new AssertionError("spark-submit exited " + p.exitValue() + ": " + tail(dir.resolve(name + ".log")));
        }
        String[] id = new String[1];
        Await.until("the driver of " + mainClass + " at the master", START, () -> {
            try {
                Set<String> now = driverIds();
                now.removeAll(before);
                id[0] = now.stream().findFirst().orElse(null);
                return id[0] != null;
            } catch (IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        });
        return id[0];
    }

    /** Waits until driver {@code id} has left SUBMITTED/RUNNING; returns its state (FINISHED, FAILED, ERROR, KILLED). */
    String awaitDriverEnd(String id, Duration timeout) throws Exception {
        String[] state = new String[1];
        Await.untilTrue("driver " + id + " ends", timeout, () -> {
            JsonNode d = driver(id);
            state[0] = d == null ? null : d.path("state").asText();
            return state[0] != null && !state[0].equals("SUBMITTED") && !state[0].equals("RUNNING") && !state[0].equals("RELAUNCHING");
        });
        return state[0];
    }

    /** The worker (name) running driver {@code id}, once the master placed it. */
    String awaitDriverWorker(String id) throws Exception {
        String[] worker = new String[1];
        Await.untilTrue("driver " + id + " placed on a worker", START, () -> {
            JsonNode d = driver(id);
            worker[0] = d == null ? "" : d.path("worker").asText("");
            return !worker[0].isEmpty() && !worker[0].equals("None");
        });
        return workerName(worker[0]);
    }

    /** What driver {@code id} printed (stdout, then the tail of stderr), from its worker's work directory. */
    String driverOutput(String id) throws IOException {
        for (Worker w : workers.values()) {
            Path d = w.workDir().resolve(id);
            if (Files.isDirectory(d)) {
                String out = Files.exists(d.resolve("stdout")) ? Files.readString(d.resolve("stdout"), StandardCharsets.UTF_8) : "";
                int launch = out.indexOf("\n====");
                if (launch >= 0) { // the worker writes the launch command first
                    out = out.substring(out.indexOf('\n', launch + 1) + 1);
                }
                return out + "\n--- stderr (tail) ---\n" + tail(d.resolve("stderr"));
            }
        }
        return "(no work directory of " + id + ")";
    }

    /**
     * The id of the executor that worker {@code name} runs for application {@code appId}, from the
     * worker's own {@code /json/}; null while it runs none.
     */
    String executorOn(String name, String appId) throws IOException, InterruptedException {
        JsonNode w = workerEntry(name);
        if (w == null) {
            return null;
        }
        for (JsonNode e : getJson(w.path("webuiaddress").asText() + "/json/").path("executors")) {
            if (e.path("appid").asText().equals(appId)) {
                return e.path("id").asText();
            }
        }
        return null;
    }

    /** The id of the one running application, or null. */
    String runningApp() throws IOException, InterruptedException {
        JsonNode apps = master().path("activeapps");
        return apps.size() == 0 ? null : apps.get(0).path("id").asText();
    }

    /**
     * Kills worker {@code name}'s JVM with SIGKILL (as {@code kill -9}; its drivers and executors are not
     * signalled); returns the processes it had started, as they were just before.
     */
    List<ProcessHandle> kill9(String name) throws InterruptedException {
        Worker w = workers.get(name);
        List<ProcessHandle> children = w.process().descendants().toList();
        orphans.addAll(children);
        w.process().destroyForcibly(); // SIGKILL on Linux
        if (!w.process().waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionError("worker " + name + " still alive 30 s after SIGKILL");
        }
        return children;
    }

    static String tail(Path file) {
        try {
            if (!Files.exists(file)) {
                return "(no " + file.getFileName() + ")";
            }
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(unreadable " + file + ": " + e + ")";
        }
    }

    /** A jar of the classes of the directory (or jar) that {@code anyClass} was loaded from. */
    static Path appJar(Class<?> anyClass, Path jar) throws Exception {
        Path classes = Path.of(anyClass.getProtectionDomain().getCodeSource().getLocation().toURI());
        try (OutputStream o = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(o);
             Stream<Path> files = Files.walk(classes)) {
            for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile).sorted()::iterator) {
                out.putNextEntry(new JarEntry(classes.relativize(f).toString().replace('\\', '/')));
                Files.copy(f, out);
                out.closeEntry();
            }
        }
        return jar;
    }

    /** Where the jars of Hayloft's own dependencies that a Spark distribution does not ship live under the local repository. */
    private static final List<String> NOT_IN_SPARK = List.of("/org/apache/httpcomponents/", "/io/micrometer/", "/io/prometheus/",
            "/org/hdrhistogram/", "/org/latencyutils/", "/com/github/ben-manes/", "/org/jspecify/", "/org/rocksdb/", "/org/junit/",
            "/org/opentest4j/", "/org/apiguardian/", "/org/assertj/", "/net/bytebuddy/");

    /**
     * The test's class path as a Spark distribution's {@code jars/} would have it: without Hayloft's
     * classes (module {@code target/classes}, {@code target/test-classes}, {@code hayloft-*.jar}) and without the
     * third-party jars only Hayloft brings ({@link #NOT_IN_SPARK}: HttpClient 5, Micrometer, ...). With
     * it as the driver's and executors' class path, everything else must come from the application jar.
     */
    static String sparkDistributionClassPath() {
        return Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> !e.replace('\\', '/').matches(".*/target/(test-)?classes/?|.*/hayloft-[^/]*\\.jar"))
                .filter(e -> NOT_IN_SPARK.stream().noneMatch(d -> e.replace('\\', '/').contains(d)))
                .collect(Collectors.joining(File.pathSeparator));
    }

    /** Kills every JVM this cluster started, the drivers and executors of its workers first. */
    @Override
    public void close() throws InterruptedException {
        List<Process> all = new ArrayList<>();
        workers.values().forEach(w -> all.add(w.process()));
        all.addAll(others);
        List<ProcessHandle> handles = new ArrayList<>(orphans);
        for (Process p : all) {
            handles.addAll(p.descendants().toList());
            handles.add(p.toHandle());
        }
        handles.forEach(ProcessHandle::destroyForcibly);
        for (ProcessHandle h : handles) {
            h.onExit().completeOnTimeout(h, 30, TimeUnit.SECONDS).join();
        }
    }
}
