package io.hayloft.raid;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import java.util.zip.Deflater;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A raid-node in a child JVM ({@link RaidMain}) on the test's class path; its stdout lines are
 * queued as they come so the test can wait for {@code PORT} or a {@code CHECKPOINT}.
 *
 * <p>Once a test called {@link #share}, the children of the test JVM map their classes from one
 * class-data sharing archive instead of loading each from its jar (a third or so of a child's
 * start-up); the same classes, only loaded faster. Without it, or when it could not be made, they
 * load them as usual.
 */
final class RaidProcess implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RaidProcess.class);
    /** A short-lived child: C1 only and the serial collector start it fastest (as test-kit's children). */
    private static final List<String> JVM = List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
            "--add-modules", "jdk.incubator.vector");
    /** The class path and archive flag of every child once {@link #share} made the archive; null before. */
    private static volatile Launch shared;
    private static boolean tried; // share() made or failed to make the archive: only once per test JVM

    private record Launch(String classPath, List<String> flags) {
    }

    final Process process;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> seen = Collections.synchronizedList(new ArrayList<>());

    /**
     * @param haltAt the checkpoint at which the process halts (status 137), or null
     * @param log    where its stderr (the log) goes
     */
    RaidProcess(String haltAt, Path log, String... settings) throws IOException {
        this(haltAt, log, shared == null ? new Launch(System.getProperty("java.class.path"), List.of()) : shared, settings);
    }

    private RaidProcess(String haltAt, Path log, Launch launch, String... settings) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        cmd.addAll(JVM);
        cmd.addAll(launch.flags());
        if (haltAt != null) {
            cmd.add("-Dhayloft.raid.haltAt=" + haltAt);
        }
        cmd.addAll(List.of("-cp", launch.classPath(), RaidMain.class.getName()));
        // Every process plays the same raid-node restarting (a stable nodeId): it takes back the
        // raid lease its halted predecessor held at once, as a restarted daemon does.
        cmd.add("nodeId=crash-test-raid-node");
        cmd.addAll(List.of(settings));
        process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    seen.add(line);
                    lines.add(line);
                }
            } catch (IOException e) {
                // the process died; what it printed is in seen
            }
        }, "raid-process-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Makes the class-data sharing archive of the children of this test JVM, once: a raid-node
     * with {@code settings} (of a cluster with no volume yet, so it has nothing to do) starts, serves,
     * and is stopped (SIGTERM: its shutdown hook runs, then the JVM writes the classes it loaded).
     * The children's class path is the test's with each class directory as a jar (an archive holds
     * classes of jars only). If anything fails the children go without the archive.
     */
    static synchronized void share(Path log, String... settings) {
        if (tried) {
            return;
        }
        tried = true;
        try {
            Path dir = Files.createTempDirectory("raid-process-cds");
            dir.toFile().deleteOnExit();
            List<String> entries = new ArrayList<>();
            for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
                Path p = Path.of(entry);
                if (!entry.isEmpty() && Files.isDirectory(p)) {
                    Path jar = dir.resolve("classes-" + entries.size() + ".jar");
                    jar.toFile().deleteOnExit();
                    jar(p, jar);
                    entries.add(jar.toString());
                } else if (!entry.isEmpty()) {
                    entries.add(entry);
                }
            }
            String classPath = String.join(File.pathSeparator, entries);
            Path archive = dir.resolve("raid-node.jsa");
            archive.toFile().deleteOnExit();
            int status;
            try (RaidProcess p = new RaidProcess(null, log, new Launch(classPath, List.of("-XX:ArchiveClassesAtExit=" + archive)),
                    settings)) {
                p.port(60);
                p.process.destroy();
                status = p.exit(60);
            }
            if (Files.isRegularFile(archive) && Files.size(archive) > 0) {
                shared = new Launch(classPath, List.of("-XX:SharedArchiveFile=" + archive));
            } else {
                LOG.warn("no class-data sharing archive for the raid-node children (exit status {})", status);
            }
        } catch (Exception e) {
            LOG.warn("no class-data sharing archive for the raid-node children", e);
        }
    }

    /** Writes the files under {@code dir} into a new jar {@code jar}, uncompressed. */
    private static void jar(Path dir, Path jar) throws IOException {
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar)); Stream<Path> files = Files.walk(dir)) {
            out.setLevel(Deflater.NO_COMPRESSION);
            for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile).sorted()::iterator) {
                out.putNextEntry(new JarEntry(dir.relativize(f).toString().replace(File.separatorChar, '/')));
                Files.copy(f, out);
                out.closeEntry();
            }
        }
    }

    /** Waits for the first line starting with {@code prefix}; returns it. */
    String await(String prefix, long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            String line = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null) {
                throw new AssertionError("no line starting with '" + prefix + "' within " + seconds + " s; saw " + seen
                        + (process.isAlive() ? "" : "; exit status " + process.exitValue()));
            }
            if (line.startsWith(prefix)) {
                return line;
            }
        }
    }

    int port(long seconds) throws InterruptedException {
        return Integer.parseInt(await("PORT ", seconds).substring(5).trim());
    }

    /** Waits for the process to end; returns its exit status. */
    int exit(long seconds) throws InterruptedException {
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            throw new AssertionError("raid-node still running after " + seconds + " s; printed " + seen);
        }
        return process.exitValue();
    }

    List<String> printed() {
        synchronized (seen) {
            return List.copyOf(seen);
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }
}
