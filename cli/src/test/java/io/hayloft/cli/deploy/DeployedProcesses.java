package io.hayloft.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Hayloft servers started as separate processes the way docs/deploy's systemd units start them: the
 * arguments of each unit's {@code ExecStart}, with the example configs from docs/deploy, run from the
 * test class path. The tests that deploy as documented share it. Not thread-safe (one test's setup).
 */
public final class DeployedProcesses {
    private final Path logs;
    private final List<String> jvm;
    private final Map<String, Process> processes = new LinkedHashMap<>();

    /** Processes whose stderr goes to {@code logs/NAME.log}, started with the JVM options {@code jvm}. */
    public DeployedProcesses(Path logs, String... jvm) {
        this.logs = logs;
        this.jvm = List.of(jvm);
    }

    /** The repository's docs folder, found from the module's directory upwards. */
    public static Path docs() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("docs/deploy"))) {
                return p.resolve("docs");
            }
        }
        throw new IllegalStateException("no docs/deploy above " + Path.of("").toAbsolutePath());
    }

    /**
     * The arguments after {@code hayloft.jar} in a unit's {@code ExecStart}, with {@code %i} replaced by
     * the instance, {@code $HAYLOFT_ARGS} dropped (empty unless an operator sets it) and every
     * {@code /etc/hayloft/NAME} replaced by the example file in docs/deploy ({@code store-%i.yaml} is
     * the copy of {@code store.yaml}).
     */
    public static List<String> execStart(String unit, String instance) throws IOException {
        Path deploy = docs().resolve("deploy");
        String line = Files.readAllLines(deploy.resolve(unit)).stream().filter(l -> l.startsWith("ExecStart="))
                .findFirst().orElseThrow(() -> new AssertionError(unit + " has no ExecStart"));
        List<String> words = Arrays.asList(line.substring("ExecStart=".length()).trim().split("\\s+"));
        int jar = words.indexOf("/opt/hayloft/hayloft.jar");
        assertThat(jar).as("%s runs /opt/hayloft/hayloft.jar", unit).isPositive();
        assertThat(words.get(jar - 1)).isEqualTo("-jar");
        List<String> args = new ArrayList<>();
        for (String w : words.subList(jar + 1, words.size())) {
            if (w.equals("$HAYLOFT_ARGS")) {
                continue;
            }
            w = w.replace("/etc/hayloft/store-%i.yaml", "/etc/hayloft/store.yaml").replace("%i", instance);
            if (w.startsWith("/etc/hayloft/")) {
                Path example = deploy.resolve(w.substring("/etc/hayloft/".length()));
                assertThat(example).as("%s names %s, which docs/deploy must hold", unit, w).isRegularFile();
                w = example.toString();
            }
            args.add(w);
        }
        return args;
    }

    /** Starts {@code hayloft ARGS...} as process {@code name}; completes with its first "listening on" line. */
    public CompletableFuture<String> start(String name, List<String> args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvm);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "io.hayloft.cli.Hayloft"));
        cmd.addAll(args);
        Path log = logs.resolve(name + ".log");
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        processes.put(name, p);
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> ready = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try {
                for (String l = out.readLine(); l != null; l = out.readLine()) {
                    if (l.contains("listening on")) {
                        ready.complete(l);
                    }
                }
                ready.completeExceptionally(new AssertionError(name + " exited (" + p.waitFor() + ") before listening: "
                        + tail(log)));
            } catch (Exception e) {
                ready.completeExceptionally(e);
            }
        }, "out-" + name);
        reader.setDaemon(true);
        reader.start();
        return ready;
    }

    /** The process started as {@code name}, or null. */
    public Process process(String name) {
        return processes.get(name);
    }

    /** Names of the processes, in the order they were started. */
    public List<String> names() {
        return List.copyOf(processes.keySet());
    }

    /**
     * Stops every process with SIGTERM (as {@code systemctl stop}), the last started first, so the
     * directory stops last as docs/operations.md says. With {@code clean}, each must exit 143 within
     * 30 s (the units' {@code SuccessExitStatus}); without, a process that hangs is killed.
     */
    public void stopAll(boolean clean) throws InterruptedException {
        List<String> order = new ArrayList<>(processes.keySet());
        Collections.reverse(order);
        for (String name : order) {
            Process p = processes.get(name);
            p.destroy();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                if (clean) {
                    throw new AssertionError(name + " did not stop within 30 s of SIGTERM");
                }
            }
            if (clean) {
                assertThat(p.exitValue()).as("%s exit status after SIGTERM (SuccessExitStatus=143 in its unit)", name)
                        .isEqualTo(143);
            }
        }
    }

    /** The last 4,000 characters of a log, for failure messages. */
    public static String tail(Path log) {
        try {
            String s = Files.readString(log);
            return s.substring(Math.max(0, s.length() - 4000));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }
}
