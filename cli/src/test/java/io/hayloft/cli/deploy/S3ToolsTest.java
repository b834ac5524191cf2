package io.hayloft.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.hayloft.serverkit.config.Ports;
import io.hayloft.testkit.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tools of the field against a gateway deployed as docs/deploy says (directory, three stores and
 * the cache by their units, then {@code hayloft s3} by {@code hayloft-s3.service} with
 * {@code s3.yaml}; every one a separate process): the {@code aws} CLI ({@code s3 cp} of a tree of a
 * couple of thousand small files, a few of several MiB and unicode names, up and back, compared
 * byte-exact; then {@code s3 sync --delete} of the tree with a file changed, one added and one
 * deleted, which sends exactly those three, a second sync that sends nothing, and a sync back into the
 * copy, compared byte-exact), a boto3 script with boto3's defaults
 * (src/test/resources/s3/boto3_check.py), and {@code rclone sync} and {@code rclone check} of the same
 * tree, up and back, then of the tree changed, synced back into the same copy. Each tool moves the
 * whole tree up and down once (the tree crosses ListObjects' 1,000-key page twice; the per-object
 * cost of five server processes on two cores is what this class spends its time on); a sync's own
 * work, listing and comparing, is proven on the changes. A tool that is not installed is skipped with
 * a message, unless HAYLOFT_REQUIRE_S3_TOOLS=1 (.ci/run installs them), where it fails.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class S3ToolsTest {
    private static final boolean REQUIRED = "1".equals(System.getenv("HAYLOFT_REQUIRE_S3_TOOLS"));
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final int SMALL_FILES = 2000;

    @TempDir
    static Path dir;

    private DeployedProcesses processes;
    private DeployedProcesses gateway;
    private String endpoint;
    private String accessKey;
    private String secretKey;
    private Path tree;

    /** True when {@code command...} runs and exits 0 (the tool is there); otherwise skips or, when required, fails. */
    private static void requireTool(String tool, String... command) {
        boolean present;
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            present = p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            present = false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            present = false;
        }
        if (!present && REQUIRED) {
            throw new AssertionError(tool + " is not installed, and HAYLOFT_REQUIRE_S3_TOOLS=1 (.ci/run installs it)");
        }
        Assumptions.assumeTrue(present, tool + " is not installed: skipped (HAYLOFT_REQUIRE_S3_TOOLS=1 makes it required)");
    }

    @BeforeAll
    void deploy() throws Exception {
        // The tree is made while the servers start (a few hundred ms of disk writes).
        CompletableFuture<Path> treeMade = CompletableFuture.supplyAsync(() -> {
            try {
                return makeTree(dir.resolve("tree"));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        Path deploy = DeployedProcesses.docs().resolve("deploy");
        processes = new DeployedProcesses(dir, "-Xmx512m");
        int directoryPort = Ports.free();
        int cachePort = Ports.free();
        int s3Port = Ports.free();
        int[] storePorts = {Ports.free(), Ports.free(), Ports.free()};
        String directory = "127.0.0.1:" + directoryPort;
        String cache = "127.0.0.1:" + cachePort;
        List<String> stores = java.util.Arrays.stream(storePorts).mapToObj(p -> "127.0.0.1:" + p).toList();

        List<String> d = new ArrayList<>(DeployedProcesses.execStart("hayloft-directory.service", ""));
        d.add("--init");
        // fsync=never here and on the stores: a test machine's speed (every S3 write is a synced namespace commit).
        d.addAll(List.of("dataDir=" + dir.resolve("directory"), "port=" + directoryPort, "cacheNodes=" + cache, "fsync=never"));
        processes.start("directory", d).get(60, TimeUnit.SECONDS);
        List<CompletableFuture<String>> others = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            String instance = Integer.toString(i + 1);
            List<String> s = new ArrayList<>(DeployedProcesses.execStart("hayloft-store@.service", instance));
            s.addAll(List.of("dataDirs=" + dir.resolve("store-" + instance), "port=" + storePorts[i],
                    "advertiseAddress=" + stores.get(i), "rack=rack-" + instance, "directory=" + directory, "fsync=never"));
            others.add(processes.start("store-" + instance, s));
        }
        List<String> c = new ArrayList<>(DeployedProcesses.execStart("hayloft-cache.service", ""));
        c.addAll(List.of("port=" + cachePort, "directory=" + directory, "allowedStores=" + String.join(",", stores)));
        others.add(processes.start("cache", c));
        for (CompletableFuture<String> f : others) {
            f.get(90, TimeUnit.SECONDS);
        }
        HttpClient http = HttpClient.newHttpClient();
        String[] last = {""};
        try {
            Await.untilTrue("three stores UP", Duration.ofSeconds(90), () -> {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + directory + "/v1/stores"))
                        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
                last[0] = r.statusCode() + " " + r.body();
                return r.statusCode() == 200 && new ObjectMapper().readTree(r.body()).findValuesAsText("state").stream()
                        .filter("UP"::equals).count() == 3;
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; /v1/stores: " + last[0] + "\nstore-1: "
                    + DeployedProcesses.tail(dir.resolve("store-1.log")) + "\ndirectory: " + DeployedProcesses.tail(dir.resolve("directory.log")), e);
        }
        // The gateway as hayloft-s3.service starts it, with s3.yaml; only the addresses differ here.
        List<String> g = new ArrayList<>(DeployedProcesses.execStart("hayloft-s3.service", ""));
        g.addAll(List.of("directory=" + directory, "port=" + s3Port, "host=127.0.0.1"));
        // s3.yaml: "give the JVM about workerThreads x 2 x chunkBytes of heap"; the tools here keep at most
        // 16 requests in flight.
        gateway = new DeployedProcesses(dir, "-Xmx1g");
        gateway.start("s3", g).get(60, TimeUnit.SECONDS);
        endpoint = "http://127.0.0.1:" + s3Port;
        JsonNode conf = YAML.readTree(deploy.resolve("s3.yaml").toFile());
        accessKey = conf.path("accessKey").asText(conf.path("credentials").path(0).path("accessKey").asText());
        secretKey = conf.path("secretKey").asText(conf.path("credentials").path(0).path("secretKey").asText());
        assertThat(accessKey).as("s3.yaml's access key").isNotBlank();
        tree = treeMade.get(60, TimeUnit.SECONDS);
    }

    @AfterAll
    void stop() throws Exception {
        if (gateway != null) {
            gateway.stopAll(false);
        }
        if (processes != null) {
            processes.stopAll(false);
        }
    }

    /** A couple of thousand small files (0 to 4 KiB) in nested folders, three of several MiB, unicode and space names. */
    static Path makeTree(Path root) throws IOException {
        Random random = new Random(27);
        boolean unicode = "UTF-8".equalsIgnoreCase(System.getProperty("sun.jnu.encoding"));
        for (int i = 0; i < SMALL_FILES; i++) {
            String folder = "d" + (i % 17) + "/" + (i % 5 == 0 ? "sub " + (i % 3) + "/" : "");
            String name = (unicode && i % 9 == 0 ? "grüße-ファイル-" : "file-") + i + (i % 11 == 0 ? " +plus%pct" : "") + ".dat";
            byte[] b = new byte[i % 97 == 0 ? 0 : random.nextInt(4096) + 1];
            random.nextBytes(b);
            Path p = root.resolve(folder + name);
            Files.createDirectories(p.getParent());
            Files.write(p, b);
        }
        for (int mib : new int[] {3, 9, 17}) {
            byte[] b = new byte[(mib << 20) + mib];
            random.nextBytes(b);
            Path p = root.resolve("big/" + (unicode ? "größe-" : "size-") + mib + " MiB.bin");
            Files.createDirectories(p.getParent());
            Files.write(p, b);
        }
        return root;
    }

    /** A copy of the tree under {@code to}, the files' modification times kept (the tools' syncs compare them). */
    static Path copyTree(Path tree, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(tree)) {
            for (Path p : files.toList()) {
                Path copy = to.resolve(tree.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(copy);
                } else {
                    Files.copy(p, copy, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
        return to;
    }

    /** The S3 URLs after {@code verb + ": "} in a tool's output ({@code aws s3 sync} prints "upload: FILE to URL", "delete: URL"). */
    static TreeSet<String> urls(String output, String verb) {
        TreeSet<String> out = new TreeSet<>();
        for (String line : output.split("[\r\n]+")) {
            int at = line.indexOf(verb + ": ");
            if (at >= 0) {
                String rest = line.substring(at);
                out.add(rest.substring(rest.indexOf("s3://")).trim());
            }
        }
        return out;
    }

    /** Relative path to SHA-256 of every file under {@code root}. */
    static TreeMap<String, String> digest(Path root) throws Exception {
        TreeMap<String, String> m = new TreeMap<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path p : files.filter(Files::isRegularFile).toList()) {
                m.put(root.relativize(p).toString(), HexFormat.of().formatHex(
                        MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p))));
            }
        }
        return m;
    }

    /** Runs a tool with {@code env}; its output is logged to {@code dir/NAME.out}; returns it; fails on a non-zero exit. */
    private String run(String name, Map<String, String> env, String... command) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        // Only the settings given here: none of this machine's AWS_* / RCLONE_* (a CA bundle, a profile,
        // an endpoint) reaches the tools.
        pb.environment().keySet().removeIf(k -> k.startsWith("AWS_") || k.startsWith("RCLONE_"));
        pb.environment().putAll(env);
        pb.environment().put("LANG", "C.UTF-8");
        Path out = dir.resolve(name + ".out");
        pb.redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile()));
        long start = System.nanoTime();
        Process p = pb.start();
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", command) + " did not end within 5 minutes: " + DeployedProcesses.tail(out));
        }
        System.out.printf("S3ToolsTest: %s took %d ms%n", String.join(" ", command), (System.nanoTime() - start) / 1_000_000);
        assertThat(p.exitValue()).as("%s exited %d: %s\ngateway log: %s", String.join(" ", command), p.exitValue(),
                DeployedProcesses.tail(out), DeployedProcesses.tail(dir.resolve("s3.log"))).isZero();
        return Files.readString(out);
    }

    private Map<String, String> awsEnv() throws IOException {
        Path config = dir.resolve("aws-config");
        Files.writeString(config, "[default]\nregion = us-east-1\ns3 =\n    addressing_style = path\n"
                + "    max_concurrent_requests = 16\n");
        return Map.of("AWS_ACCESS_KEY_ID", accessKey, "AWS_SECRET_ACCESS_KEY", secretKey, "AWS_DEFAULT_REGION", "us-east-1",
                "AWS_CONFIG_FILE", config.toString(), "AWS_SHARED_CREDENTIALS_FILE", dir.resolve("no-credentials").toString(),
                "AWS_EC2_METADATA_DISABLED", "true");
    }

    @Test
    void awsCliCopiesAndSyncsATreeUpAndBack() throws Exception {
        requireTool("aws (pip install awscli)", "aws", "--version");
        Map<String, String> env = awsEnv();
        String e = endpoint;
        run("aws", env, "aws", "--endpoint-url", e, "s3", "mb", "s3://tools-aws");
        run("aws", env, "aws", "--endpoint-url", e, "s3", "cp", "--recursive", "--only-show-errors", tree.toString(), "s3://tools-aws/tree/");
        Path back = dir.resolve("back-aws");
        run("aws", env, "aws", "--endpoint-url", e, "s3", "cp", "--recursive", "--only-show-errors", "s3://tools-aws/tree/", back.toString());
        assertThat(digest(back)).isEqualTo(digest(tree));

        // A copy of the tree with a file changed (to a size no file of the tree has), one added and one deleted:
        // sync lists the bucket (three pages), compares sizes and times, and sends exactly those three.
        Path local = copyTree(tree, dir.resolve("aws-tree"));
        Files.write(local.resolve("d3/file-3.dat"), new byte[5000]);
        Files.writeString(local.resolve("d3/added by sync.dat"), "added", StandardCharsets.UTF_8);
        Files.delete(local.resolve("d4/file-4.dat"));
        String sync = run("aws-sync", env, "aws", "--endpoint-url", e, "s3", "sync", "--delete", local.toString(), "s3://tools-aws/tree/");
        assertThat(urls(sync, "upload")).as("uploads of the sync: %s", sync)
                .containsExactlyInAnyOrder("s3://tools-aws/tree/d3/file-3.dat", "s3://tools-aws/tree/d3/added by sync.dat");
        assertThat(urls(sync, "delete")).as("deletes of the sync: %s", sync).containsExactly("s3://tools-aws/tree/d4/file-4.dat");
        // Nothing changed since: a second sync sends nothing (sizes and times listed back agree).
        String again = run("aws-again", env, "aws", "--endpoint-url", e, "s3", "sync", "--delete", local.toString(), "s3://tools-aws/tree/");
        assertThat(again).as("a second sync of an unchanged tree").doesNotContain("upload:").doesNotContain("delete:");
        // Back into the copy made by cp: the changed and added files come down, the deleted one goes.
        run("aws", env, "aws", "--endpoint-url", e, "s3", "sync", "--delete", "--only-show-errors", "s3://tools-aws/tree/", back.toString());
        TreeMap<String, String> expected = digest(local);
        assertThat(digest(back)).isEqualTo(expected);
        String ls = run("aws-ls", env, "aws", "--endpoint-url", e, "s3", "ls", "--recursive", "--summarize", "s3://tools-aws/tree/");
        assertThat(ls).contains("Total Objects: " + expected.size());
    }

    @Test
    void boto3WithItsDefaults() throws Exception {
        requireTool("boto3 (pip install boto3)", "python3", "-c", "import boto3");
        Path script = dir.resolve("boto3_check.py");
        try (var in = S3ToolsTest.class.getResourceAsStream("/s3/boto3_check.py")) {
            Files.write(script, in.readAllBytes());
        }
        String out = run("boto3", Map.of("AWS_ACCESS_KEY_ID", accessKey, "AWS_SECRET_ACCESS_KEY", secretKey,
                "AWS_CONFIG_FILE", dir.resolve("no-config").toString(), "AWS_SHARED_CREDENTIALS_FILE",
                dir.resolve("no-credentials").toString(), "AWS_EC2_METADATA_DISABLED", "true"),
                "python3", script.toString(), endpoint, "tools-boto3");
        assertThat(out).contains("boto3 ok");
    }

    @Test
    void rcloneSyncsAndChecksTheTree() throws Exception {
        requireTool("rclone (apt-get install rclone)", "rclone", "version");
        Path config = dir.resolve("rclone.conf");
        Files.writeString(config, "");
        Map<String, String> env = Map.of("RCLONE_CONFIG", config.toString(),
                "RCLONE_CONFIG_HAYLOFT_TYPE", "s3", "RCLONE_CONFIG_HAYLOFT_PROVIDER", "Other",
                "RCLONE_CONFIG_HAYLOFT_ACCESS_KEY_ID", accessKey, "RCLONE_CONFIG_HAYLOFT_SECRET_ACCESS_KEY", secretKey,
                "RCLONE_CONFIG_HAYLOFT_ENDPOINT", endpoint, "RCLONE_CONFIG_HAYLOFT_REGION", "us-east-1",
                "RCLONE_CONFIG_HAYLOFT_FORCE_PATH_STYLE", "true",
                // The 9 and 17 MiB files go up in 5 MiB parts.
                "RCLONE_CONFIG_HAYLOFT_UPLOAD_CUTOFF", "8M", "RCLONE_CONFIG_HAYLOFT_CHUNK_SIZE", "5M");
        // A copy of the tree: this test changes it.
        Path local = copyTree(tree, dir.resolve("rclone-tree"));
        run("rclone", env, "rclone", "mkdir", "hayloft:tools-rclone");
        run("rclone", env, "rclone", "sync", "--transfers", "16", "--checkers", "16", local.toString(), "hayloft:tools-rclone/tree");
        run("rclone", env, "rclone", "check", "--checkers", "16", local.toString(), "hayloft:tools-rclone/tree");
        Path back = dir.resolve("back-rclone");
        run("rclone", env, "rclone", "sync", "--transfers", "16", "--checkers", "16", "hayloft:tools-rclone/tree", back.toString());
        assertThat(digest(back)).isEqualTo(digest(tree));
        // A changed file and a deleted one: sync makes the remote equal again, check says so; synced back
        // into the copy above, the changed file comes down and the deleted one goes.
        Files.writeString(local.resolve("d1/file-1.dat"), "changed", StandardCharsets.UTF_8);
        Files.delete(local.resolve("d2/file-2.dat"));
        run("rclone", env, "rclone", "sync", "--checkers", "16", local.toString(), "hayloft:tools-rclone/tree");
        run("rclone", env, "rclone", "check", "--checkers", "16", local.toString(), "hayloft:tools-rclone/tree");
        run("rclone", env, "rclone", "sync", "--transfers", "16", "--checkers", "16", "hayloft:tools-rclone/tree", back.toString());
        assertThat(digest(back)).isEqualTo(digest(local));
    }
}
