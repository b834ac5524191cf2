package io.hayloft.bench.directory;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.hayloft.bench.store.HttpConn;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.Wire;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * {@code hayloft bench directory}: the directory's operations per second with 1 and with 3 replicas,
 * side by side, each directory and store its own process on loopback ({@link DirectoryProcesses}).
 * {@code --threads} load threads, each with its own keep-alive connection to the leader, run each
 * operation for {@code --warmup} then {@code --duration} seconds, in this order (whatever the order
 * of {@code --ops}):
 * <ul>
 *   <li>{@code lease}: {@code POST /v1/leases {"keys":1}} (a client's lease of one key);</li>
 *   <li>{@code volume-create}: {@code POST /v1/volumes {"count":1}}: placement, the volume made on
 *       {@code --stores} real store processes (one replica on each of 3), then committed;</li>
 *   <li>{@code read-only}: {@code POST /v1/volumes/ID/read-only} of the volumes just made (the
 *       smallest volume-state change; each volume once, so it may end early when they run out);</li>
 *   <li>{@code read-only-x64}: the same with {@code --wide-threads} (64) threads and connections, on
 *       volumes made for it outside the timing ({@code {"count":100}} at a time): a warm-up seals 200,
 *       a calibration 400 more (each for at most {@code --warmup} seconds, at least 1), and from the
 *       calibration's rate enough are made for the measured seconds (2.5 times the rate times the
 *       duration, plus two per thread: the calibration's few hundred seals run colder than the
 *       measured ones, on the 2-core machine 1,242/s against 2,888/s). Making a volume costs far more
 *       than sealing it (there about 60 to 130 made against 2,000 to 3,000 sealed a second with one
 *       replica), so the making is cut short after {@code --prepare-seconds} (120), and at as many
 *       volumes as the store processes can hold open ({@link #volumeCap}: about 9,000 on 3 stores
 *       with a limit of 20,000 open files), each said in the output; the row then ends early when
 *       they run out, as {@code read-only} does, its {@code seconds} those it ran (said too);</li>
 *   <li>{@code stripe-map}: a raid-node's stripe-map plan and its rollback, {@code POST
 *       /v1/volumes/ID/encoding} (a 1-stripe {@code rs} 4+2 plan: {@code READ_ONLY -> ENCODING}, the
 *       map stored) then {@code DELETE /v1/volumes/ID/encoding?job=J} (map deleted, back to
 *       {@code READ_ONLY}), unfenced, each thread on its own read-only volume; one op = the pair;</li>
 *   <li>{@code heartbeat}: {@code POST /v1/heartbeat} from {@code --simulated-stores} simulated stores
 *       (no volumes), in turn, as fast as the threads go;</li>
 *   <li>{@code heartbeat-x64}: the same with {@code --wide-threads} threads;</li>
 *   <li>{@code heartbeat-fleet}: {@code --fleet} (1,000) more simulated stores, each sending its
 *       heartbeat once a second at its own phase, on an open-loop schedule ({@link FleetSchedule}) over
 *       {@code --fleet-connections} (32) connections, each serving every 32nd store; a heartbeat's
 *       latency runs from when it was due, not from when it was sent. Each store's first heartbeat
 *       (its registration) is sent before the warm-up, outside the timing. Reports the heartbeats
 *       answered per second, p50 and p99 from the due time, and the fraction more than 1 s late
 *       ({@code lateFraction}; heartbeats still unsent 2 s after the measured seconds count as late).</li>
 * </ul>
 * Every simulated store registers with the address of a {@link ProbeStub} in this process, which
 * answers the directory's health probes: a store whose probes fail costs the directory a change per
 * failed probe, which would be measured with the heartbeats.
 * Prints a table (ops/s, p50 and p99 latency in ms, the late fraction when a row has one, and the
 * 3-to-1 ratio of ops/s) and the same figures as JSON. Exit 0, or 1 when a replica count failed to
 * start or an operation had errors only.
 *
 * <p>Not thread-safe (one run); the load threads share only their results.
 */
@Command(name = "directory", mixinStandardHelpOptions = true,
        description = "Directory operations per second (lease, volume create, read-only, stripe-map plan, heartbeat; read-only "
                + "and heartbeat also with 64 threads, and heartbeats of 1,000 simulated stores once a second each) with 1 "
                + "and 3 replicas, side by side, on separate processes on loopback.")
public final class DirectoryLoad implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final List<String> OPS = List.of("lease", "volume-create", "read-only", "read-only-x64", "stripe-map", "heartbeat",
            "heartbeat-x64", "heartbeat-fleet");
    /** Volumes sealed by read-only-x64's warm-up and by its calibration (at least 2 and 4 per thread). */
    private static final int WARM_VOLUMES = 200;
    private static final int CALIBRATION_VOLUMES = 400;
    /** Volumes per {@code POST /v1/volumes} (the directory's most). */
    private static final int BATCH = 100;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--replicas", split = ",", defaultValue = "1,3", description = "replica counts to measure, in turn (default ${DEFAULT-VALUE})")
    List<Integer> replicas;

    @Option(names = "--threads", defaultValue = "8", description = "load threads (default ${DEFAULT-VALUE})")
    int threads;

    @Option(names = "--wide-threads", defaultValue = "64", description = "load threads of read-only-x64 and heartbeat-x64 (default ${DEFAULT-VALUE})")
    int wideThreads;

    @Option(names = "--prepare-seconds", defaultValue = "120",
            description = "at most this long making read-only-x64's volumes, outside the timing (default ${DEFAULT-VALUE})")
    double prepareSeconds;

    @Option(names = "--duration", defaultValue = "10", description = "seconds measured per operation (default ${DEFAULT-VALUE})")
    double duration;

    @Option(names = "--warmup", defaultValue = "3", description = "seconds of warm-up per operation (default ${DEFAULT-VALUE})")
    double warmup;

    @Option(names = "--stores", defaultValue = "3", description = "real store processes (default ${DEFAULT-VALUE})")
    int stores;

    @Option(names = "--simulated-stores", defaultValue = "64", description = "stores whose heartbeats are simulated (default ${DEFAULT-VALUE})")
    int simulated;

    @Option(names = "--fleet", defaultValue = "1000", description = "simulated stores of heartbeat-fleet, each heartbeating once a second (default ${DEFAULT-VALUE})")
    int fleet;

    @Option(names = "--fleet-connections", defaultValue = "32", description = "connections (threads) sending heartbeat-fleet's heartbeats (default ${DEFAULT-VALUE})")
    int fleetConnections;

    @Option(names = "--ops", split = ",",
            defaultValue = "lease,volume-create,read-only,read-only-x64,stripe-map,heartbeat,heartbeat-x64,heartbeat-fleet",
            description = "operations to measure, run in the order above (default ${DEFAULT-VALUE})")
    List<String> ops;

    @Option(names = "--raft-setting", description = "KEY=VALUE added to each replica's raft section (a group of more than one), "
            + "e.g. packChanges=false or entriesInFlight=4; repeatable")
    Map<String, String> raftSettings = new LinkedHashMap<>();

    @Option(names = "--json", description = "also write the JSON to this file")
    Path jsonFile;

    @Option(names = "--dir", description = "where the processes' data and logs go, kept afterwards (default: the temp directory, deleted)")
    Path dir;

    private PrintWriter out;
    /** The directories' health probes of simulated stores that the {@link ProbeStub} answered. */
    private long probesAnswered;
    /** Why read-only-x64's volume making stopped short of what it wanted, or null. */
    private String prepareCut;

    /**
     * One operation's figures. {@code threads}: its load threads (connections); {@code lateFraction}:
     * heartbeat-fleet's heartbeats answered more than 1 s after they were due (or never), over all due
     * in the measured seconds; null for the other rows.
     */
    record Result(String op, int threads, long ops, long errors, double seconds, double opsPerSec, double p50Millis, double p99Millis,
                  Double lateFraction, String firstError) {
    }

    /** One load thread's step: the status of one operation (200 counts). */
    interface Step {
        int run(HttpConn c, int thread, long n) throws Exception;
    }

    @Override
    public Integer call() throws Exception {
        out = spec.commandLine().getOut();
        for (String op : ops) {
            if (!OPS.contains(op)) {
                spec.commandLine().getErr().println("hayloft bench directory: unknown op '" + op + "': use " + OPS);
                return 2;
            }
        }
        if (threads < 1 || wideThreads < 1 || simulated < 1 || fleet < 1 || fleetConnections < 1) {
            spec.commandLine().getErr().println("hayloft bench directory: --threads, --wide-threads, --simulated-stores, --fleet "
                    + "and --fleet-connections must be >= 1");
            return 2;
        }
        if (prepareSeconds < 0) {
            spec.commandLine().getErr().println("hayloft bench directory: --prepare-seconds must be >= 0");
            return 2;
        }
        List<String> order = ordered(ops);
        Path parent = dir != null ? Files.createDirectories(dir) : Path.of(System.getProperty("java.io.tmpdir"));
        Map<Integer, Map<String, Result>> all = new LinkedHashMap<>();
        boolean failed = false;
        try (ProbeStub stub = new ProbeStub()) {
            for (int n : replicas) {
                out.printf("%d replica(s): starting %d directory and %d store processes...%n", n, n, stores);
                out.flush();
                try (DirectoryProcesses p = DirectoryProcesses.start(n, stores, parent, dir != null, raftSettings)) {
                    Map<String, Result> results = new LinkedHashMap<>();
                    for (String op : order) {
                        Result r = measure(p, op, stub.address());
                        results.put(op, r);
                        out.print(line(r));
                        out.flush();
                        failed |= r.ops() == 0;
                    }
                    all.put(n, results);
                } catch (RuntimeException e) {
                    spec.commandLine().getErr().println(n + " replica(s) failed: " + e.getMessage());
                    failed = true;
                }
            }
            probesAnswered = stub.answered();
        }
        out.println();
        out.print(table(all));
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("threads", threads);
        json.put("raftSettings", raftSettings);
        json.put("wideThreads", wideThreads);
        json.put("durationSeconds", duration);
        json.put("warmupSeconds", warmup);
        json.put("stores", stores);
        json.put("simulatedStores", simulated);
        json.put("fleet", fleet);
        json.put("fleetConnections", Math.min(fleetConnections, fleet));
        json.put("prepareSeconds", prepareSeconds);
        json.put("probesAnswered", probesAnswered);
        Map<String, Object> byReplicas = new LinkedHashMap<>();
        all.forEach((n, r) -> byReplicas.put(String.valueOf(n), r));
        json.put("replicas", byReplicas);
        String text = JSON.writer().with(SerializationFeature.INDENT_OUTPUT).writeValueAsString(json);
        out.println(text);
        if (jsonFile != null) {
            Files.writeString(jsonFile, text);
        }
        out.flush();
        return failed ? 1 : 0;
    }

    /** The ops asked for, each once, in the order of {@link #OPS} (heartbeats last: no volume is ever placed on a simulated store). */
    static List<String> ordered(List<String> asked) {
        return OPS.stream().filter(asked::contains).toList();
    }

    /** One op's progress line. */
    static String line(Result r) {
        return String.format(Locale.ROOT, "  %-15s %9.0f ops/s  p50 %7.2f ms  p99 %7.2f ms  (%d threads, %d ops, %d errors%s%s)%n", r.op(),
                r.opsPerSec(), r.p50Millis(), r.p99Millis(), r.threads(), r.ops(), r.errors(),
                r.lateFraction() == null ? "" : String.format(Locale.ROOT, ", %.2f%% more than 1 s late", 100 * r.lateFraction()),
                r.firstError() == null ? "" : "; first: " + r.firstError());
    }

    /**
     * The side-by-side table: per op, ops/s and latency for each replica count (and the late fraction,
     * when a row has one), and each count's ratio of ops/s to the first.
     */
    static String table(Map<Integer, Map<String, Result>> all) {
        StringBuilder b = new StringBuilder();
        List<Integer> ns = new ArrayList<>(all.keySet());
        boolean late = all.values().stream().anyMatch(m -> m.values().stream().anyMatch(r -> r.lateFraction() != null));
        b.append(String.format(Locale.ROOT, "%-15s", "op"));
        for (int n : ns) {
            b.append(String.format(Locale.ROOT, " | %-10s %9s %8s %8s", String.format(Locale.ROOT, "%2d repl.:", n), "ops/s", "p50 ms", "p99 ms"));
            if (late) {
                b.append(String.format(Locale.ROOT, " %7s", "late"));
            }
        }
        for (int i = 1; i < ns.size(); i++) {
            b.append(String.format(Locale.ROOT, " | %5s", ns.get(i) + "/" + ns.get(0)));
        }
        b.append('\n');
        List<String> opNames = new ArrayList<>();
        all.values().forEach(m -> m.keySet().forEach(o -> {
            if (!opNames.contains(o)) {
                opNames.add(o);
            }
        }));
        for (String op : opNames) {
            b.append(String.format(Locale.ROOT, "%-15s", op));
            for (int n : ns) {
                Result r = all.get(n).get(op);
                b.append(r == null ? String.format(Locale.ROOT, " | %10s %9s %8s %8s", "", "-", "-", "-")
                        : String.format(Locale.ROOT, " | %10s %9.0f %8.2f %8.2f", "", r.opsPerSec(), r.p50Millis(), r.p99Millis()));
                if (late) {
                    b.append(r == null || r.lateFraction() == null ? String.format(Locale.ROOT, " %7s", "-")
                            : String.format(Locale.ROOT, " %6.2f%%", 100 * r.lateFraction()));
                }
            }
            Result first = all.get(ns.get(0)).get(op);
            for (int i = 1; i < ns.size(); i++) {
                Result r = all.get(ns.get(i)).get(op);
                b.append(first == null || r == null || first.opsPerSec() == 0 ? String.format(Locale.ROOT, " | %5s", "-")
                        : String.format(Locale.ROOT, " | %5.2f", r.opsPerSec() / first.opsPerSec()));
            }
            b.append('\n');
        }
        return b.toString();
    }

    private Result measure(DirectoryProcesses p, String op, String stub) throws Exception {
        String leader = p.awaitLeader(java.time.Duration.ofSeconds(30));
        return switch (op) {
            case "lease" -> {
                p.post(leader, "/v1/leases", Map.of("keys", 1)); // a writable volume made first, outside the timing
                yield run(op, leader, lease(), threads, warmup, duration);
            }
            case "volume-create" -> run(op, leader, (c, t, n) -> send(c, "POST", "/v1/volumes", "{\"count\":1}"), threads, warmup, duration);
            // each volume is sealed once: none spent warming up
            case "read-only" -> run(op, leader, readOnly(p, leader), threads, 0, duration);
            case "read-only-x64" -> readOnlyWide(p, leader);
            case "stripe-map" -> run(op, leader, stripeMap(p, leader), threads, warmup, duration);
            case "heartbeat" -> run(op, leader, heartbeat(stub, threads), threads, warmup, duration);
            case "heartbeat-x64" -> run(op, leader, heartbeat(stub, wideThreads), wideThreads, warmup, duration);
            case "heartbeat-fleet" -> heartbeatFleet(leader, stub);
            default -> throw new IllegalArgumentException(op);
        };
    }

    private static Step lease() {
        return (c, t, n) -> send(c, "POST", "/v1/leases", "{\"keys\":1}");
    }

    /** Each WRITABLE volume once; a thread that finds none left stops. */
    private static Step readOnly(DirectoryProcesses p, String leader) {
        ConcurrentLinkedQueue<Integer> writable = new ConcurrentLinkedQueue<>(volumes(p, leader, "WRITABLE"));
        return (c, t, n) -> {
            Integer v = writable.poll();
            if (v == null) {
                return -1;
            }
            return send(c, "POST", "/v1/volumes/" + v + "/read-only", "{\"reason\":\"bench\"}");
        };
    }

    /**
     * {@code read-only} with {@link #wideThreads}: volumes made outside the timing, for a warm-up, for a
     * calibration, then, from the calibration's rate, for the measured seconds (see the class comment).
     */
    private Result readOnlyWide(DirectoryProcesses p, String leader) throws Exception {
        String op = "read-only-x64";
        long t0 = System.nanoTime();
        prepareCut = null;
        long deadline = t0 + (long) (prepareSeconds * 1e9);
        double phase = Math.max(1, warmup);
        makeWritable(p, leader, Math.max(WARM_VOLUMES, 2L * wideThreads), deadline);
        Result warm = run(op, leader, readOnly(p, leader), wideThreads, 0, phase);
        makeWritable(p, leader, Math.max(CALIBRATION_VOLUMES, 4L * wideThreads), deadline);
        Result calibration = run(op, leader, readOnly(p, leader), wideThreads, 0, phase);
        long wanted = volumesWanted(calibration.opsPerSec(), duration, wideThreads);
        int have = makeWritable(p, leader, wanted, deadline);
        out.printf(Locale.ROOT, "  %-15s warm-up sealed %d, calibration %d at %.0f/s; %d writable volumes for the measured seconds "
                        + "(%d wanted); %.1f s outside the timing%s%n", op, warm.ops(), calibration.ops(), calibration.opsPerSec(),
                have, wanted, (System.nanoTime() - t0) / 1e9, prepareCut == null ? "" : " (cut short " + prepareCut + ": the row may end early)");
        out.flush();
        Result r = run(op, leader, readOnly(p, leader), wideThreads, 0, duration);
        if (r.ops() > 0 && r.seconds() < duration * 0.99) {
            out.printf(Locale.ROOT, "  %-15s ran out of volumes after %.2f of %.1f s%n", op, r.seconds(), duration);
        }
        return r;
    }

    /** Volumes for {@code seconds} of sealing at {@code rate} a second: 2.5 times as many, plus two per thread. */
    static long volumesWanted(double rate, double seconds, int threadCount) {
        return (long) Math.ceil(rate * seconds * 2.5) + 2L * threadCount;
    }

    /**
     * Makes volumes, {@value #BATCH} at a time, until at least {@code target} are WRITABLE, or
     * {@code deadline} ({@link System#nanoTime}) has passed, or the directory holds
     * {@link #volumeCap} volumes, or a creation failed (each said in {@link #prepareCut}); returns how
     * many are WRITABLE.
     */
    private int makeWritable(DirectoryProcesses p, String leader, long target, long deadline) throws InterruptedException {
        long cap = volumeCap(maxFileDescriptors(), stores);
        int[] n = volumeCounts(p, leader);
        while (n[0] < target) {
            if (System.nanoTime() >= deadline) {
                prepareCut = "after --prepare-seconds " + prepareSeconds;
                break;
            }
            int count = (int) Math.min(BATCH, Math.min(target - n[0], cap - n[1]));
            if (count <= 0) {
                prepareCut = "at " + n[1] + " volumes, what the store processes' open-file limit allows";
                break;
            }
            try {
                p.post(leader, "/v1/volumes", Map.of("count", count), java.time.Duration.ofMinutes(5));
                n[0] += count;
                n[1] += count;
            } catch (java.io.IOException e) {
                prepareCut = "by a failed creation: " + e.getMessage();
                break;
            }
        }
        return volumeCounts(p, leader)[0];
    }

    /**
     * The most volumes the directory may hold so that no store process runs out of file descriptors:
     * a store keeps two files open per volume replica (its {@code .dat} and {@code .idx}; a run that
     * made 10,000 on 3 stores hit "Too many open files" with a limit of 20,000), 2,000 descriptors
     * are left for everything else, and each volume has {@code min(3, stores)} replicas spread over
     * {@code stores}.
     */
    static long volumeCap(long maxFds, int storeCount) {
        long perStore = Math.max(0, (maxFds - 2000) / 2);
        return perStore * storeCount / Math.max(1, Math.min(3, storeCount));
    }

    /** This process's open-file limit (the store processes inherit it), or 4,096 when the JVM cannot tell. */
    private static long maxFileDescriptors() {
        return java.lang.management.ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean u
                ? u.getMaxFileDescriptorCount() : 4096;
    }

    /** The leader's WRITABLE volumes and all its volumes. */
    private static int[] volumeCounts(DirectoryProcesses p, String leader) {
        int[] n = new int[2];
        JsonNode all = p.getJson(leader, "/v1/volumes");
        if (all != null) {
            for (JsonNode v : all) {
                n[1]++;
                if ("WRITABLE".equals(v.path("state").asText())) {
                    n[0]++;
                }
            }
        }
        return n;
    }

    /** Plan and roll back, over and over, each thread on its own READ_ONLY volume. */
    private Step stripeMap(DirectoryProcesses p, String leader) throws Exception {
        List<Integer> readOnly = new ArrayList<>(volumes(p, leader, "READ_ONLY"));
        while (readOnly.size() < threads) { // the read-only op did not run: seal some
            JsonNode made = p.post(leader, "/v1/volumes", Map.of("count", 1));
            int v = made.get(0).path("id").asInt();
            p.post(leader, "/v1/volumes/" + v + "/read-only", Map.of("reason", "bench"));
            readOnly.add(v);
        }
        List<String> ids = new ArrayList<>();
        for (int s = 0; s < stores; s++) {
            ids.add("store-" + s);
        }
        return (c, t, n) -> {
            int v = readOnly.get(t);
            String job = String.format(Locale.ROOT, "%08x", (long) t << 24 | (n & 0xFFFFFF));
            List<StripeMap.Block> blocks = new ArrayList<>();
            for (int u = 0; u < 6; u++) {
                blocks.add(new StripeMap.Block(ids.get(u % ids.size()), "v" + v + "-" + job + "-s0-u" + u + ".blk", 0, 0));
            }
            StripeMap plan = new StripeMap(v, job, "rs", 4, 2, 1 << 20, 4 << 20, StripeMap.PLANNED,
                    List.of(new StripeMap.Stripe(0, blocks)), new StripeMap.IndexBlock("v" + v + "-" + job + ".idx", ids, 0, 0));
            int s = send(c, "POST", "/v1/volumes/" + v + "/encoding", JSON.writeValueAsString(plan));
            if (s != 200) {
                return s;
            }
            return send(c, "DELETE", "/v1/volumes/" + v + "/encoding?job=" + job, null);
        };
    }

    /** {@link #simulated} stores (registered at {@code address}), in turn over {@code threadCount} threads. */
    private Step heartbeat(String address, int threadCount) throws Exception {
        List<byte[]> bodies = new ArrayList<>();
        for (int i = 0; i < simulated; i++) {
            bodies.add(heartbeatBody("sim-" + i, address, "sim-rack-" + (i % 8)));
        }
        return (c, t, n) -> {
            byte[] b = bodies.get((int) ((t + n * threadCount) % bodies.size()));
            return c.send("POST", "/v1/heartbeat", b, b.length);
        };
    }

    /** A simulated store's heartbeat: 1 TiB, half free, no volumes. */
    static byte[] heartbeatBody(String storeId, String address, String rack) throws Exception {
        return JSON.writeValueAsBytes(new Wire.Heartbeat(storeId, address, rack, 1L << 40, 1L << 39, List.of()));
    }

    /**
     * {@code heartbeat-fleet}: {@link #fleet} simulated stores ({@code fleet-I}) registered, then each
     * heartbeating once a second on {@link FleetSchedule} over {@link #fleetConnections} connections.
     */
    private Result heartbeatFleet(String leader, String address) throws Exception {
        String op = "heartbeat-fleet";
        int conns = Math.min(fleetConnections, fleet);
        List<byte[]> bodies = new ArrayList<>(fleet);
        for (int i = 0; i < fleet; i++) {
            bodies.add(heartbeatBody("fleet-" + i, address, "fleet-rack-" + (i % 8)));
        }
        int colon = leader.lastIndexOf(':');
        String host = leader.substring(0, colon);
        int port = Integer.parseInt(leader.substring(colon + 1));
        CountDownLatch registered = new CountDownLatch(conns);
        CountDownLatch go = new CountDownLatch(1);
        long[] times = new long[3]; // t0, measureFrom, end: written before go opens
        AtomicLong registrationErrors = new AtomicLong();
        AtomicReference<String> registrationError = new AtomicReference<>();
        FleetSchedule.Tally[] tallies = new FleetSchedule.Tally[conns];
        List<Thread> ts = new ArrayList<>();
        long start = System.nanoTime();
        for (int i = 0; i < conns; i++) {
            int t = i;
            Thread th = new Thread(() -> {
                int[] mine = FleetSchedule.storesOf(t, conns, fleet);
                try (HttpConn c = new HttpConn(host, port)) {
                    for (int store : mine) { // registrations, outside the timing
                        byte[] b = bodies.get(store);
                        try {
                            int status = c.send("POST", "/v1/heartbeat", b, b.length);
                            if (status != 200) {
                                registrationErrors.incrementAndGet();
                                registrationError.compareAndSet(null, "status " + status);
                            }
                        } catch (Exception e) {
                            registrationErrors.incrementAndGet();
                            registrationError.compareAndSet(null, e.toString());
                            c.close();
                        }
                    }
                    registered.countDown();
                    go.await();
                    tallies[t] = FleetSchedule.drive(mine, fleet, times[0], times[1], times[2], FleetSchedule.SYSTEM, store -> {
                        byte[] b = bodies.get(store);
                        try {
                            return c.send("POST", "/v1/heartbeat", b, b.length);
                        } catch (Exception e) {
                            c.close();
                            throw e;
                        }
                    });
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "directory-fleet-" + t);
            ts.add(th);
            th.start();
        }
        registered.await();
        out.printf(Locale.ROOT, "  %-15s %d simulated stores registered in %.1f s outside the timing (%d errors%s)%n", op, fleet,
                (System.nanoTime() - start) / 1e9, registrationErrors.get(),
                registrationError.get() == null ? "" : "; first: " + registrationError.get());
        out.flush();
        times[0] = System.nanoTime() + 10_000_000L;
        times[1] = times[0] + (long) (warmup * 1e9);
        times[2] = times[1] + (long) (duration * 1e9);
        go.countDown();
        for (Thread th : ts) {
            th.join();
        }
        FleetSchedule.Tally all = new FleetSchedule.Tally();
        for (FleetSchedule.Tally t : tallies) {
            if (t != null) {
                all.add(t);
            }
        }
        return fleetResult(op, conns, all, times[1], times[2], duration);
    }

    /**
     * heartbeat-fleet's figures: the heartbeats due in {@code [measureFrom, end)} and answered, over the
     * time from {@code measureFrom} to the last answer (at least the measured seconds); the percentiles
     * from the due times, heartbeats never sent included with the time they had waited.
     */
    static Result fleetResult(String op, int conns, FleetSchedule.Tally all, long measureFrom, long end, double duration) {
        double secs = Math.max(duration, (Math.max(end, all.lastDone) - measureFrom) / 1e9);
        long n = all.latency.getTotalCount();
        String first = all.firstError;
        if (all.unsent > 0) {
            first = (first == null ? "" : first + "; ") + all.unsent + " due but not sent within "
                    + FleetSchedule.GRACE_NANOS / 1_000_000_000L + " s after the measured seconds";
        }
        return new Result(op, conns, all.answered, all.errors, secs, all.answered / secs,
                n == 0 ? 0 : all.latency.getValueAtPercentile(50) / 1e6, n == 0 ? 0 : all.latency.getValueAtPercentile(99) / 1e6,
                all.lateFraction(), first);
    }

    private static List<Integer> volumes(DirectoryProcesses p, String leader, String state) {
        List<Integer> ids = new ArrayList<>();
        JsonNode all = p.getJson(leader, "/v1/volumes");
        if (all != null) {
            for (JsonNode v : all) {
                if (state.equals(v.path("state").asText())) {
                    ids.add(v.path("id").asInt());
                }
            }
        }
        return ids;
    }

    private static int send(HttpConn c, String method, String path, String body) throws Exception {
        byte[] b = body == null ? null : body.getBytes(StandardCharsets.UTF_8);
        return c.send(method, path, b, b == null ? 0 : b.length);
    }

    /** Runs {@code step} on {@code threads} threads for {@code warmup} seconds, then measures it for {@code duration}. */
    private static Result run(String op, String leader, Step step, int threads, double warmup, double duration)
            throws InterruptedException {
        int colon = leader.lastIndexOf(':');
        String host = leader.substring(0, colon);
        int port = Integer.parseInt(leader.substring(colon + 1));
        long start = System.nanoTime();
        long measureFrom = start + (long) (warmup * 1e9);
        long end = measureFrom + (long) (duration * 1e9);
        Histogram[] hists = new Histogram[threads];
        long[] counts = new long[threads];
        long[] errors = new long[threads];
        long[] lastEnd = new long[threads];
        AtomicReference<String> firstError = new AtomicReference<>();
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            int t = i;
            hists[t] = new Histogram(60_000_000_000L, 3);
            Thread th = new Thread(() -> {
                try (HttpConn c = new HttpConn(host, port)) {
                    for (long n = 0; ; n++) {
                        long t0 = System.nanoTime();
                        if (t0 >= end) {
                            break;
                        }
                        int status;
                        try {
                            status = step.run(c, t, n);
                        } catch (Exception e) {
                            firstError.compareAndSet(null, e.toString());
                            c.close();
                            status = 0;
                        }
                        if (status < 0) {
                            break; // nothing left to do
                        }
                        long t1 = System.nanoTime();
                        if (t0 >= measureFrom) {
                            if (status == 200) {
                                counts[t]++;
                                hists[t].recordValue(Math.min(t1 - t0, 60_000_000_000L));
                                lastEnd[t] = t1;
                            } else {
                                errors[t]++;
                                firstError.compareAndSet(null, "status " + status);
                            }
                        }
                    }
                }
            }, "directory-load-" + t);
            ts.add(th);
            th.start();
        }
        for (Thread th : ts) {
            th.join();
        }
        Histogram h = new Histogram(60_000_000_000L, 3);
        long ops = 0;
        long errs = 0;
        long last = measureFrom;
        for (int t = 0; t < threads; t++) {
            h.add(hists[t]);
            ops += counts[t];
            errs += errors[t];
            last = Math.max(last, lastEnd[t]);
        }
        double secs = Math.max(1e-9, (Math.min(end, Math.max(last, measureFrom)) - measureFrom) / 1e9);
        if (ops == 0) {
            secs = duration;
        }
        return new Result(op, threads, ops, errs, secs, ops / secs, h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(50) / 1e6,
                h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(99) / 1e6, null, firstError.get());
    }
}
