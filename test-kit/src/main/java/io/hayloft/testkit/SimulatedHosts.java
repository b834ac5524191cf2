package io.hayloft.testkit;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Server processes on simulated hosts on this one Linux machine, for tests of what happens when
 * machines, racks or links fail: each host is a network namespace with its own address, so a test
 * can cut a host or a rack off, split the hosts into sides, cap a host's bandwidth, and
 * {@link HostProcess#kill9() kill -9} a server, all on real processes.
 *
 * <h2>Topology</h2>
 * One fixture owns a slot {@code X} (200..254) and the prefix {@code hylX}; every namespace and link
 * it makes carries that prefix, and its addresses are {@code 10.X.0.0/16}, used nowhere but here
 * (a slot whose range overlaps a route of this machine is skipped). A dedicated namespace
 * {@code hylX-sw} is the network: a core bridge, one bridge per rack joined to the core by an uplink
 * (a veth pair), and per host a veth pair from its namespace {@code hylX-NAME} to its rack's bridge.
 * The host of rack number {@code R} (1, 2, ... in order of first use), {@code H}-th in its rack, has
 * address {@code 10.X.R.H/16}. The test JVM reaches the hosts through one veth pair from this
 * (root) namespace to the core bridge, {@code hylXt}, with address {@code 10.X.0.1}
 * ({@link #testJvm()}); that link and its connected route are all this fixture adds to the root
 * namespace. Hosts have no default route, so nothing they send leaves the machine. As every host has
 * its own address, servers on different hosts can use the same port.
 *
 * <h2>Faults</h2>
 * <ul>
 * <li>{@link #cut(SimulatedHost)}: the host's port on its rack bridge goes down (a pulled cable): it reaches
 * nobody and nobody (the test JVM included) reaches it; open connections stall, they are not reset.
 * {@link #heal(SimulatedHost)} brings the port back.
 * <li>{@link #cutRack(String)}: the rack's uplink goes down; hosts of the rack still reach each other
 * but nothing outside the rack (the test JVM included). {@link #healRack(String)}.
 * <li>{@link #partition(Collection, Collection)}: no endpoint of one side reaches one of the other,
 * both ways; everything else is untouched (an endpoint named on neither side, the test JVM by
 * default, still reaches both sides). Done with policy-routing rules inside the hosts' namespaces
 * ({@code ip rule ... unreachable}, before the local table, for packets to and from each address of
 * the other side): new connections fail at once with "network unreachable" on the sending side, packets
 * that arrive anyway are dropped, and open connections stall (and resume after the heal). No netfilter
 * is needed. {@link #isolate(Collection)} separates a side from all other hosts;
 * {@link #healPartitions()} removes every partition.
 * <li>{@link #capBandwidth(SimulatedHost, long)}: a {@code tc tbf} qdisc on both ends of the host's veth, so
 * each direction is capped at the rate ({@code netem} is not available in these kernels);
 * {@link #uncap(SimulatedHost)}.
 * </ul>
 * Every change is in place when the method returns, but after a heal a host may need up to a second
 * more to reach a peer it tried while cut (its neighbour entry still resolving, as on real hosts):
 * wait for what the test needs with {@link Await}, never with a sleep.
 *
 * <h2>Life cycle</h2>
 * {@link #close()} SIGKILLs every process in the fixture's namespaces and deletes the namespaces and
 * the root link; a JVM shutdown hook does the same when a test never gets to close. A JVM killed with
 * SIGKILL leaves its namespaces behind: its slot lock ({@code /run/hayloft-netns/X.lock}) dies with
 * it, and {@link #create()} (or {@link #removeStale()}) deletes the leftovers of every slot whose lock
 * it can take. Two fixtures (in one JVM or in two) never share a slot.
 *
 * <h2>Where it runs</h2>
 * Root, Linux, {@code ip} and {@code tc} (iproute2). {@link #available()} probes once per JVM and says
 * why not when it cannot; tests {@code assumeTrue(SimulatedHosts.available().usable(), ...)}.
 * With {@code HAYLOFT_REQUIRE_NETNS=1} (set by {@code .ci/run}, which installs iproute2)
 * {@link #available()} throws an {@link AssertionError} instead, so those tests fail rather than skip.
 *
 * <h2>Example: the leader's host cut off from the other two replicas</h2>
 * <pre>{@code
 * assumeTrue(SimulatedHosts.available().usable(), SimulatedHosts.available().reason());
 * try (SimulatedHosts net = SimulatedHosts.create()) {
 *     List<SimulatedHost> replicas = List.of(net.add("n1", "rack1"), net.add("n2", "rack2"), net.add("n3", "rack3"));
 *     List<SimulatedHost> stores = List.of(net.add("s1", "rack1"), net.add("s2", "rack2"), net.add("s3", "rack3"));
 *     Map<SimulatedHost, HostProcess> running = new HashMap<>();
 *     for (SimulatedHost n : replicas) {      // every replica listens on its own address, same port everywhere
 *         Path config = writeConfig(dir, n.address(), replicas);     // peers at n.address():PORT
 *         running.put(n, n.start(List.of(SimulatedHosts.java(), "-jar", "cli/target/hayloft.jar",
 *                 "directory", "--init", "--config", config.toString()), dir.resolve(n.name() + ".log")));
 *     }
 *     for (SimulatedHost s : stores) { ... s.start(...) the same way ... }
 *     // The test JVM's client reaches every host: "http://" + n.address() + ":" + PORT.
 *     SimulatedHost leader = askWhoLeads(replicas);
 *     List<SimulatedHost> followers = replicas.stream().filter(h -> h != leader).toList();
 *     net.partition(Set.of(leader), followers);   // the test JVM (a client) and the stores still reach all three
 *     // ... the old leader acknowledges nothing more; the client follows NOT_LEADER to the new leader
 *     net.healPartitions();                       // the old leader rejoins as a follower
 *     HostProcess killed = running.get(leader).kill9();   // kill -9 a replica, start it again the same way
 *     running.put(leader, leader.start(killed.command(), killed.log()));
 * }
 * }</pre>
 * To keep a client strictly on the old leader's side, run it on a host of that side
 * ({@code net.partition(Set.of(leader, clientHost), followers)}) or name {@link #testJvm()} there.
 *
 * <p>Thread-safe: the methods that change the network are synchronized.
 */
public final class SimulatedHosts implements AutoCloseable {
    /** Set to 1 (as {@code .ci/run} does) to make tests fail, not skip, where namespaces cannot be made. */
    public static final String REQUIRE_ENV = "HAYLOFT_REQUIRE_NETNS";
    private static final int FIRST_SLOT = 200;
    private static final int LAST_SLOT = 254;
    /** The preference of the partition rules; the local table moves from 0 to {@link #LOCAL_PREF}. */
    static final String BLOCK_PREF = "100";
    private static final String LOCAL_PREF = "200";
    private static final Pattern HOST_NAME = Pattern.compile("[a-z0-9][a-z0-9_-]{0,31}");
    private static volatile Availability availability;

    /** Something with an address in the fixture: a {@link SimulatedHost} or the {@link #testJvm()}. */
    public interface Endpoint {
        String name();

        /** Its IPv4 address, e.g. {@code 10.200.1.1}. */
        String address();
    }

    /** Whether simulated hosts can be made here, and why not. */
    public record Availability(boolean usable, String reason) {
    }

    private final Netns.SlotLock slot;
    private final String prefix;
    private final String switchNs;
    private final Endpoint testJvm;
    private final Map<String, Integer> racks = new LinkedHashMap<>();
    private final Map<String, Integer> hostsPerRack = new LinkedHashMap<>();
    private final Map<String, SimulatedHost> hosts = new LinkedHashMap<>();
    private final Set<SimulatedHost> cutHosts = new LinkedHashSet<>();
    private final Set<String> cutRacks = new LinkedHashSet<>();
    private final Set<SimulatedHost> capped = new LinkedHashSet<>();
    private final Set<List<Endpoint>> blocked = new LinkedHashSet<>();
    private final Thread shutdownHook;
    private boolean closed;

    private SimulatedHosts(Netns.SlotLock slot) {
        this.slot = slot;
        this.prefix = Netns.prefix(slot.slot());
        this.switchNs = prefix + "-sw";
        String address = "10." + slot.slot() + ".0.1";
        this.testJvm = new Endpoint() {
            @Override
            public String name() {
                return "test-jvm";
            }

            @Override
            public String address() {
                return address;
            }

            @Override
            public String toString() {
                return "test JVM " + address;
            }
        };
        this.shutdownHook = new Thread(this::closeQuietly, "simulated-hosts-" + prefix);
    }

    /**
     * Whether namespaces, veths, bridges, policy rules and {@code tc} work here (probed once: a
     * throw-away namespace is made and deleted). With {@code HAYLOFT_REQUIRE_NETNS=1} an unusable
     * machine throws an {@link AssertionError} naming the reason.
     */
    public static Availability available() {
        Availability a = availability;
        if (a == null) {
            synchronized (SimulatedHosts.class) {
                a = availability;
                if (a == null) {
                    a = Netns.probe();
                    availability = a;
                }
            }
        }
        if (!a.usable() && "1".equals(System.getenv(REQUIRE_ENV))) {
            throw new AssertionError(REQUIRE_ENV + "=1 but simulated hosts cannot be made here: " + a.reason());
        }
        return a;
    }

    /**
     * Deletes what fixtures of JVMs that are gone left behind (namespaces and root links with the
     * prefix of a slot no live fixture holds). Returns the prefixes purged.
     */
    public static List<String> removeStale() throws IOException {
        List<String> purged = new ArrayList<>();
        for (int x : Netns.removeStale()) {
            purged.add(Netns.prefix(x));
        }
        return purged;
    }

    /** The java binary of this JVM, to start a java server on a host. */
    public static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** A fixture with no host yet (only the switch namespace and the test JVM's link). */
    public static SimulatedHosts create() throws IOException {
        Availability a = available();
        if (!a.usable()) {
            throw new IllegalStateException("simulated hosts cannot be made here: " + a.reason());
        }
        Netns.removeStale();
        for (int x = FIRST_SLOT; x <= LAST_SLOT; x++) {
            Optional<Netns.SlotLock> lock = Netns.tryLock(x);
            if (lock.isEmpty()) {
                continue;
            }
            boolean overlaps;
            try {
                Netns.purge(Netns.prefix(x));
                overlaps = Netns.overlapsARoute(x);
            } catch (RuntimeException e) {
                lock.get().close();
                throw e;
            }
            if (overlaps) {
                lock.get().close();
                continue;
            }
            SimulatedHosts net = new SimulatedHosts(lock.get());
            try {
                net.setUp();
            } catch (RuntimeException e) {
                net.closeQuietly();
                throw e;
            }
            return net;
        }
        throw new IllegalStateException("no free slot 10." + FIRST_SLOT + "-" + LAST_SLOT + ".0.0/16 for simulated hosts");
    }

    private void setUp() {
        Runtime.getRuntime().addShutdownHook(shutdownHook);
        Netns.ip("netns", "add", switchNs);
        Netns.ip("-n", switchNs, "link", "add", core(), "type", "bridge");
        Netns.ip("-n", switchNs, "link", "set", core(), "up");
        String root = prefix + "t";
        Netns.ip("link", "add", root, "type", "veth", "peer", "name", prefix + "tc", "netns", switchNs);
        // No IPv6 link-local address on the root side (fails harmlessly where IPv6 is off).
        Netns.tryIp("link", "set", root, "addrgenmode", "none");
        Netns.ip("addr", "add", testJvm.address() + "/16", "dev", root);
        Netns.ip("link", "set", root, "up");
        Netns.ip("-n", switchNs, "link", "set", prefix + "tc", "master", core(), "up");
    }

    /** The prefix of every name this fixture makes, e.g. {@code hyl200}. */
    public String prefix() {
        return prefix;
    }

    /** The fixture's addresses, e.g. {@code 10.200.0.0/16}. */
    public String subnet() {
        return "10." + slot.slot() + ".0.0/16";
    }

    /** This JVM, as an endpoint: address {@code 10.X.0.1}, for {@link #partition} and for servers the hosts call. */
    public Endpoint testJvm() {
        return testJvm;
    }

    /**
     * Adds host {@code name} (lower case letters, digits, '-', '_'; at most 32) on {@code rack} (made on first
     * use) and returns it, up and reachable from every host and the test JVM.
     */
    public synchronized SimulatedHost add(String name, String rack) {
        checkOpen();
        if (!HOST_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("host name must match " + HOST_NAME + ": " + name);
        }
        if (hosts.containsKey(name)) {
            throw new IllegalArgumentException("host " + name + " exists");
        }
        int r = rackIndex(rack);
        int h = hostsPerRack.merge(rack, 1, Integer::sum);
        if (h > 254) {
            throw new IllegalArgumentException("at most 254 hosts per rack");
        }
        int n = hosts.size() + 1;
        SimulatedHost host = new SimulatedHost(this, name, rack, "10." + slot.slot() + "." + r + "." + h, prefix + "-" + name,
                prefix + "h" + n, prefix + "e" + n);
        hosts.put(name, host);
        String ns = host.namespace;
        Netns.ip("netns", "add", ns);
        Netns.ip("-n", switchNs, "link", "add", host.switchLink, "type", "veth", "peer", "name", host.hostLink, "netns", ns);
        Netns.ip("-n", switchNs, "link", "set", host.switchLink, "master", prefix + "r" + r, "up");
        Netns.ip("-n", ns, "link", "set", "lo", "up");
        Netns.ip("-n", ns, "addr", "add", host.address() + "/16", "dev", host.hostLink);
        Netns.ip("-n", ns, "link", "set", host.hostLink, "up");
        // The partition rules must come before the local table, or packets to this host's own address
        // would be accepted whatever their source.
        Netns.ip("-n", ns, "rule", "add", "pref", LOCAL_PREF, "lookup", "local");
        Netns.ip("-n", ns, "rule", "del", "pref", "0");
        return host;
    }

    private int rackIndex(String rack) {
        if (rack == null || rack.isBlank()) {
            throw new IllegalArgumentException("a rack needs a name");
        }
        Integer r = racks.get(rack);
        if (r != null) {
            return r;
        }
        r = racks.size() + 1;
        if (r > 254) {
            throw new IllegalArgumentException("at most 254 racks");
        }
        racks.put(rack, r);
        String bridge = prefix + "r" + r;
        Netns.ip("-n", switchNs, "link", "add", bridge, "type", "bridge");
        Netns.ip("-n", switchNs, "link", "set", bridge, "up");
        Netns.ip("-n", switchNs, "link", "add", uplink(r), "type", "veth", "peer", "name", prefix + "u" + r + "b");
        Netns.ip("-n", switchNs, "link", "set", uplink(r), "master", bridge, "up");
        Netns.ip("-n", switchNs, "link", "set", prefix + "u" + r + "b", "master", core(), "up");
        return r;
    }

    private String core() {
        return prefix + "c";
    }

    private String uplink(int rack) {
        return prefix + "u" + rack + "a";
    }

    /** The host named {@code name}. */
    public synchronized SimulatedHost host(String name) {
        SimulatedHost h = hosts.get(name);
        if (h == null) {
            throw new IllegalArgumentException("no host " + name);
        }
        return h;
    }

    /** Every host, in the order added. */
    public synchronized List<SimulatedHost> hosts() {
        return List.copyOf(hosts.values());
    }

    /** The racks, in the order of first use. */
    public synchronized List<String> racks() {
        return List.copyOf(racks.keySet());
    }

    /** Cuts {@code host} off: nobody reaches it, it reaches nobody. Idempotent. */
    public synchronized void cut(SimulatedHost host) {
        own(host);
        Netns.ip("-n", switchNs, "link", "set", host.switchLink, "down");
        cutHosts.add(host);
    }

    /** Undoes {@link #cut(SimulatedHost)}. */
    public synchronized void heal(SimulatedHost host) {
        own(host);
        Netns.ip("-n", switchNs, "link", "set", host.switchLink, "up");
        cutHosts.remove(host);
    }

    /** Cuts the uplink of {@code rack}: its hosts reach each other only. Idempotent. */
    public synchronized void cutRack(String rack) {
        checkOpen();
        Netns.ip("-n", switchNs, "link", "set", uplink(knownRack(rack)), "down");
        cutRacks.add(rack);
    }

    /** Undoes {@link #cutRack(String)}. */
    public synchronized void healRack(String rack) {
        checkOpen();
        Netns.ip("-n", switchNs, "link", "set", uplink(knownRack(rack)), "up");
        cutRacks.remove(rack);
    }

    private int knownRack(String rack) {
        Integer r = racks.get(rack);
        if (r == null) {
            throw new IllegalArgumentException("no rack " + rack);
        }
        return r;
    }

    /**
     * No endpoint of {@code a} reaches an endpoint of {@code b}, nor the other way round, until
     * {@link #healPartitions()}; adds to earlier partitions. Endpoints on neither side are untouched.
     */
    public synchronized void partition(Collection<? extends Endpoint> a, Collection<? extends Endpoint> b) {
        checkOpen();
        a.forEach(this::own);
        b.forEach(this::own);
        for (Endpoint x : a) {
            if (b.contains(x)) {
                throw new IllegalArgumentException(x.name() + " is on both sides");
            }
        }
        for (Endpoint x : a) {
            for (Endpoint y : b) {
                List<Endpoint> pair = x.address().compareTo(y.address()) < 0 ? List.of(x, y) : List.of(y, x);
                if (blocked.add(pair)) {
                    rules("add", x, y);
                    rules("add", y, x);
                }
            }
        }
    }

    /**
     * Separates {@code side} from every host not in it (as {@link #partition}); the test JVM is on
     * neither side unless named in {@code side}.
     */
    public synchronized void isolate(Collection<? extends Endpoint> side) {
        List<SimulatedHost> rest = new ArrayList<>();
        for (SimulatedHost h : hosts.values()) {
            if (!side.contains(h)) {
                rest.add(h);
            }
        }
        partition(side, rest);
    }

    /** Removes every partition. */
    public synchronized void healPartitions() {
        checkOpen();
        for (List<Endpoint> pair : blocked) {
            rules("del", pair.get(0), pair.get(1));
            rules("del", pair.get(1), pair.get(0));
        }
        blocked.clear();
    }

    /** In {@code at}'s namespace (nothing for the test JVM): packets to and from {@code other} unreachable. */
    private void rules(String verb, Endpoint at, Endpoint other) {
        if (at instanceof SimulatedHost h) {
            for (String dir : List.of("to", "from")) {
                Netns.ip("-n", h.namespace, "rule", verb, dir, other.address() + "/32", "unreachable", "pref", BLOCK_PREF);
            }
        }
    }

    /**
     * Caps {@code host}'s link at {@code bitsPerSecond} in each direction (a token bucket with a burst of
     * 1/20 s of the rate, at least 32 KiB); replaces an earlier cap.
     */
    public synchronized void capBandwidth(SimulatedHost host, long bitsPerSecond) {
        own(host);
        if (bitsPerSecond < 8_000) {
            throw new IllegalArgumentException("cap below 8 kbit/s: " + bitsPerSecond);
        }
        String burst = Long.toString(Math.max(32 * 1024, bitsPerSecond / 8 / 20));
        Netns.tc("-n", host.namespace, "qdisc", "replace", "dev", host.hostLink, "root", "tbf", "rate", bitsPerSecond + "bit",
                "burst", burst, "latency", "200ms");
        Netns.tc("-n", switchNs, "qdisc", "replace", "dev", host.switchLink, "root", "tbf", "rate", bitsPerSecond + "bit",
                "burst", burst, "latency", "200ms");
        capped.add(host);
    }

    /** Undoes {@link #capBandwidth}; no error when there is no cap. */
    public synchronized void uncap(SimulatedHost host) {
        own(host);
        if (capped.remove(host)) {
            Netns.tc("-n", host.namespace, "qdisc", "del", "dev", host.hostLink, "root");
            Netns.tc("-n", switchNs, "qdisc", "del", "dev", host.switchLink, "root");
        }
    }

    /** Heals every cut host and rack, every partition, and removes every cap. */
    public synchronized void healAll() {
        for (SimulatedHost h : List.copyOf(cutHosts)) {
            heal(h);
        }
        for (String r : List.copyOf(cutRacks)) {
            healRack(r);
        }
        healPartitions();
        for (SimulatedHost h : List.copyOf(capped)) {
            uncap(h);
        }
    }

    private void own(Endpoint e) {
        checkOpen();
        if (e != testJvm && !(e instanceof SimulatedHost h && h.fixture == this)) {
            throw new IllegalArgumentException(e + " is not of this fixture");
        }
    }

    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("closed");
        }
    }

    /**
     * SIGKILLs every process on the hosts, deletes every namespace and link this fixture made, and
     * frees its slot. Idempotent.
     */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        if (Thread.currentThread() != shutdownHook) {
            try {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            } catch (IllegalStateException | IllegalArgumentException e) {
                // the JVM is shutting down, or setUp failed before the hook was added
            }
        }
        RuntimeException first = null;
        for (SimulatedHost h : hosts.values()) {
            for (HostProcess p : h.processes) {
                p.process().descendants().forEach(ProcessHandle::destroyForcibly);
                p.process().destroyForcibly();
            }
        }
        List<String> names = new ArrayList<>();
        hosts.values().forEach(h -> names.add(h.namespace));
        names.add(switchNs);
        try {
            // The root link first: deleting its namespace would free it only later, asynchronously.
            if (Netns.rootLinks().contains(prefix + "t")) {
                Netns.ip("link", "del", prefix + "t");
            }
        } catch (RuntimeException e) {
            first = e;
        }
        for (String ns : names) {
            try {
                Netns.deleteNamespace(ns);
            } catch (RuntimeException e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        try {
            Netns.purge(prefix);
        } catch (RuntimeException e) {
            if (first == null) {
                first = e;
            }
        } finally {
            slot.close();
        }
        if (first != null) {
            throw first;
        }
    }

    private void closeQuietly() {
        try {
            close();
        } catch (Exception e) {
            System.err.println("simulated hosts " + prefix + ": " + e);
        }
    }

    @Override
    public String toString() {
        return "SimulatedHosts " + prefix + " " + subnet();
    }
}
