package io.hayloft.raid;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A raid-node in a child JVM ({@link RaidMain}) on the test's class path; its stdout lines are
 * queued as they come so the test can wait for {@code PORT} or a {@code CHECKPOINT}.
 */
final class RaidProcess implements AutoCloseable {

    final Process process;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> seen = Collections.synchronizedList(new ArrayList<>());

    /**
     * @param haltAt the checkpoint at which the process halts (status 137), or null
     * @param log    where its stderr (the log) goes
     */
    RaidProcess(String haltAt, Path log, String... settings) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:TieredStopAtLevel=1", "--add-modules", "jdk.incubator.vector"));
        if (haltAt != null) {
            cmd.add("-Dhayloft.raid.haltAt=" + haltAt);
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), RaidMain.class.getName()));
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
