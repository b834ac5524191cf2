package io.hayloft.testkit;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The commands under {@link SimulatedHosts}: {@code ip} and {@code tc} run as child processes with a
 * deadline, the namespaces that exist, killing what runs in one and deleting it, and the per-prefix
 * lock files that tell a live fixture's namespaces from a killed run's leftovers. Stateless apart from
 * the lazily resolved binaries; thread-safe.
 *
 * <p>Every name this class makes or deletes starts with {@link #FAMILY}, then three digits {@code X}
 * (the fixture's slot; its addresses are {@code 10.X.0.0/16}). A slot is owned by whoever holds an
 * exclusive lock on {@code /run/hayloft-netns/X.lock}: a killed JVM's lock goes with it, so names of a
 * slot whose lock can be taken are leftovers and may be deleted.
 */
final class Netns {
    /** The start of every namespace and link name made here. */
    static final String FAMILY = "hyl";
    /** A fixture's namespaces: {@code hylX-...}; its root-namespace link: {@code hylXt}. */
    static final Pattern SLOT_NAME = Pattern.compile("^" + FAMILY + "(\\d{3})(?:-.*|t)$");
    /** The probe of {@link SimulatedHosts#available()}: {@code hylp<pid>-<n>}. */
    static final Pattern PROBE_NAME = Pattern.compile("^" + FAMILY + "p(\\d+)-\\d+$");
    private static final Duration DEADLINE = Duration.ofSeconds(20);

    private static final AtomicInteger PROBES = new AtomicInteger();
    private static volatile String ip;
    private static volatile String tc;

    private Netns() {
    }

    /** A finished command: its exit code and its standard output and error, merged. */
    record Result(int exitCode, String output) {
        boolean ok() {
            return exitCode == 0;
        }
    }

    /** The {@code ip} binary (PATH, then /usr/sbin, /sbin), or empty. */
    static Optional<String> findBinary(String name) {
        List<String> dirs = new ArrayList<>(List.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)));
        dirs.addAll(List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin"));
        for (String dir : dirs) {
            if (dir.isEmpty()) {
                continue;
            }
            Path p = Path.of(dir, name);
            if (Files.isExecutable(p)) {
                return Optional.of(p.toString());
            }
        }
        return Optional.empty();
    }

    static String ip() {
        String b = ip;
        if (b == null) {
            b = findBinary("ip").orElseThrow(() -> new IllegalStateException("no ip binary (apt-get install iproute2)"));
            ip = b;
        }
        return b;
    }

    static String tc() {
        String b = tc;
        if (b == null) {
            b = findBinary("tc").orElseThrow(() -> new IllegalStateException("no tc binary (apt-get install iproute2)"));
            tc = b;
        }
        return b;
    }

    /** Runs {@code ip args...}, failing with its output unless it exits 0. */
    static String ip(String... args) {
        return check(run(DEADLINE, prepend(ip(), args)));
    }

    /** Runs {@code ip args...} and returns how it ended, whatever that was. */
    static Result tryIp(String... args) {
        return run(DEADLINE, prepend(ip(), args));
    }

    /** Runs {@code tc args...}, failing with its output unless it exits 0. */
    static String tc(String... args) {
        return check(run(DEADLINE, prepend(tc(), args)));
    }

    static Result tryTc(String... args) {
        return run(DEADLINE, prepend(tc(), args));
    }

    static List<String> prepend(String first, String... rest) {
        List<String> cmd = new ArrayList<>(rest.length + 1);
        cmd.add(first);
        cmd.addAll(List.of(rest));
        return cmd;
    }

    static String check(Result r) {
        if (!r.ok()) {
            throw new IllegalStateException(r.output().strip());
        }
        return r.output();
    }

    /** Runs {@code command} to its end (killed past {@code deadline}); stdin is empty. */
    static Result run(Duration deadline, List<String> command) {
        Process p;
        try {
            p = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        } catch (IOException e) {
            return new Result(-1, String.join(" ", command) + ": " + e.getMessage());
        }
        StringBuilder out = new StringBuilder();
        Thread reader = new Thread(() -> {
            try (InputStream in = p.getInputStream()) {
                String s = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                synchronized (out) {
                    out.append(s);
                }
            } catch (IOException e) {
                // the process was killed: what was read so far is lost, the exit code says enough
            }
        }, "netns-output");
        reader.setDaemon(true);
        reader.start();
        try {
            if (!p.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                p.waitFor(5, TimeUnit.SECONDS);
                return new Result(-1, String.join(" ", command) + ": not done within " + deadline.toSeconds() + " s");
            }
            reader.join(deadline.toMillis());
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            return new Result(-1, String.join(" ", command) + ": interrupted");
        }
        synchronized (out) {
            String text = out.toString();
            return new Result(p.exitValue(), p.exitValue() == 0 ? text : String.join(" ", command) + ": " + text);
        }
    }

    /** The names of the network namespaces {@code ip netns} knows. */
    static List<String> namespaces() {
        List<String> names = new ArrayList<>();
        for (String line : ip("netns", "list").split("\n")) {
            String l = line.strip();
            if (!l.isEmpty()) {
                names.add(l.split("\\s+")[0]);
            }
        }
        return names;
    }

    /** The names of the links of the root (this process's) namespace. */
    static List<String> rootLinks() {
        List<String> names = new ArrayList<>();
        for (String line : ip("-o", "link", "show").split("\n")) {
            // "4: eth0: <...>" or "7: hyl200t@if6: <...>"
            String[] parts = line.split(":", 3);
            if (parts.length >= 2) {
                String name = parts[1].strip();
                int at = name.indexOf('@');
                names.add(at >= 0 ? name.substring(0, at) : name);
            }
        }
        return names;
    }

    /** SIGKILLs every process in namespace {@code ns} and waits (bounded) until each is gone. */
    static void killAll(String ns) {
        Result r = tryIp("netns", "pids", ns);
        if (!r.ok()) {
            return;
        }
        List<ProcessHandle> killed = new ArrayList<>();
        for (String line : r.output().split("\n")) {
            String l = line.strip();
            if (!l.isEmpty()) {
                ProcessHandle.of(Long.parseLong(l)).ifPresent(h -> {
                    h.destroyForcibly();
                    killed.add(h);
                });
            }
        }
        long deadline = System.nanoTime() + DEADLINE.toNanos();
        for (ProcessHandle h : killed) {
            try {
                h.onExit().get(Math.max(1, (deadline - System.nanoTime()) / 1_000_000), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (ExecutionException | TimeoutException e) {
                // past the deadline: deleting the namespace is tried all the same
            }
        }
    }

    /** Kills what runs in {@code ns} and deletes it; no error when it is already gone. */
    static void deleteNamespace(String ns) {
        killAll(ns);
        Result r = tryIp("netns", "del", ns);
        if (!r.ok() && namespaces().contains(ns)) {
            throw new IllegalStateException(r.output().strip());
        }
    }

    /** Deletes every namespace named {@code prefix-...} and the root link {@code prefix + "t"}. */
    static void purge(String prefix) {
        if (rootLinks().contains(prefix + "t")) {
            tryIp("link", "del", prefix + "t");
        }
        for (String ns : namespaces()) {
            if (ns.startsWith(prefix + "-")) {
                deleteNamespace(ns);
            }
        }
    }

    /** The directory of the slot locks: /run/hayloft-netns, else under java.io.tmpdir. */
    static Path lockDir() {
        for (Path dir : List.of(Path.of("/run/hayloft-netns"), Path.of(System.getProperty("java.io.tmpdir"), "hayloft-netns"))) {
            try {
                Files.createDirectories(dir);
                if (Files.isWritable(dir)) {
                    return dir;
                }
            } catch (IOException e) {
                // try the next
            }
        }
        throw new UncheckedIOException(new IOException("no writable directory for the locks of the simulated hosts"));
    }

    /** Slot {@code x} held by this JVM until {@link #close()}. */
    record SlotLock(int slot, FileChannel channel, FileLock lock) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            synchronized (HELD) {
                try {
                    lock.release();
                } finally {
                    channel.close();
                    HELD.remove(slot);
                }
            }
        }
    }

    /**
     * The slots this JVM holds. A lock file this JVM holds is never opened a second time: closing any
     * channel of a file releases every POSIX lock the process has on it.
     */
    private static final Set<Integer> HELD = new HashSet<>();

    /** The lock of slot {@code x}, or empty when another fixture (in this JVM or another) holds it. */
    static Optional<SlotLock> tryLock(int x) throws IOException {
        synchronized (HELD) {
            if (HELD.contains(x)) {
                return Optional.empty();
            }
            FileChannel ch = FileChannel.open(lockDir().resolve(x + ".lock"), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = ch.tryLock();
            } catch (IOException | RuntimeException e) {
                ch.close();
                throw e;
            }
            if (lock == null) {
                ch.close();
                return Optional.empty();
            }
            HELD.add(x);
            return Optional.of(new SlotLock(x, ch, lock));
        }
    }

    /**
     * Deletes leftovers of fixtures whose JVM is gone: namespaces {@code hylX-...} and root links
     * {@code hylXt} of every slot whose lock can be taken, and probes of dead processes.
     * Returns the slots purged.
     */
    static List<Integer> removeStale() throws IOException {
        TreeSet<Integer> slots = new TreeSet<>();
        List<String> names = new ArrayList<>(namespaces());
        names.addAll(rootLinks());
        for (String name : names) {
            Matcher m = SLOT_NAME.matcher(name);
            if (m.matches()) {
                slots.add(Integer.parseInt(m.group(1)));
            }
            Matcher p = PROBE_NAME.matcher(name);
            if (p.matches() && ProcessHandle.of(Long.parseLong(p.group(1))).isEmpty()) {
                deleteNamespace(name);
            }
        }
        List<Integer> purged = new ArrayList<>();
        for (int x : slots) {
            Optional<SlotLock> lock = tryLock(x);
            if (lock.isPresent()) {
                try (SlotLock l = lock.get()) {
                    purge(prefix(l.slot()));
                    purged.add(l.slot());
                }
            }
        }
        return purged;
    }

    /** Probes what {@link SimulatedHosts#available()} tells (a throw-away namespace made and deleted). */
    static SimulatedHosts.Availability probe() {
        if (!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).contains("linux")) {
            return new SimulatedHosts.Availability(false,
                    "network namespaces need Linux, this is " + System.getProperty("os.name"));
        }
        for (String binary : List.of("ip", "tc")) {
            if (findBinary(binary).isEmpty()) {
                return new SimulatedHosts.Availability(false, "no " + binary + " binary (apt-get install iproute2)");
            }
        }
        String ns = FAMILY + "p" + ProcessHandle.current().pid() + "-" + PROBES.incrementAndGet();
        Result r = tryIp("netns", "add", ns);
        if (!r.ok()) {
            return new SimulatedHosts.Availability(false,
                    "cannot make a network namespace (root needed): " + r.output().strip());
        }
        try {
            for (List<String> cmd : List.of(
                    List.of(ip(), "-n", ns, "link", "add", "hylpb", "type", "bridge"),
                    List.of(ip(), "-n", ns, "link", "add", "hylpv0", "type", "veth", "peer", "name", "hylpv1"),
                    List.of(ip(), "-n", ns, "link", "set", "hylpv1", "master", "hylpb", "up"),
                    List.of(ip(), "-n", ns, "rule", "add", "to", "10.213.0.9/32", "unreachable", "pref",
                            SimulatedHosts.BLOCK_PREF),
                    List.of(tc(), "-n", ns, "qdisc", "replace", "dev", "hylpv0", "root", "tbf", "rate", "8mbit", "burst",
                            "32kb", "latency", "100ms"))) {
                r = run(Duration.ofSeconds(20), cmd);
                if (!r.ok()) {
                    return new SimulatedHosts.Availability(false, "namespace made, but: " + r.output().strip());
                }
            }
            return new SimulatedHosts.Availability(true, "network namespaces, veths, bridges, ip rules and tc work");
        } finally {
            tryIp("netns", "del", ns);
        }
    }

    /** Whether {@code 10.x.0.0/16} overlaps a route of this (root) namespace other than the default. */
    static boolean overlapsARoute(int x) {
        int subnet = (10 << 24) | (x << 16);
        Set<String> types = Set.of("local", "broadcast", "unreachable", "blackhole", "prohibit", "throw", "multicast",
                "anycast", "nat", "unicast");
        for (String line : ip("-4", "route", "show", "table", "all").split("\n")) {
            String[] tokens = line.strip().split("\\s+");
            if (tokens.length == 0 || tokens[0].isEmpty()) {
                continue;
            }
            String dest = types.contains(tokens[0]) && tokens.length > 1 ? tokens[1] : tokens[0];
            if (dest.equals("default") || !dest.matches("\\d+\\.\\d+\\.\\d+\\.\\d+(/\\d+)?")) {
                continue;
            }
            int slash = dest.indexOf('/');
            int len = slash < 0 ? 32 : Integer.parseInt(dest.substring(slash + 1));
            String[] o = (slash < 0 ? dest : dest.substring(0, slash)).split("\\.");
            int addr = (Integer.parseInt(o[0]) << 24) | (Integer.parseInt(o[1]) << 16) | (Integer.parseInt(o[2]) << 8)
                    | Integer.parseInt(o[3]);
            int common = Math.min(len, 16);
            int mask = common == 0 ? 0 : -1 << (32 - common);
            if ((addr & mask) == (subnet & mask)) {
                return true;
            }
        }
        return false;
    }

    static String prefix(int slot) {
        return FAMILY + slot;
    }
}
