package io.hayloft.raid;

import io.hayloft.format.errors.RaidErrors;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.serverkit.http.ClusterStance;
import io.hayloft.serverkit.http.HttpLimits;
import io.hayloft.serverkit.http.HttpServer;
import io.hayloft.serverkit.http.Router;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The raid-node daemon ({@code hayloft raid serve}, docs/raid.md "Daemon"). At start it runs
 * {@link RaidNode#recover()}, then a policy pass every {@code policyIntervalMillis}: reload the
 * policy file if it changed, encode the backlog, rebuild damaged blocks (a store's blocks once it
 * has been seen down past the grace period; missing and corrupt blocks at once; blocks the
 * {@link Scrubber} found corrupt), reclaim through the {@link ReclaimHook}, and sweep orphan blocks.
 * A second thread runs scrub cycles at the policy's rate. The HTTP API (docs/raid-api.md) serves
 * {@code /health}, {@code /status}, {@code /metrics} and {@code POST /admin/run|scrub}.
 *
 * <p>Thread-safe. Passes run one at a time on one scheduler thread (operator passes queue behind
 * the scheduled one), so an orphan sweep never races a job of this raid-node. Run one raid-node
 * per cluster: a sweep would delete the blocks of a repair another process has in flight.
 */
public final class RaidServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RaidServer.class);
    private static final long REPAIR_WINDOW_NANOS = TimeUnit.SECONDS.toNanos(60);

    /** Reclaims volumes that lost too much to deletes; {@link #DUE} unless a test sets another. */
    @FunctionalInterface
    public interface ReclaimHook {
        ReclaimHook NONE = (node, policy) -> 0;
        /** Every coded volume over the policy's {@code reclaimThreshold} ({@link RaidNode#reclaimDue()}). */
        ReclaimHook DUE = (node, policy) -> (int) node.reclaimDue().stream().filter(ReclaimJob.Result::reclaimed).count();

        /** @return volumes reclaimed */
        int reclaim(RaidNode node, RaidPolicy policy) throws Exception;
    }

    /** A running job as {@code /status} shows it. */
    static final class Job {
        final String kind;
        final int volume;
        volatile String step = "starting";
        final AtomicLong bytesDone = new AtomicLong();
        volatile long bytesTotal;
        final long startedMillis = System.currentTimeMillis();

        Job(String kind, int volume) {
            this.kind = kind;
            this.volume = volume;
        }

        Map<String, Object> describe() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("kind", kind);
            if (volume >= 0) {
                m.put("volume", volume);
            }
            m.put("step", step);
            m.put("bytesDone", bytesDone.get());
            m.put("bytesTotal", bytesTotal);
            m.put("startedMillis", startedMillis);
            return m;
        }
    }

    private final RaidServerConfig config;
    private final Path policyFile;
    private final Checkpoints checkpoints;
    private final Cluster cluster;
    private final Scrubber scrubber;
    private final RaidMetrics metrics;
    private final ScheduledExecutorService loop;
    private final ScheduledExecutorService scrubLoop;
    private final ExecutorService httpExecutor;
    private final HttpServer http;
    private final RaidHttp api;
    private final Map<String, Job> jobs = new ConcurrentHashMap<>();
    /** Corrupt blocks the scrubber found and no pass has repaired yet, by store/name (a block found twice counts once). */
    private final Map<String, Scrubber.Finding> corrupt = new ConcurrentHashMap<>();
    private final Map<String, Long> downSince = new ConcurrentHashMap<>();
    private final RepairWindow window = new RepairWindow(REPAIR_WINDOW_NANOS);
    private final AtomicLong passes = new AtomicLong();
    private final RaidLease lease;
    private volatile ReclaimHook reclaimHook = ReclaimHook.DUE;
    private volatile RaidPolicy policy;
    private volatile int policyVersion;
    private volatile String policyError;
    private byte[] policyBytes; // loop thread only
    private volatile RaidNode node;
    private volatile BlockFixer fixer;
    private volatile Map<String, Object> snapshot = Map.of();
    private ThreadPoolRunner runner; // loop thread only
    private volatile boolean closed;

    private RaidServer(RaidServerConfig config, Checkpoints checkpoints) throws Exception {
        this.config = config.validate();
        this.checkpoints = Objects.requireNonNull(checkpoints, "checkpoints");
        this.policyFile = config.policyFile == null ? null : Path.of(config.policyFile);
        this.cluster = config.base().cluster();
        this.scrubber = new Scrubber(cluster, config.transferBytes);
        this.metrics = new RaidMetrics(scrubber::bytesRead, () -> policyVersion);
        this.metrics.repairGauges(() -> fixer);
        if (policyFile == null) {
            usePolicy(new RaidPolicy().validate());
        } else {
            policyBytes = Files.readAllBytes(policyFile);
            try {
                usePolicy(RaidPolicy.read(policyFile));
            } catch (RaidPolicy.PolicyException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
        }
        // Never run half-secured: an admin token the directory lacks (or the reverse) stops the start
        // here, after the configuration and the policy file were checked.
        ClusterStance.require("raid-node", config.directory, null, false, "adminToken",
                config.adminToken != null && !config.adminToken.isEmpty(), ClusterStance.DEFAULT_PATIENCE,
                p -> config.base().transport().getPatiently(config.directories(), "/health", p, ClusterStance.PERIOD));
        this.loop = Executors.newSingleThreadScheduledExecutor(daemon("raid-policy"));
        this.scrubLoop = Executors.newSingleThreadScheduledExecutor(daemon("raid-scrub"));
        this.httpExecutor = Executors.newFixedThreadPool(8, daemon("raid-http"));
        try {
            this.lease = RaidLease.acquire(cluster, config.nodeId == null ? RaidLease.daemonHolder() : config.nodeId,
                    config.leaseTtlMillis);
        } catch (RaidLease.HeldException e) {
            shutDownExecutors();
            throw new IllegalStateException("another raid-node works on this cluster: " + e.getMessage(), e);
        } catch (Exception e) {
            shutDownExecutors();
            throw e;
        }
        try {
            node.recover();
            this.api = new RaidHttp(this, config.adminToken);
            this.http = HttpServer.start(config.host, config.port, HttpLimits.defaults(), api, httpExecutor, 1,
                    config.tls().serverContext());
            this.http.bindMetrics(metrics.endpoint.registry());
        } catch (Exception e) {
            shutDownExecutors();
            lease.close();
            throw e;
        }
        loop.schedule(this::scheduledPass, 0, TimeUnit.MILLISECONDS);
        scrubLoop.schedule(this::scheduledScrub, 0, TimeUnit.MILLISECONDS);
        LOG.info("raid-node serving on {}:{} for directory {} (policy {})", config.host, http.port(), config.directory,
                policyFile == null ? "defaults" : policyFile);
    }

    /**
     * Recovers interrupted work, starts serving and schedules the first pass at once.
     *
     * @param checkpoints told of every encode and repair step (crash tests stop the process there)
     * @throws IllegalArgumentException when the configuration or the policy file is invalid
     */
    public static RaidServer start(RaidServerConfig config, Checkpoints checkpoints) throws Exception {
        return new RaidServer(config, checkpoints);
    }

    private static ThreadFactory daemon(String name) {
        AtomicLong n = new AtomicLong();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    public int port() {
        return http.port();
    }

    /** The routes of the raid-node's HTTP API (docs/raid-api.md). */
    public Router router() {
        return api.router();
    }

    public String address() {
        return config.host + ":" + http.port();
    }

    /** Sets what reclaims volumes in each pass (default: nothing). */
    public void reclaimHook(ReclaimHook hook) {
        this.reclaimHook = Objects.requireNonNull(hook, "hook");
    }

    RaidMetrics metrics() {
        return metrics;
    }

    // ------------------------------------------------------------------ passes

    /** Queues a pass behind any running one; the future yields its summary. */
    Future<Map<String, Object>> runNow() {
        if (closed) {
            throw RaidErrors.STOPPING.exception("the raid-node is shutting down");
        }
        return loop.submit(this::pass);
    }

    /** Queues a scrub cycle behind any running one; the future yields its findings. */
    Future<Map<String, Object>> scrubNow() {
        if (closed) {
            throw RaidErrors.STOPPING.exception("the raid-node is shutting down");
        }
        return scrubLoop.submit(() -> {
            List<Scrubber.Finding> found = scrub();
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("corrupt", found.stream().map(f -> Map.of("volume", f.volume(), "stripe", f.stripe(), "unit", f.unit(),
                    "store", f.store(), "block", f.name(), "why", f.why())).toList());
            m.put("blocksChecked", scrubber.blocksChecked());
            return m;
        });
    }

    private void scheduledPass() {
        try {
            pass();
        } catch (Throwable t) {
            LOG.error("policy pass failed; the next one runs as scheduled", t);
        } finally {
            if (!closed) {
                loop.schedule(this::scheduledPass, policy.policyIntervalMillis, TimeUnit.MILLISECONDS);
            }
        }
    }

    private void scheduledScrub() {
        try {
            if (policy.scrubBytesPerSecond > 0) {
                scrub();
            }
        } catch (Throwable t) {
            LOG.error("scrub cycle failed; the next one runs as scheduled", t);
        } finally {
            if (!closed) {
                scrubLoop.schedule(this::scheduledScrub, policy.policyIntervalMillis, TimeUnit.MILLISECONDS);
            }
        }
    }

    private List<Scrubber.Finding> scrub() throws IOException {
        List<Scrubber.Finding> found = scrubber.cycle(policy.scrubBytesPerSecond);
        for (Scrubber.Finding f : found) {
            if (corrupt.putIfAbsent(f.store() + "/" + f.name(), f) == null) {
                metrics.scrubCorrupt.increment();
            }
        }
        return found;
    }

    /** One pass: policy, encode, repair, reclaim, sweep. Runs on the loop thread only. */
    Map<String, Object> pass() throws Exception {
        long n = passes.incrementAndGet();
        metrics.passes.increment();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("pass", n);
        try {
            lease.check();
            reloadPolicy();
            RaidPolicy p = policy;
            out.put("policyVersion", policyVersion);
            out.put("policyError", policyError);
            // no job of this daemon runs between passes: a plan or pending reclaim still recorded is
            // one whose rollback could not reach a store; without this the volume stays ENCODING
            out.put("unfinishedRolledBack", node.rollBackUnfinished());
            out.put("encoded", p.encode ? encodeBacklog() : List.of());
            out.putAll(repair(p));
            int reclaimed = reclaimHook.reclaim(node, p);
            metrics.reclaimed.increment(reclaimed);
            out.put("reclaimed", reclaimed);
            lease.check();
            out.put("orphansDeleted", node.sweepOrphans(cluster.stores()));
            snapshot = survey();
            return out;
        } catch (Exception e) {
            metrics.passFailures.increment();
            throw e;
        }
    }

    private void reloadPolicy() {
        if (policyFile == null) {
            return;
        }
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(policyFile);
        } catch (IOException e) {
            bytes = null;
        }
        if (Arrays.equals(bytes, policyBytes)) {
            return; // unchanged (or still unreadable: reported once)
        }
        policyBytes = bytes;
        try {
            usePolicy(RaidPolicy.read(policyFile));
            policyError = null;
            LOG.info("policy file {} reloaded: version {} {}", policyFile, policyVersion, policy.describe());
        } catch (RaidPolicy.PolicyException e) {
            policyError = e.getMessage();
            metrics.policyErrors.increment();
            LOG.error("{}; keeping policy version {}", e.getMessage(), policyVersion);
        }
    }

    private void usePolicy(RaidPolicy p) {
        RaidConfig c = p.apply(config.base());
        if (runner == null || policy == null || policy.workers != p.workers) {
            if (runner != null) {
                runner.close();
            }
            runner = new ThreadPoolRunner(p.workers);
        }
        RaidNode n = new RaidNode(c, runner);
        n.checkpoints(checkpoints);
        BlockFixer f = new BlockFixer(n.cluster(), c);
        f.onReceived(metrics.repairBytesReceived::increment);
        AtomicLong lastWritten = new AtomicLong();
        f.checkpoints(step -> {
            checkpoints.reached(step);
            if (step.equals("rebuilt")) {
                long w = f.bytesWritten();
                long delta = w - lastWritten.getAndSet(w);
                window.add(delta);
                Job j = jobs.get("repair");
                if (j != null) {
                    j.bytesDone.addAndGet(delta);
                    j.step = "rebuilt";
                }
            }
        });
        node = n;
        fixer = f;
        policy = p;
        policyVersion++;
    }

    private List<Integer> encodeBacklog() throws Exception {
        List<Callable<Integer>> tasks = new ArrayList<>();
        for (int volume : node.backlog()) {
            tasks.add(() -> encodeOne(volume));
        }
        List<Integer> done = new ArrayList<>();
        for (Integer v : runner.runAll(tasks)) {
            if (v != null) {
                done.add(v);
            }
        }
        return done;
    }

    /** @return the volume when encoded, null when it failed (rolled back, logged, counted) */
    private Integer encodeOne(int volume) {
        Job job = new Job("encode", volume);
        jobs.put("encode-" + volume, job);
        RaidNode n = node;
        long[] shape = new long[2]; // volume bytes, data bytes per stripe
        try {
            EncodeJob.Result r = n.encode(volume, step -> {
                job.step = step;
                if (step.equals("begun")) {
                    try {
                        StripeMap m = n.cluster().stripeMap(volume);
                        shape[0] = m.volumeBytes();
                        shape[1] = m.k() * m.blockSize();
                        job.bytesTotal = m.volumeBytes();
                    } catch (IOException e) {
                        LOG.debug("volume {}: no plan for progress ({})", volume, e.toString());
                    }
                } else if (step.startsWith("stripe-")) {
                    long s = Long.parseLong(step.substring("stripe-".length()));
                    job.bytesDone.set(Math.min(shape[0], (s + 1) * shape[1]));
                }
            });
            metrics.encodeOk.increment();
            metrics.encodeBytes.increment(r.volumeBytes());
            return volume;
        } catch (Exception e) {
            metrics.encodeFailed.increment();
            LOG.warn("volume {}: encode failed: {}", volume, e.toString());
            return null;
        } finally {
            jobs.remove("encode-" + volume);
        }
    }

    private Map<String, Object> repair(RaidPolicy p) throws Exception {
        Map<String, Cluster.StoreRef> stores = cluster.stores();
        long now = System.currentTimeMillis();
        for (Cluster.StoreRef s : stores.values()) {
            if (s.up()) {
                downSince.remove(s.id());
            } else {
                downSince.putIfAbsent(s.id(), now);
            }
        }
        Map<Integer, StripeMap> maps = new HashMap<>();
        for (StripeMap m : cluster.stripeMaps()) {
            maps.put(m.volume(), m);
        }
        Map<String, TreeSet<Integer>> due = new LinkedHashMap<>();
        int deferred = 0;
        for (BlockFixer.Damage d : fixer.scan()) {
            StripeMap m = maps.get(d.volume());
            for (int u : d.units()) {
                StripeMap.Block b = m.stripes().get(d.stripe()).blocks().get(u);
                Long since = downSince.get(b.store());
                if (since != null && now - since < p.repairGraceMillis) {
                    deferred++;
                } else {
                    due.computeIfAbsent(d.volume() + "/" + d.stripe(), k -> new TreeSet<>()).add(u);
                }
            }
        }
        int stale = 0;
        for (String key : List.copyOf(corrupt.keySet())) {
            Scrubber.Finding f = corrupt.remove(key);
            StripeMap m = maps.get(f.volume());
            StripeMap.Block b = m == null || f.stripe() >= m.stripes().size() ? null
                    : m.stripes().get(f.stripe()).blocks().get(f.unit());
            if (b != null && b.store().equals(f.store()) && b.name().equals(f.name())) {
                due.computeIfAbsent(f.volume() + "/" + f.stripe(), k -> new TreeSet<>()).add(f.unit());
            } else {
                stale++; // already replaced since the scrubber read it
            }
        }
        List<BlockFixer.Damage> work = new ArrayList<>();
        long bytes = 0;
        for (Map.Entry<String, TreeSet<Integer>> e : due.entrySet()) {
            String[] vs = e.getKey().split("/");
            int volume = Integer.parseInt(vs[0]);
            work.add(new BlockFixer.Damage(volume, Integer.parseInt(vs[1]),
                    e.getValue().stream().mapToInt(Integer::intValue).toArray(), "policy pass"));
            bytes += e.getValue().size() * maps.get(volume).blockSize();
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("repairDeferred", deferred);
        out.put("scrubFindingsStale", stale);
        if (work.isEmpty()) {
            out.put("repairedBlocks", 0);
            out.put("repairFailures", List.of());
            return out;
        }
        Job job = new Job("repair", -1);
        job.bytesTotal = bytes;
        jobs.put("repair", job);
        try {
            BlockFixer.Report r = fixer.repairAll(work);
            metrics.repairBlocks.increment(r.blocks());
            metrics.repairFailures.increment(r.failures().size());
            metrics.repairBytesRead.increment(r.bytesRead());
            metrics.repairBytesWritten.increment(r.bytesWritten());
            out.put("repairedBlocks", r.blocks());
            out.put("repairFailures", r.failures());
            return out;
        } finally {
            jobs.remove("repair");
        }
    }

    /** What {@code /status} shows of the cluster, as of the end of the last pass. */
    private Map<String, Object> survey() throws IOException {
        List<StripeMap> maps = cluster.stripeMaps();
        long planned = 0;
        long committed = 0;
        for (StripeMap m : maps) {
            if (StripeMap.PLANNED.equals(m.status())) {
                planned += m.stripes().size();
            } else {
                committed += m.stripes().size();
            }
        }
        List<BlockFixer.Damage> damage = fixer.scan();
        long missing = 0;
        long bad = 0;
        List<Map<String, Object>> damaged = new ArrayList<>();
        for (BlockFixer.Damage d : damage) {
            for (String part : d.why().split("; ")) {
                if (part.contains(": corrupt")) {
                    bad++;
                } else {
                    missing++;
                }
            }
            damaged.add(Map.of("volume", d.volume(), "stripe", d.stripe(), "units", d.units(), "why", d.why()));
        }
        List<Integer> backlog = node.backlog();
        metrics.backlog.set(backlog.size());
        metrics.stripesPlanned.set(planned);
        metrics.stripesDamaged.set(damage.size());
        metrics.stripesHealthy.set(committed - damage.size());
        metrics.blocksMissing.set(missing);
        metrics.blocksCorrupt.set(bad);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("surveyedMillis", System.currentTimeMillis());
        m.put("backlog", backlog);
        m.put("stripes", Map.of("planned", planned, "healthy", committed - damage.size(), "damaged", damage.size()));
        m.put("blocksMissing", missing);
        m.put("blocksCorrupt", bad);
        m.put("damaged", damaged);
        return m;
    }

    /** The body of {@code GET /status}. */
    Map<String, Object> status() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("passes", passes.get());
        m.put("lease", Map.of("holder", lease.holder(), "epoch", lease.epoch()));
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("version", policyVersion);
        p.put("file", policyFile == null ? null : policyFile.toString());
        p.put("lastError", policyError);
        p.put("reloadErrors", (long) metrics.policyErrors.count());
        p.put("current", policy.describe());
        m.put("policy", p);
        m.put("jobs", jobs.values().stream().map(Job::describe).toList());
        m.putAll(snapshot);
        double read = metrics.repairBytesRead.count();
        double written = metrics.repairBytesWritten.count();
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("blocksRebuilt", (long) metrics.repairBlocks.count());
        r.put("bytesRead", (long) read);
        r.put("bytesWritten", (long) written);
        r.put("bytesReadPerRepairedByte", written == 0 ? 0.0 : read / written);
        r.put("rateBytesPerSecond", window.rate());
        r.put("windowSeconds", TimeUnit.NANOSECONDS.toSeconds(REPAIR_WINDOW_NANOS));
        m.put("repair", r);
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("cycles", scrubber.cycles());
        s.put("cycleBytesDone", scrubber.cycleBytesDone());
        s.put("cycleBytesTotal", scrubber.cycleBytesTotal());
        s.put("bytesRead", scrubber.bytesRead());
        s.put("corruptFound", scrubber.corruptFound());
        s.put("rateBytesPerSecond", policy.scrubBytesPerSecond);
        m.put("scrub", s);
        return m;
    }

    long adminWaitMillis() {
        return config.adminWaitMillis;
    }

    // ------------------------------------------------------------------ shutdown

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        scrubber.stop();
        http.close();
        shutDownExecutors();
        lease.close();
    }

    private void shutDownExecutors() {
        for (ExecutorService e : new ExecutorService[] {loop, scrubLoop, httpExecutor}) {
            if (e != null) {
                e.shutdownNow();
            }
        }
        try {
            for (ExecutorService e : new ExecutorService[] {loop, scrubLoop}) {
                if (e != null && !e.awaitTermination(30, TimeUnit.SECONDS)) {
                    LOG.warn("raid-node thread did not stop within 30 s");
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (runner != null) {
            runner.close();
        }
    }
}
