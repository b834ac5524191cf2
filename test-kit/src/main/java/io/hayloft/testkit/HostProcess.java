package io.hayloft.testkit;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A process started on a {@link SimulatedHost} by {@link SimulatedHost#start}. It runs as
 * {@code ip netns exec NS command...}; {@code ip} enters the namespace and then execs the command in
 * the same process, so {@link #pid()} is the command's own pid (the java of a server, not a wrapper)
 * and {@link #kill9()} kills the server itself. Thread-safe (the state is the {@link Process}'s).
 */
public final class HostProcess implements AutoCloseable {
    private final SimulatedHost host;
    private final List<String> command;
    private final Path log;
    private final Process process;

    HostProcess(SimulatedHost host, List<String> command, Path log, Process process) {
        this.host = host;
        this.command = List.copyOf(command);
        this.log = log;
        this.process = process;
    }

    /** The host it runs on. */
    public SimulatedHost host() {
        return host;
    }

    /** The command as given, without the {@code ip netns exec} in front (to start it again the same way). */
    public List<String> command() {
        return command;
    }

    /** Where its standard output and error go, or null when the caller redirected them itself. */
    public Path log() {
        return log;
    }

    /** The pid of the command itself (see the class javadoc). */
    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** The underlying process (exit value, {@code onExit}). */
    public Process process() {
        return process;
    }

    /**
     * SIGKILLs the process (and any children it started) and waits until it is gone (up to 20 s).
     * Returns this; no error when it had already ended.
     */
    public HostProcess kill9() throws InterruptedException {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            throw new IllegalStateException("pid " + pid() + " still alive 20 s after SIGKILL");
        }
        return this;
    }

    /** Sends SIGTERM (an orderly stop); does not wait. */
    public void terminate() {
        process.destroy();
    }

    /** Waits up to {@code timeout} for the process to end; true when it has. */
    public boolean waitFor(Duration timeout) throws InterruptedException {
        return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The exit value; the process must have ended. */
    public int exitValue() {
        return process.exitValue();
    }

    /** {@link #kill9()}; an interrupt while waiting stops the wait and is kept in the thread's status. */
    @Override
    public void close() {
        try {
            kill9();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public String toString() {
        return "pid " + pid() + " on " + host.name() + ": " + String.join(" ", command);
    }
}
