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
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * {@code hayloft bench directory}: the directory's operations per second with 1 and with 3 replicas,
 * side by side, each directory and store its own process on loopback ({@link DirectoryProcesses}).
 * {@code --threads} load threads, each with its own keep-alive connection to the leader, run each
 * operation for {@code --warmup} then {@code --duration} seconds, in this order:
 * <ul>
 *   <li>{@code lease}: {@code POST /v1/leases {"keys":1}} (a client's lease of one key);</li>
 *   <li>{@code volume-create}: {@code POST /v1/volumes {"count":1}}: placement, the volume made on
 *       {@code --stores} real store processes (one replica on each of 3), then committed;</li>
 *   <li>{@code read-only}: {@code POST /v1/volumes/ID/read-only} of the volumes just made (the
 *       smallest volume-state change; each volume once, so it may end early when they run out);</li>
 *   <li>{@code stripe-map}: a raid-node's stripe-map plan and its rollback, {@code POST
 *       /v1/volumes/ID/encoding} (a 1-stripe {@code rs} 4+2 plan: {@code READ_ONLY -> ENCODING}, the
 *       map stored) then {@code DELETE /v1/volumes/ID/encoding?job=J} (map deleted, back to
 *       {@code READ_ONLY}), unfenced, each thread on its own read-only volume; one op = the pair;</li>
 *   <li>{@code heartbeat}: {@code POST /v1/heartbeat} from {@code --simulated-stores} simulated stores
 *       (no volumes), in turn.</li>
 * </ul>
 * Prints a table (ops/s, p50 and p99 latency in ms, and the 3-to-1 ratio) and the same figures as
 * JSON. Exit 0, or 1 when a replica count failed to start or an operation had errors only.
 *
 * <p>Not thread-safe (one run); the load threads share only their results.
 */
@Command(name = "directory", mixinStandardHelpOptions = true,
        description = "Directory operations per second (lease, volume create, read-only, stripe-map plan, heartbeat) with 1 "
                + "and 3 replicas, side by side, on separate processes on loopback.")
public final class DirectoryLoad implements Callable<Integer> {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final List<String> OPS = List.of("lease", "volume-create", "read-only", "stripe-map", "heartbeat");

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--replicas", split = ",", defaultValue = "1,3", description = "replica counts to measure, in turn (default ${DEFAULT-VALUE})")
    List<Integer> replicas;

    @Option(names = "--threads", defaultValue = "8", description = "load threads (default ${DEFAULT-VALUE})")
    int threads;

    @Option(names = "--duration", defaultValue = "10", description = "seconds measured per operation (default ${DEFAULT-VALUE})")
    double duration;

    @Option(names = "--warmup", defaultValue = "3", description = "seconds of warm-up per operation (default ${DEFAULT-VALUE})")
    double warmup;

    @Option(names = "--stores", defaultValue = "3", description = "real store processes (default ${DEFAULT-VALUE})")
    int stores;

    @Option(names = "--simulated-stores", defaultValue = "64", description = "stores whose heartbeats are simulated (default ${DEFAULT-VALUE})")
    int simulated;

    @Option(names = "--ops", split = ",", defaultValue = "lease,volume-create,read-only,stripe-map,heartbeat",
            description = "operations to measure (default ${DEFAULT-VALUE})")
    List<String> ops;

    @Option(names = "--json", description = "also write the JSON to this file")
    Path jsonFile;

    @Option(names = "--dir", description = "where the processes' data and logs go, kept afterwards (default: the temp directory, deleted)")
    Path dir;

    /** One operation's figures. */
    record Result(String op, long ops, long errors, double seconds, double opsPerSec, double p50Millis, double p99Millis,
                  String firstError) {
    }

    /** One load thread's step: the status of one operation (200 counts). */
    interface Step {
        int run(HttpConn c, int thread, long n) throws Exception;
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        for (String op : ops) {
            if (!OPS.contains(op)) {
                spec.commandLine().getErr().println("hayloft bench directory: unknown op '" + op + "': use " + OPS);
                return 2;
            }
        }
        Path parent = dir != null ? Files.createDirectories(dir) : Path.of(System.getProperty("java.io.tmpdir"));
        Map<Integer, Map<String, Result>> all = new LinkedHashMap<>();
        boolean failed = false;
        for (int n : replicas) {
            out.printf("%d replica(s): starting %d directory and %d store processes...%n", n, n, stores);
            out.flush();
            try (DirectoryProcesses p = DirectoryProcesses.start(n, stores, parent, dir != null)) {
                Map<String, Result> results = new LinkedHashMap<>();
                for (String op : ops) {
                    Result r = measure(p, op);
                    results.put(op, r);
                    out.printf(Locale.ROOT, "  %-14s %9.0f ops/s  p50 %7.2f ms  p99 %7.2f ms  (%d ops, %d errors%s)%n", op, r.opsPerSec(),
                            r.p50Millis(), r.p99Millis(), r.ops(), r.errors(), r.firstError() == null ? "" : "; first: " + r.firstError());
                    out.flush();
                    failed |= r.ops() == 0;
                }
                all.put(n, results);
            } catch (RuntimeException e) {
                spec.commandLine().getErr().println(n + " replica(s) failed: " + e.getMessage());
                failed = true;
            }
        }
        out.println();
        out.print(table(all));
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("threads", threads);
        json.put("durationSeconds", duration);
        json.put("warmupSeconds", warmup);
        json.put("stores", stores);
        json.put("simulatedStores", simulated);
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

    /** The side-by-side table: per op, ops/s and latency for each replica count, and each count's ratio to the first. */
    static String table(Map<Integer, Map<String, Result>> all) {
        StringBuilder b = new StringBuilder();
        List<Integer> ns = new ArrayList<>(all.keySet());
        b.append(String.format(Locale.ROOT, "%-14s", "op"));
        for (int n : ns) {
            b.append(String.format(Locale.ROOT, " | %2d repl.: %9s %8s %8s", n, "ops/s", "p50 ms", "p99 ms"));
        }
        for (int i = 1; i < ns.size(); i++) {
            b.append(String.format(Locale.ROOT, " | %d/%d", ns.get(i), ns.get(0)));
        }
        b.append('\n');
        List<String> opNames = new ArrayList<>();
        all.values().forEach(m -> m.keySet().forEach(o -> {
            if (!opNames.contains(o)) {
                opNames.add(o);
            }
        }));
        for (String op : opNames) {
            b.append(String.format(Locale.ROOT, "%-14s", op));
            for (int n : ns) {
                Result r = all.get(n).get(op);
                b.append(r == null ? String.format(Locale.ROOT, " | %10s %9s %8s %8s", "", "-", "-", "-")
                        : String.format(Locale.ROOT, " | %10s %9.0f %8.2f %8.2f", "", r.opsPerSec(), r.p50Millis(), r.p99Millis()));
            }
            Result first = all.get(ns.get(0)).get(op);
            for (int i = 1; i < ns.size(); i++) {
                Result r = all.get(ns.get(i)).get(op);
                b.append(first == null || r == null || first.opsPerSec() == 0 ? " |  -"
                        : String.format(Locale.ROOT, " | %.2f", r.opsPerSec() / first.opsPerSec()));
            }
            b.append('\n');
        }
        return b.toString();
    }

    private Result measure(DirectoryProcesses p, String op) throws Exception {
        String leader = p.awaitLeader(java.time.Duration.ofSeconds(30));
        Step step = switch (op) {
            case "lease" -> {
                p.post(leader, "/v1/leases", Map.of("keys", 1)); // a writable volume made first, outside the timing
                yield lease();
            }
            case "volume-create" -> (c, t, n) -> send(c, "POST", "/v1/volumes", "{\"count\":1}");
            case "read-only" -> readOnly(p, leader);
            case "stripe-map" -> stripeMap(p, leader);
            case "heartbeat" -> heartbeat();
            default -> throw new IllegalArgumentException(op);
        };
        return run(op, leader, step, op.equals("read-only") ? 0 : warmup); // each volume is sealed once: none spent warming up
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

    private Step heartbeat() throws Exception {
        List<byte[]> bodies = new ArrayList<>();
        for (int i = 0; i < simulated; i++) {
            bodies.add(JSON.writeValueAsBytes(new Wire.Heartbeat("sim-" + i, "127.0.0.2:" + (20000 + i), "sim-rack-" + (i % 8),
                    1L << 40, 1L << 39, List.of())));
        }
        return (c, t, n) -> {
            byte[] b = bodies.get((int) ((t + n * threads) % bodies.size()));
            return c.send("POST", "/v1/heartbeat", b, b.length);
        };
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

    /** Runs {@code step} on every thread for the warm-up, then measures it for the duration. */
    private Result run(String op, String leader, Step step, double warmup) throws InterruptedException {
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
        return new Result(op, ops, errs, secs, ops / secs, h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(50) / 1e6,
                h.getTotalCount() == 0 ? 0 : h.getValueAtPercentile(99) / 1e6, firstError.get());
    }
}
