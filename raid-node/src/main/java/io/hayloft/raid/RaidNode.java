package io.hayloft.raid;

import io.hayloft.common.wire.StripeMap;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The raid-node: picks volumes to encode (policy), runs encode jobs on a {@link JobRunner}, and on
 * start finishes what a crash interrupted ({@link #recover()}): planned stripe maps are rolled back
 * (their blocks deleted, the volume back to READ_ONLY), committed ones get their replicas dropped,
 * and blocks no stripe map names are deleted, so no orphan survives a restart.
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

    public RaidNode(RaidConfig config, JobRunner runner) {
        this.config = config.validate();
        this.cluster = new Cluster(config.directory, config.adminToken, java.time.Duration.ofMillis(config.requestTimeoutMillis));
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

    /** READ_ONLY volumes older than the policy's minimum age: what {@link #encodeBacklog()} would encode. */
    public List<Integer> backlog() throws IOException {
        long now = System.currentTimeMillis();
        List<Integer> out = new ArrayList<>();
        for (JsonNode v : cluster.volumes()) {
            if ("READ_ONLY".equals(v.get("state").asText()) && now - v.get("created").asLong() >= config.minAgeMillis
                    && !v.path("reason").asText("").startsWith("being created")) {
                out.add(v.get("id").asInt());
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

    /** Finishes or rolls back interrupted encodes and deletes orphan blocks. Call before any job runs. */
    public void recover() throws IOException {
        Map<String, Cluster.StoreRef> stores = cluster.stores();
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

    /** Deletes every raid-node block that no stripe map names, on every healthy store. */
    public int sweepOrphans(Map<String, Cluster.StoreRef> stores) throws IOException {
        Set<String> known = new HashSet<>();
        for (StripeMap m : cluster.stripeMaps()) {
            for (StripeMap.Block b : m.allBlocks()) {
                known.add(b.store() + "/" + b.name());
            }
        }
        int deleted = 0;
        for (Cluster.StoreRef s : stores.values()) {
            if (!s.up()) {
                continue;
            }
            try {
                for (String name : cluster.listBlocks(s.address()).keySet()) {
                    if (OURS.matcher(name).matches() && !known.contains(s.id() + "/" + name)) {
                        cluster.deleteBlock(s.address(), name);
                        deleted++;
                        LOG.info("deleted orphan block {} on store {}", name, s.id());
                    }
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
        if (clean) {
            cluster.abortEncoding(plan.volume(), plan.job());
        }
    }

    /** Deletes the replicas of an erasure-coded volume; the directory forgets them once all are gone. */
    static void dropReplicas(Cluster cluster, int volume, Map<String, Cluster.StoreRef> stores) throws IOException {
        JsonNode v = cluster.volume(volume);
        if (v.get("replicas").isEmpty()) {
            return;
        }
        boolean all = true;
        for (JsonNode id : v.get("replicas")) {
            Cluster.StoreRef s = stores.get(id.asText());
            try {
                if (s == null) {
                    throw new IOException("store " + id.asText() + " is unknown");
                }
                cluster.dropVolume(s.address(), volume);
            } catch (IOException e) {
                all = false;
                LOG.warn("volume {}: cannot drop the replica on {} ({}); will retry", volume, id.asText(), e.toString());
            }
        }
        if (all) {
            cluster.replicasDropped(volume);
        }
    }
}
