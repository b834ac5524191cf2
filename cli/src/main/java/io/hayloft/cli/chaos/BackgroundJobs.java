package io.hayloft.cli.chaos;

import io.hayloft.cli.chaos.History.Kind;
import io.hayloft.cli.chaos.History.Outcome;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.client.Futures;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.raid.BlockFixer;
import io.hayloft.raid.DrainJob;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.ReclaimJob;
import io.hayloft.raid.Scrubber;
import io.hayloft.raid.ThreadPoolRunner;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The background jobs of a concurrent schedule, each on its own thread with its own random
 * generator, paced by short random pauses, until {@link #stop}: seals of writable volumes holding
 * photos, encodes of read-only volumes (codec and block size drawn from {@code --codecs}), reclaims
 * of coded volumes, store compactions, drains of a store followed by its restore, block repairs
 * ({@link BlockFixer}) and scrubs ({@link Scrubber}, whose findings go to the repairs). Raid jobs run
 * in the schedule's {@link RaidProcess}, so a simulated raid-node crash kills them. Every job goes
 * into the history; one that fails while no fault is in effect ({@link FaultWindows}) is a violation.
 *
 * <p>Thread-safe: one thread per job kind; {@link #stop} from any thread.
 */
final class BackgroundJobs {
    /** Job kinds, with the pause between two jobs of a kind (min and max ms). */
    enum Job {
        SEAL(800, 2500), ENCODE(100, 800), RECLAIM(400, 2000), COMPACT(300, 1500), DRAIN(3000, 8000), FIX(500, 1500),
        SCRUB(800, 2500);

        final int minPause;
        final int maxPause;

        Job(int minPause, int maxPause) {
            this.minPause = minPause;
            this.maxPause = maxPause;
        }

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final ConcurrentChaosRun run;
    private final List<Thread> threads = new ArrayList<>();
    private final ConcurrentLinkedQueue<Scrubber.Finding> findings = new ConcurrentLinkedQueue<>();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();
    private volatile boolean stopping;
    /** Counted down by {@link #stop}: ends the pauses between jobs (a job in flight is never interrupted). */
    private final CountDownLatch stop = new CountDownLatch(1);

    BackgroundJobs(ConcurrentChaosRun run) {
        this.run = run;
    }

    void start() {
        int n = run.options().clients();
        for (Job job : Job.values()) {
            Random rnd = ConcurrentChaosRun.random(run.seed(), n + job.ordinal());
            Thread t = new Thread(() -> loop(job, rnd), "chaos-" + job.label());
            t.setDaemon(true);
            threads.add(t);
            t.start();
        }
    }

    /** Asks every job thread to end after its current job, and waits for them. */
    void stop() throws InterruptedException {
        stopping = true;
        stop.countDown();
        for (Thread t : threads) {
            t.join();
        }
    }

    private void loop(Job job, Random rnd) {
        try (ThreadPoolRunner runner = new ThreadPoolRunner(2)) {
            while (!stopping && !run.aborted()) {
                try {
                    // pacing between jobs, ended early by stop()
                    stop.await(job.minPause + rnd.nextInt(job.maxPause - job.minPause), TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    return;
                }
                if (!stopping) {
                    once(job, rnd, runner);
                }
            }
        }
    }

    /** Runs one job of kind {@code job} and records it. */
    void once(Job job, Random rnd, ThreadPoolRunner runner) {
        long invoke = System.nanoTime();
        String[] what = {job.label()};
        try {
            String done = switch (job) {
                case SEAL -> seal(rnd, what);
                case ENCODE -> encode(rnd, runner, what);
                case RECLAIM -> reclaim(rnd, runner, what);
                case COMPACT -> compact(rnd, what);
                case DRAIN -> drain(rnd, runner, what);
                case FIX -> fix(runner, what);
                case SCRUB -> scrub(runner);
            };
            run.history().record("bg-" + job.label(), Kind.JOB, job.label(), List.of(), invoke,
                    done == null ? Outcome.SKIPPED : Outcome.OK, done == null ? what[0] : what[0] + ": " + done);
        } catch (Throwable t) {
            if (ChaosRun.crashed(t)) {
                run.history().record("bg-" + job.label(), Kind.JOB, job.label(), List.of(), invoke, Outcome.CRASHED, what[0]);
                return;
            }
            if (t instanceof Error e && !(t instanceof AssertionError)) {
                throw e;
            }
            History.Event e = run.history().record("bg-" + job.label(), Kind.JOB, job.label(), List.of(), invoke, Outcome.FAILED,
                    what[0] + ": " + ConcurrentChaosRun.brief(t));
            run.jobFailed(e, t);
        }
    }

    private String seal(Random rnd, String[] what) {
        List<Integer> writable = run.volumes(VolumeState.WRITABLE, true);
        int pick = rnd.nextInt(1 << 20);
        if (writable.isEmpty()) {
            return null;
        }
        int v = writable.get(pick % writable.size());
        what[0] = "seal volume " + v;
        Futures.await(run.client().directory().markReadOnly(v, "chaos seal"));
        return "read-only";
    }

    private String encode(Random rnd, ThreadPoolRunner runner, String[] what) throws Exception {
        List<Integer> readOnly = run.volumes(VolumeState.READ_ONLY, false);
        int pick = rnd.nextInt(1 << 20);
        String codec = run.options().codecs().get(rnd.nextInt(run.options().codecs().size()));
        long blockSize = ChaosRun.BLOCK_SIZES[rnd.nextInt(ChaosRun.BLOCK_SIZES.length)];
        if (readOnly.isEmpty()) {
            return null;
        }
        int v = readOnly.get(pick % readOnly.size());
        return encode(v, codec, blockSize, runner, what);
    }

    /** Encodes volume {@code v} in the raid process; counts the codec when it commits. */
    String encode(int v, String codec, long blockSize, ThreadPoolRunner runner, String[] what) throws Exception {
        what[0] = "encode volume " + v + " " + codec + "(" + run.options().k() + "," + run.options().r() + ") block " + blockSize;
        RaidNode node = run.raid().node(run.raidConfig(codec, blockSize), runner);
        run.raid().run(() -> node.encode(v));
        run.coded(codec);
        return "coded";
    }

    private String reclaim(Random rnd, ThreadPoolRunner runner, String[] what) throws Exception {
        List<Integer> coded = run.volumes(VolumeState.ERASURE_CODED, false);
        int pick = rnd.nextInt(1 << 20);
        double threshold = rnd.nextInt(3) == 0 ? 0.2 : 0.0;
        if (coded.isEmpty()) {
            return null;
        }
        return reclaim(coded.get(pick % coded.size()), threshold, runner, what);
    }

    String reclaim(int v, double threshold, ThreadPoolRunner runner, String[] what) throws Exception {
        what[0] = "reclaim volume " + v + " over " + threshold;
        RaidNode node = run.raid().node(run.raidConfig("rs", ChaosRun.BLOCK_SIZES[0]), runner);
        ReclaimJob.Result r = run.raid().run(() -> node.reclaim(v, threshold));
        return r.reclaimed() ? "reclaimed " + r.before().deadNeedles() + " dead needles as job " + r.newJob()
                : "left alone (" + r.before().deadBytes() + " dead bytes)";
    }

    private String compact(Random rnd, String[] what) throws Exception {
        EmbeddedCluster cluster = run.cluster();
        int i = rnd.nextInt(cluster.storeCount());
        int pick = rnd.nextInt(1 << 20);
        var server = cluster.store(i);
        List<Long> ids = server == null ? List.of() : server.store().volumes().stream().map(v -> v.status().id()).sorted().toList();
        if (ids.isEmpty()) {
            return null;
        }
        long v = ids.get(pick % ids.size());
        what[0] = "compact volume " + v + " on store " + i;
        HttpRequest req = HttpRequest.newBuilder(HttpTransport.create().uri(cluster.storeAddress(i),
                        "/admin/volumes/" + v + "/compact"))
                .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.noBody()).build();
        HttpResponse<String> resp = http.send(req, HttpResponse.BodyHandlers.ofString());
        if (resp.statusCode() / 100 == 2) {
            return resp.body();
        }
        if (resp.statusCode() == 404 || resp.body().contains("COMPACTION_RUNNING")) {
            what[0] += " -> " + resp.statusCode() + " " + resp.body();
            return null; // the volume went away (coded, dropped, moved) or is compacting already
        }
        throw new IOException("compaction answered " + resp.statusCode() + " " + resp.body());
    }

    private String drain(Random rnd, ThreadPoolRunner runner, String[] what) throws Exception {
        int i = rnd.nextInt(run.cluster().storeCount());
        String store = EmbeddedCluster.storeId(i);
        what[0] = "drain " + store;
        RaidNode node = run.raid().node(run.raidConfig("rs", ChaosRun.BLOCK_SIZES[0]), runner);
        try {
            // A drain is resumable and says "run it again" when an item could not move yet (a volume being
            // encoded meanwhile, say): the operator runs it again, three times in all.
            for (int attempt = 1; ; attempt++) {
                try {
                    DrainJob.Result r = run.raid().run(() -> node.drain(store, DrainJob.Listener.NONE));
                    return r.replicasMoved() + " replicas moved, " + r.blocksCopied() + " blocks copied, " + r.blocksRebuilt()
                            + " rebuilt, " + r.indexesMoved() + " indexes moved" + (r.storeWasDown() ? " (store was down)" : "")
                            + (attempt > 1 ? " at attempt " + attempt : "") + "; restored";
                } catch (IOException e) {
                    if (attempt == 3) {
                        throw e;
                    }
                    what[0] = "drain " + store + " (attempt " + attempt + " failed: " + ConcurrentChaosRun.brief(e) + ")";
                }
            }
        } finally {
            node.cluster().restoreStore(store); // back in service, empty, whatever the drain did
        }
    }

    private String fix(ThreadPoolRunner runner, String[] what) throws Exception {
        RaidNode node = run.raid().node(run.raidConfig("rs", ChaosRun.BLOCK_SIZES[0]), runner);
        List<BlockFixer.Damage> damage = damage(node);
        BlockFixer fixer = new BlockFixer(node.cluster(), node.config());
        fixer.checkpoints(run.raid().checkpoints());
        BlockFixer.Report r = run.raid().run(() -> {
            BlockFixer.Report scrubbed = damage.isEmpty() ? null : fixer.repairAll(damage);
            BlockFixer.Report missing = fixer.repairAll();
            if (scrubbed != null && !scrubbed.failures().isEmpty()) {
                throw new IOException("repair of scrub findings failed: " + scrubbed.failures());
            }
            return missing;
        });
        what[0] = "fix" + (damage.isEmpty() ? "" : " (" + damage.size() + " stripes the scrubber found)");
        if (!r.failures().isEmpty()) {
            throw new IOException(r.blocks() + " blocks rebuilt, failures " + r.failures());
        }
        return r.blocks() == 0 && damage.isEmpty() ? null : r.blocks() + " blocks rebuilt in " + r.stripes() + " stripes";
    }

    /** The scrubber's findings whose block the stripe map still names (a repair since made the others stale). */
    private List<BlockFixer.Damage> damage(RaidNode node) throws Exception {
        List<Scrubber.Finding> found = new ArrayList<>();
        for (Scrubber.Finding f; (f = findings.poll()) != null; ) {
            found.add(f);
        }
        Map<Integer, StripeMap> maps = new TreeMap<>();
        for (StripeMap m : node.cluster().stripeMaps()) {
            if (StripeMap.COMMITTED.equals(m.status())) {
                maps.put(m.volume(), m);
            }
        }
        List<Scrubber.Finding> current = new ArrayList<>();
        for (Scrubber.Finding f : found) {
            StripeMap m = maps.get(f.volume());
            if (m == null || f.stripe() >= m.stripes().size()) {
                continue;
            }
            StripeMap.Block b = m.stripes().get(f.stripe()).blocks().get(f.unit());
            if (b.name().equals(f.name()) && b.store().equals(f.store())) {
                current.add(f);
            }
        }
        return ChaosRun.damage(current);
    }

    private String scrub(ThreadPoolRunner runner) throws Exception {
        RaidNode node = new RaidNode(run.raidConfig("rs", ChaosRun.BLOCK_SIZES[0]), runner);
        List<Scrubber.Finding> found = new Scrubber(node.cluster(), 1 << 20).cycle(0);
        findings.addAll(found);
        Set<String> blocks = new TreeSet<>();
        found.forEach(f -> blocks.add("v" + f.volume() + "/s" + f.stripe() + "/u" + f.unit()));
        return found.isEmpty() ? "nothing corrupt" : found.size() + " corrupt blocks " + blocks;
    }

    /** Volumes in the state {@code state}, for {@link ConcurrentChaosRun#volumes}. */
    static List<Integer> ids(List<VolumeInfo> volumes, VolumeState state, Set<Integer> used) {
        List<Integer> out = new ArrayList<>();
        for (VolumeInfo v : volumes) {
            int id = v.id();
            if (v.state() == state && (used == null || used.contains(id))
                    && (v.reason() == null || !v.reason().startsWith("being created"))
                    && !(state == VolumeState.READ_ONLY && v.replicas().isEmpty())) { // made on no store: nothing to encode
                out.add(id);
            }
        }
        out.sort(null);
        return out;
    }
}
