package io.hayloft.testkit;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One host of a {@link SimulatedHosts}: a network namespace with one address, on a rack, where
 * {@link #start} runs server processes. Made by {@link SimulatedHosts#add}. Thread-safe.
 */
public final class SimulatedHost implements SimulatedHosts.Endpoint {
    final SimulatedHosts fixture;
    private final String name;
    private final String rack;
    private final String address;
    final String namespace;
    final String switchLink;
    final String hostLink;
    final List<HostProcess> processes = new CopyOnWriteArrayList<>();

    SimulatedHost(SimulatedHosts fixture, String name, String rack, String address, String namespace, String switchLink,
            String hostLink) {
        this.fixture = fixture;
        this.name = name;
        this.rack = rack;
        this.address = address;
        this.namespace = namespace;
        this.switchLink = switchLink;
        this.hostLink = hostLink;
    }

    @Override
    public String name() {
        return name;
    }

    public String rack() {
        return rack;
    }

    @Override
    public String address() {
        return address;
    }

    /** The network namespace, for {@code ip netns exec} by hand. */
    public String namespace() {
        return namespace;
    }

    /**
     * Starts {@code command} on this host, its standard output and error appended to {@code log}
     * (the directories made), standard input empty, in this JVM's working directory and environment.
     */
    public HostProcess start(List<String> command, Path log) throws IOException {
        Path parent = log.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        ProcessBuilder b = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        return start(b, log);
    }

    /**
     * Starts {@code builder}'s command on this host with its directory, environment and redirects
     * ({@code builder} is not changed).
     */
    public HostProcess start(ProcessBuilder builder) throws IOException {
        return start(builder, null);
    }

    private HostProcess start(ProcessBuilder builder, Path log) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Netns.ip(), "netns", "exec", namespace));
        cmd.addAll(builder.command());
        ProcessBuilder b = new ProcessBuilder(cmd).directory(builder.directory())
                .redirectInput(builder.redirectInput()).redirectOutput(builder.redirectOutput())
                .redirectError(builder.redirectError()).redirectErrorStream(builder.redirectErrorStream());
        b.environment().clear();
        b.environment().putAll(builder.environment());
        synchronized (fixture) {
            fixture.checkOpen();
            HostProcess p = new HostProcess(this, builder.command(), log, b.start());
            processes.add(p);
            return p;
        }
    }

    /**
     * Runs {@code command} on this host to its end (killed past {@code timeout}) and returns its
     * output (standard output and error); fails unless it exits 0.
     */
    public String exec(Duration timeout, String... command) {
        List<String> cmd = new ArrayList<>(List.of(Netns.ip(), "netns", "exec", namespace));
        cmd.addAll(List.of(command));
        return Netns.check(Netns.run(timeout, cmd));
    }

    /** The processes started here, in order (ended ones too). */
    public List<HostProcess> processes() {
        return List.copyOf(processes);
    }

    @Override
    public String toString() {
        return name + " (" + address + ", " + rack + ")";
    }
}
