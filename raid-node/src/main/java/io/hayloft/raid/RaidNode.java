package io.hayloft.raid;

import io.hayloft.cold.ColdReader;
import io.hayloft.format.directory.ReclaimPlan;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.format.wire.StripeMap;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The raid-node: picks volumes to encode (policy), runs encode jobs on a {@link JobRunner}, and on
 * start finishes what a crash interrupted ({@link #recover()}): planned stripe maps are rolled back
 * (their blocks deleted, the volume back to READ_ONLY), committed ones get their replicas dropped,
 * and blocks no stripe map names are deleted, so no orphan survives a restart. It also reclaims coded
 * volumes whose dead bytes pass a threshold ({@link ReclaimJob}); pending reclaims are rolled back by
 * {@link #recover()}.
 *
 * <p>Thread-safe: state lives in the directory and the stores; encode jobs of different volumes
 * may run concurrently.
 */
public final class RaidNode {

    private static final Logger LOG = LoggerFactory.getLogger(RaidNode.class);
    /** Names of blocks the raid-node writes: {@code v<volume>-<job>-...}. */
    static final Pattern OURS = Pattern.compile("v[0-9]+-[0-9a-f]{8}-.*");

    private final Cluster cluster;
    private final RaidConfig config;
    private final JobRunner runner;
    private volatile Checkpoints checkpoints = Checkpoints.NONE;
    /** Per volume, the job and delete counters of its last survey under the threshold (reclaimDue skips it until they change). */
    private final Map<Integer, String> surveyed = new ConcurrentHashMap<>();

    public RaidNode(RaidConfig config, JobRunner runner) {
        this.config = config.validate();
        this.cluster = config.cluster();
        this.runner = runner;
    }

    public Cluster cluster() {
        return cluster;
    }

    public RaidConfig config() {
        return config;
    }

    /** For crash tests: report protocol steps to {@code c}. */
    public void checkpoints(Checkpoints c) {
        this.checkpoints = c;
    }

    /** Encodes one volume now, whatever its age. */
    public EncodeJob.Result encode(int volume) throws IOException {
        return new EncodeJob(cluster, config, checkpoints, runner).encode(volume);
    }

    /**
     * Encodes one volume now, reporting its protocol steps to {@code progress}, then to this node's
     * checkpoints (the daemon's per-job progress and the CLI's progress bar use it).
     */
    public EncodeJob.Result encode(int volume, Checkpoints progress) throws IOException {
        Checkpoints mine = checkpoints;
        return new EncodeJob(cluster, config, step -> {
            progress.reached(step);
            mine.reached(step);
        }).encode(volume);
    }

    /**
     * Moves every replica, block and needle-index copy off {@code store}, then marks it DRAINED
     * ({@link DrainJob}); resumable. Hold the raid lease and run {@link #recover()} first.
     */
    public DrainJob.Result drain(String store, DrainJob.Listener listener) throws IOException {
        return new DrainJob(cluster, config, checkpoints).drain(store, listener);
    }

    /** READ_ONLY volumes older than the policy's minimum age, with a replica: what {@link #encodeBacklog()} would encode. */
    public List<Integer> backlog() throws IOException {
        long now = System.currentTimeMillis();
        List<Integer> out = new ArrayList<>();
        for (VolumeInfo v : cluster.volumes()) {
            // A volume made on no store (its creation failed on every one) holds nothing to encode.
            if (v.state().readOnly() && now - v.created() >= config.minAgeMillis && !v.replicas().isEmpty()
                    && (v.reason() == null || !v.reason().startsWith("being created"))) {
                out.add(v.id());
            }
        }
        return out;
    }

    /** Encodes the whole backlog on the runner; one task per volume. */
    public List<EncodeJob.Result> encodeBacklog() throws Exception {
        List<Callable<EncodeJob.Result>> tasks = new ArrayList<>();
        for (int id : backlog()) {
            tasks.add(() -> encode(id));
        }
        return runner.runAll(tasks);
    }

    // ------------------------------------------------------------------ reclaim

    /** Rebuilds coded volume {@code volume}'s needle index from its stripes ({@link ReclaimJob#reindex}). */
    public ReclaimJob.Result reindex(int volume) throws IOException {
        return new ReclaimJob(cluster, config, checkpoints).reindex(volume);
    }

    /** Reclaims {@code volume} if more than {@link RaidConfig#reclaimThreshold} of its bytes are dead. */
    public ReclaimJob.Result reclaim(int volume) throws IOException {
        return reclaim(volume, config.reclaimThreshold);
    }

    /** Reclaims {@code volume} if more than {@code threshold} (in [0, 1)) of its bytes are dead. */
    public ReclaimJob.Result reclaim(int volume, double threshold) throws IOException {
        return new ReclaimJob(cluster, config, checkpoints).reclaim(volume, threshold);
    }

    /**
     * Surveys every erasure-coded volume whose delete counters or job changed since this raid-node
     * last looked (all of them the first time), and reclaims those over the threshold, one task per
     * volume on the runner. For the policy loop.
     */
    public List<ReclaimJob.Result> reclaimDue() throws Exception {
        Map<Integer, String> jobs = new HashMap<>();
        for (StripeMap m : cluster.stripeMaps()) {
            if (StripeMap.COMMITTED.equals(m.status())) {
                jobs.put(m.volume(), m.job());
            }
        }
        List<Callable<ReclaimJob.Result>> tasks = new ArrayList<>();
        for (VolumeInfo v : cluster.volumes()) {
            int id = v.id();
            String job = jobs.get(id);
            if (job == null || v.state() != VolumeState.ERASURE_CODED) {
                continue;
            }
            String seen = job + "/" + v.deletedPhotos() + "/" + v.deletedNeedles();
            if (seen.equals(surveyed.get(id))) {
                continue;
            }
            tasks.add(() -> {
                ReclaimJob.Result r = reclaim(id);
                if (r.reclaimed()) {
                    surveyed.remove(id);
                } else {
                    surveyed.put(id, seen);
                }
                return r;
            });
        }
        return runner.runAll(tasks);
    }

    /**
     * Dead and live bytes of every erasure-coded volume (for {@code hayloft raid status}); a volume
     * whose index cannot be read is left out, with a warning.
     */
    public List<ReclaimJob.Survey> surveys() throws IOException {
        List<ReclaimJob.Survey> out = new ArrayList<>();
        try (ColdReader cold = new ColdReader(cluster)) {
            for (StripeMap m : cluster.stripeMaps()) {
                if (StripeMap.COMMITTED.equals(m.status())) {
                    try {
                        out.add(ReclaimJob.survey(cluster, cold, m.volume()));
                    } catch (IOException e) {
                        LOG.warn("volume {}: cannot survey dead bytes ({})", m.volume(), e.toString());
                    }
                }
            }
        }
        return out;
    }

    /**
     * Deletes every block of a pending reclaim, then drops the plan in the directory. If a store
     * cannot be reached the plan stays recorded, so a later {@link #recover()} deletes the rest.
     */
    static void rollbackReclaim(Cluster cluster, StripeMap plan, Map<String, Cluster.StoreRef> stores) throws IOException {
        if (deleteAll(cluster, plan, stores)) {
            cluster.abortReclaim(plan.volume(), plan.job());
        }
    }

    // ------------------------------------------------------------------ recovery

    /**
     * Rolls back every encode plan still recorded as planned and every pending reclaim: what a failed
     * job left when its rollback could not reach a store (its blocks there stay named by the plan, so
     * this deletes them once the store is back). Call only when no job of this raid-node is running
     * (the daemon, at the start of each pass, under the raid lease).
     *
     * @return how many plans and pending reclaims were rolled back for good
     */
    public int rollBackUnfinished() throws IOException {
        Map<String, Cluster.StoreRef> stores = cluster.stores();
        int n = 0;
        for (ReclaimPlan r : cluster.reclaims()) {
            LOG.info("volume {}: rolling back unfinished reclaim job {}", r.plan().volume(), r.plan().job());
            if (deleteAll(cluster, r.plan(), stores)) {
                cluster.abortReclaim(r.plan().volume(), r.plan().job());
                n++;
            }
        }
        for (StripeMap m : cluster.stripeMaps()) {
            if (StripeMap.PLANNED.equals(m.status())) {
                LOG.info("volume {}: rolling back unfinished encode job {}", m.volume(), m.job());
                n += rollback(cluster, m, stores, false) ? 1 : 0;
            }
        }
        return n;
    }

    /**
     * Finishes or rolls back interrupted encodes and reclaims, and deletes orphan blocks. Call before
     * any job runs.
     */
    public void recover() throws IOException {
        Map<String, Cluster.StoreRef> stores = cluster.stores();
        for (ReclaimPlan r : cluster.reclaims()) {
            LOG.info("volume {}: rolling back interrupted reclaim job {}", r.plan().volume(), r.plan().job());
            rollbackReclaim(cluster, r.plan(), stores);
        }
        ReclaimJob.deleteStaleImages(config);
        for (StripeMap m : cluster.stripeMaps()) {
            if (StripeMap.PLANNED.equals(m.status())) {
                LOG.info("volume {}: rolling back interrupted encode job {}", m.volume(), m.job());
                rollback(cluster, m, stores);
            } else {
                dropReplicas(cluster, m.volume(), stores);
            }
        }
        sweepOrphans(stores);
    }

    /**
     * Deletes every raid-node block that no stripe map and no pending reclaim names, on every healthy
     * store. Pending reclaims are read before and after the stripe maps, so a reclaim that begins or
     * swaps meanwhile still has its blocks known.
     */
    public int sweepOrphans(Map<String, Cluster.StoreRef> stores) throws IOException {
        Set<String> known = new HashSet<>();
        List<StripeMap> maps = new ArrayList<>();
        cluster.reclaims().forEach(r -> maps.add(r.plan()));
        maps.addAll(cluster.stripeMaps());
        cluster.reclaims().forEach(r -> maps.add(r.plan()));
        for (StripeMap m : maps) {
            for (StripeMap.Block b : m.allBlocks()) {
                known.add(b.store() + "/" + b.name());
            }
        }
        int deleted = 0;
        for (Cluster.StoreRef s : stores.values()) {
            if (!s.up()) {
                continue;
            }
            List<String> orphans = new ArrayList<>();
            try {
                for (String name : cluster.listBlocks(s.address()).keySet()) {
                    if (OURS.matcher(name).matches() && !known.contains(s.id() + "/" + name)) {
                        orphans.add(name);
                    }
                }
            } catch (IOException e) {
                LOG.warn("orphan sweep of store {} failed ({}); will retry on the next sweep", s.id(), e.toString());
                continue;
            }
            if (orphans.isEmpty()) {
                continue;
            }
            // Still this raid-node's lease, right before the deletes: else they may be another's blocks in flight.
            cluster.confirmLease();
            try {
                for (String name : orphans) {
                    cluster.deleteBlock(s.address(), name);
                    deleted++;
                    LOG.info("deleted orphan block {} on store {}", name, s.id());
                }
            } catch (IOException e) {
                LOG.warn("orphan sweep of store {} failed ({}); will retry on the next sweep", s.id(), e.toString());
            }
        }
        return deleted;
    }

    /**
     * Deletes every block of a planned map, then aborts it in the directory. If a store cannot be
     * reached the plan stays recorded, so a later {@link #recover()} deletes the rest.
     */
    static void rollback(Cluster cluster, StripeMap plan, Map<String, Cluster.StoreRef> stores) throws IOException {
        rollback(cluster, plan, stores, false);
    }

    /**
     * Rolls back encode job {@code plan}: deletes its blocks, then drops the plan in the directory
     * (the volume READ_ONLY again). A job the directory lists as committed is left alone (a commit
     * whose answer was lost). A block that cannot be deleted keeps the plan, so the next recovery
     * deletes it, unless {@code abortIfLeft}: then the plan is dropped anyway and the orphan sweep
     * deletes the block once its store is back (an encode starting over from another replica).
     *
     * @return true when every block was deleted
     */
    static boolean rollback(Cluster cluster, StripeMap plan, Map<String, Cluster.StoreRef> stores, boolean abortIfLeft)
            throws IOException {
        StripeMap now = cluster.stripeMap(plan.volume());
        if (now != null && StripeMap.COMMITTED.equals(now.status()) && plan.job().equals(now.job())) {
            LOG.warn("volume {}: encode job {} is committed; nothing rolled back", plan.volume(), plan.job());
            return false;
        }
        boolean clean = deleteAll(cluster, plan, stores);
        if (clean || abortIfLeft) {
            cluster.abortEncoding(plan.volume(), plan.job());
        }
        return clean;
    }

    /**
     * Deletes every block a plan names; true if none was left behind. The raid lease is confirmed
     * first (a plan may be another raid-node's job in flight when this one lost its lease).
     *
     * @throws RaidLease.LostException when the lease is no longer held: nothing deleted
     */
    private static boolean deleteAll(Cluster cluster, StripeMap plan, Map<String, Cluster.StoreRef> stores) throws IOException {
        cluster.confirmLease();
        boolean clean = true;
        for (StripeMap.Block b : plan.allBlocks()) {
            Cluster.StoreRef s = stores.get(b.store());
            try {
                if (s == null) {
                    throw new IOException("store " + b.store() + " is unknown");
                }
                cluster.deleteBlock(s.address(), b.name());
            } catch (IOException e) {
                clean = false;
                LOG.warn("rollback of job {}: cannot delete block {} on {} ({}); left for the next recovery",
                        plan.job(), b.name(), b.store(), e.toString());
            }
        }
        return clean;
    }

    /**
     * Deletes the replicas of an erasure-coded volume; the directory forgets them once all are gone.
     * The raid lease is confirmed with the directory first.
     */
    static void dropReplicas(Cluster cluster, int volume, Map<String, Cluster.StoreRef> stores) throws IOException {
        VolumeInfo v = cluster.volume(volume);
        if (v.replicas().isEmpty()) {
            return;
        }
        cluster.confirmLease(); // a raid-node whose lease passed to another drops no replica
        boolean all = true;
        for (String id : v.replicas()) {
            Cluster.StoreRef s = stores.get(id);
            try {
                if (s == null) {
                    throw new IOException("store " + id + " is unknown");
                }
                cluster.dropVolume(s.address(), volume);
            } catch (IOException e) {
                all = false;
                LOG.warn("volume {}: cannot drop the replica on {} ({}); will retry", volume, id, e.toString());
            }
        }
        if (all) {
            cluster.replicasDropped(volume);
        }
    }
}
