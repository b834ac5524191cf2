package io.hayloft.directory;

import io.hayloft.format.errors.DirectoryErrors;
import io.hayloft.directory.meta.LogEntry;
import io.hayloft.directory.meta.MetaStore;
import io.hayloft.format.directory.ReclaimPlan;
import io.hayloft.format.directory.ReclaimSwap;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cold-tier rules of the directory: the {@code READ_ONLY → ENCODING → ERASURE_CODED} steps the
 * raid-node drives, each one a single synced RocksDB batch of the volume record and its stripe map
 * (docs/architecture.md "Data paths"; docs/raid.md "Encode protocol"), block replacement by the BlockFixer, and the reclaim steps
 * (a pending map beside the committed one, then a compare-and-set swap; docs/raid.md "Reclaim").
 *
 * <p>Thread-safe: every change is serialised on the {@link Directory} lock that also guards heartbeats.
 */
public final class ColdTier {

    private static final Logger LOG = LoggerFactory.getLogger(ColdTier.class);

    private final Directory directory;
    private final MetaStore meta;

    ColdTier(Directory directory) {
        this.directory = directory;
        this.meta = directory.meta();
    }

    /** The stripe map of a volume, planned or committed. */
    public StripeMap stripeMap(int volumeId) {
        StripeMap m = meta.stripeMap(volumeId);
        if (m == null) {
            throw DirectoryErrors.NO_STRIPE_MAP.exception("volume " + volumeId + " has no stripe map (state "
                    + directory.volume(volumeId).state() + ")");
        }
        return m;
    }

    public List<StripeMap> stripeMaps() {
        return meta.stripeMaps();
    }

    /** Records the intent of an encode job: the volume goes to ENCODING with its planned map, in one batch. */
    public VolumeInfo beginEncoding(StripeMap plan) {
        return beginEncoding(plan, null);
    }

    /** As above, fenced by a raid lease (null: not fenced): applied only while that lease holds (docs/directory-api.md "Raid lease"). */
    public VolumeInfo beginEncoding(StripeMap plan, LogEntry.Fence fence) {
        validate(plan);
        try (Latches.Held held = directory.latches().shared(Latches.volume(plan.volume()))) {
            ChangeLog.Writer w = directory.writer(fence);
            VolumeInfo v = directory.volume(plan.volume());
            if (v.state() != VolumeState.READ_ONLY) {
                throw DirectoryErrors.WRONG_STATE.exception("volume " + v.id() + " is " + v.state()
                        + "; only a READ_ONLY volume can be encoded");
            }
            VolumeInfo enc = v.withState(VolumeState.ENCODING, "encode job " + plan.job());
            w.putVolumeAndStripes(enc, plan.withStatus(StripeMap.PLANNED));
            LOG.info("volume {}: encoding as job {} ({} stripes, {} {}+{})", v.id(), plan.job(), plan.stripes().size(),
                    plan.codec(), plan.k(), plan.r());
            return enc;
        }
    }

    /** Commits a verified stripe map and the state ERASURE_CODED in one batch; the replicas are still listed. */
    public VolumeInfo commitEncoding(StripeMap map) {
        return commitEncoding(map, null);
    }

    /** As above, fenced by a raid lease (null: not fenced): applied only while that lease holds (docs/directory-api.md "Raid lease"). */
    public VolumeInfo commitEncoding(StripeMap map, LogEntry.Fence fence) {
        validate(map);
        try (Latches.Held held = directory.latches().shared(Latches.volume(map.volume()))) {
            ChangeLog.Writer w = directory.writer(fence);
            VolumeInfo v = directory.volume(map.volume());
            StripeMap plan = meta.stripeMap(map.volume());
            if (v.state() == VolumeState.ERASURE_CODED && plan != null && plan.job().equals(map.job())) {
                return v; // a retried commit
            }
            if (v.state() != VolumeState.ENCODING || plan == null || !plan.job().equals(map.job())) {
                throw DirectoryErrors.WRONG_STATE.exception("volume " + v.id() + " is " + v.state() + " with job "
                        + (plan == null ? "none" : plan.job()) + "; cannot commit job " + map.job());
            }
            Set<String> planned = new HashSet<>();
            plan.allBlocks().forEach(b -> planned.add(b.store() + "/" + b.name()));
            for (StripeMap.Block b : map.allBlocks()) {
                if (!planned.contains(b.store() + "/" + b.name())) {
                    throw DirectoryErrors.WRONG_STATE.exception("block " + b.name() + " on store " + b.store()
                            + " was not in the plan of job " + map.job());
                }
            }
            VolumeInfo ec = v.withState(VolumeState.ERASURE_CODED, "encoded by job " + map.job());
            w.putVolumeAndStripes(ec, map.withStatus(StripeMap.COMMITTED));
            LOG.info("volume {}: ERASURE_CODED by job {}", v.id(), map.job());
            return ec;
        }
    }

    /** Rolls an encode job back: the volume returns to READ_ONLY and its planned map is dropped, in one batch. */
    public VolumeInfo abortEncoding(int volumeId, String job) {
        return abortEncoding(volumeId, job, null);
    }

    /** As above, fenced by a raid lease (null: not fenced): applied only while that lease holds (docs/directory-api.md "Raid lease"). */
    public VolumeInfo abortEncoding(int volumeId, String job, LogEntry.Fence fence) {
        try (Latches.Held held = directory.latches().shared(Latches.volume(volumeId))) {
            ChangeLog.Writer w = directory.writer(fence);
            VolumeInfo v = directory.volume(volumeId);
            StripeMap plan = meta.stripeMap(volumeId);
            if (v.state() == VolumeState.READ_ONLY && plan == null) {
                return v; // already rolled back
            }
            if (v.state() != VolumeState.ENCODING || plan == null || !plan.job().equals(job)) {
                throw DirectoryErrors.WRONG_STATE.exception("volume " + volumeId + " is " + v.state()
                        + "; no encode job " + job + " to abort");
            }
            VolumeInfo ro = v.withState(VolumeState.READ_ONLY, "encode job " + job + " rolled back");
            w.putVolumeAndStripes(ro, null);
            LOG.info("volume {}: encode job {} rolled back", volumeId, job);
            return ro;
        }
    }

    /** The raid-node deleted every replica of an erasure-coded volume. */
    public VolumeInfo replicasDropped(int volumeId) {
        return replicasDropped(volumeId, null);
    }

    /** As above, fenced by a raid lease (null: not fenced): applied only while that lease holds (docs/directory-api.md "Raid lease"). */
    public VolumeInfo replicasDropped(int volumeId, LogEntry.Fence fence) {
        try (Latches.Held held = directory.latches().shared(Latches.volume(volumeId))) {
            ChangeLog.Writer w = directory.writer(fence);
            VolumeInfo v = directory.volume(volumeId);
            if (v.state() != VolumeState.ERASURE_CODED) {
                throw DirectoryErrors.WRONG_STATE.exception("volume " + volumeId + " is " + v.state()
                        + "; replicas are dropped only after ERASURE_CODED");
            }
            VolumeInfo out = v.withReplicas(List.of());
            w.putVolume(out);
            return out;
        }
    }

    /**
     * Replaces block {@code unit} of stripe {@code stripe} with a rebuilt one, if the map still names
     * {@code expected} there (so two fixers never overwrite each other's work).
     */
    public StripeMap replaceBlock(int volumeId, int stripe, int unit, String expected, StripeMap.Block rebuilt) {
        return replaceBlock(volumeId, stripe, unit, expected, rebuilt, null);
    }

    /** As above, fenced by a raid lease (null: not fenced): applied only while that lease holds (docs/directory-api.md "Raid lease"). */
    public StripeMap replaceBlock(int volumeId, int stripe, int unit, String expected, StripeMap.Block rebuilt, LogEntry.Fence fence) {
        try (Latches.Held held = directory.latches().shared(Latches.volume(volumeId))) {
            ChangeLog.Writer w = directory.writer(fence);
            StripeMap m = stripeMap(volumeId);
            if (!StripeMap.COMMITTED.equals(m.status())) {
                throw DirectoryErrors.WRONG_STATE.exception("volume " + volumeId + " stripe map is " + m.status());
            }
            if (stripe < 0 || stripe >= m.stripes().size() || unit < 0 || unit >= m.k() + m.r()) {
                throw Refusal.invalid("no block " + stripe + "/" + unit + " in volume " + volumeId + " ("
                        + m.stripes().size() + " stripes of " + (m.k() + m.r()) + " blocks)");
            }
            StripeMap.Block old = m.stripes().get(stripe).blocks().get(unit);
            if (expected != null && !(old.store() + "/" + old.name()).equals(expected)) {
                throw DirectoryErrors.WRONG_STATE.exception("block " + stripe + "/" + unit + " of volume " + volumeId
                        + " is " + old.store() + "/" + old.name() + ", not " + expected);
            }
            StripeMap out = m.withBlock(stripe, unit, rebuilt);
            w.putStripeMap(out);
            LOG.info("volume {} block {}/{}: {}/{} replaced by {}/{}", volumeId, stripe, unit, old.store(), old.name(),
                    rebuilt.store(), rebuilt.name());
            return out;
        }
    }

    // ------------------------------------------------------------------ reclaim

    /** Most keys one dead-keys request may ask about. */
    public static final int MAX_DEAD_KEYS = 100_000;


    /** The pending reclaim of a volume. */
    public ReclaimPlan reclaim(int volumeId) {
        directory.volume(volumeId);
        ReclaimPlan p = meta.reclaim(volumeId);
        if (p == null) {
            throw DirectoryErrors.NO_RECLAIM.exception("volume " + volumeId + " has no pending reclaim");
        }
        return p;
    }

    /** Every pending reclaim: their blocks are known to the orphan sweep while they exist. */
    public List<ReclaimPlan> reclaims() {
        return meta.reclaims();
    }

    /**
     * Records the intent of a reclaim: {@code plan} (every block name it may write) is stored beside
     * the volume's committed map, which stays in force. Only an erasure-coded volume whose committed
     * map is job {@code expect} can be reclaimed; a repeated request for the same job answers the
     * recorded plan.
     */
    public ReclaimPlan beginReclaim(StripeMap plan, String expect) {
        return beginReclaim(plan, expect, null);
    }

    /** As above, fenced by a raid lease (null: not fenced): applied only while that lease holds (docs/directory-api.md "Raid lease"). */
    public ReclaimPlan beginReclaim(StripeMap plan, String expect, LogEntry.Fence fence) {
        validate(plan);
        try (Latches.Held held = directory.latches().shared(Latches.volume(plan.volume()))) {
            ChangeLog.Writer w = directory.writer(fence);
            VolumeInfo v = directory.volume(plan.volume());
            StripeMap committed = committedMap(v, "reclaim");
            ReclaimPlan pending = meta.reclaim(v.id());
            if (pending != null && pending.plan().job().equals(plan.job())) {
                return pending; // a retried begin
            }
            if (pending != null) {
                throw DirectoryErrors.WRONG_STATE.exception("volume " + v.id() + " already has reclaim job "
                        + pending.plan().job() + " pending; roll it back first");
            }
            if (expect == null || !committed.job().equals(expect)) {
                throw DirectoryErrors.JOB_MISMATCH.exception("volume " + v.id() + " is committed as job " + committed.job()
                        + ", not " + expect + "; re-read its stripe map");
            }
            if (plan.job().equals(committed.job())) {
                throw Refusal.invalid("reclaim job " + plan.job() + " must differ from the committed job of volume " + v.id());
            }
            ReclaimPlan p = new ReclaimPlan(expect, v.deletedPhotos(), v.deletedNeedles(), plan.withStatus(StripeMap.PLANNED));
            w.putReclaim(p);
            LOG.info("volume {}: reclaim job {} planned to replace job {} ({} stripes)", v.id(), plan.job(), expect,
                    plan.stripes().size());
            return p;
        }
    }

    /**
     * The reclaim swap, one synced batch: if the committed map is still job {@code expect} and the
     * pending plan is {@code map}'s job, {@code map} (verified) becomes the committed map, the plan is
     * dropped and the delete counters lose what the new stripes no longer hold. A repeated swap of the
     * same job answers with {@code replaced} null.
     */
    public ReclaimSwap commitReclaim(StripeMap map, String expect) {
        return commitReclaim(map, expect, null);
    }

    /** As above, fenced by a raid lease (null: not fenced): applied only while that lease holds (docs/directory-api.md "Raid lease"). */
    public ReclaimSwap commitReclaim(StripeMap map, String expect, LogEntry.Fence fence) {
        validate(map);
        try (Latches.Held held = directory.latches().shared(Latches.volume(map.volume()))) {
            ChangeLog.Writer w = directory.writer(fence);
            VolumeInfo v = directory.volume(map.volume());
            StripeMap committed = committedMap(v, "swap");
            ReclaimPlan pending = meta.reclaim(v.id());
            if (pending == null && committed.job().equals(map.job())) {
                return new ReclaimSwap(v, null); // a retried swap
            }
            if (pending == null || !pending.plan().job().equals(map.job())) {
                throw DirectoryErrors.JOB_MISMATCH.exception("volume " + v.id() + " has " + (pending == null
                        ? "no pending reclaim" : "reclaim job " + pending.plan().job() + " pending") + "; cannot swap in job " + map.job());
            }
            if (expect == null || !committed.job().equals(expect) || !pending.replaces().equals(expect)) {
                throw DirectoryErrors.JOB_MISMATCH.exception("volume " + v.id() + " is committed as job " + committed.job()
                        + " and the reclaim replaces job " + pending.replaces() + "; the swap expected " + expect);
            }
            Set<String> planned = new HashSet<>();
            pending.plan().allBlocks().forEach(b -> planned.add(b.store() + "/" + b.name()));
            for (StripeMap.Block b : map.allBlocks()) {
                if (!planned.contains(b.store() + "/" + b.name())) {
                    throw DirectoryErrors.WRONG_STATE.exception("block " + b.name() + " on store " + b.store()
                            + " was not in the plan of reclaim job " + map.job());
                }
            }
            VolumeInfo out = v.withDeletes(Math.max(0, v.deletedPhotos() - pending.deletedPhotos()),
                    Math.max(0, v.deletedNeedles() - pending.deletedNeedles()))
                    .withState(v.state(), "reclaimed by job " + map.job() + " (was job " + committed.job() + ")");
            w.swapStripes(out, map.withStatus(StripeMap.COMMITTED));
            LOG.info("volume {}: reclaim job {} replaced job {} ({} → {} stripes)", v.id(), map.job(), committed.job(),
                    committed.stripes().size(), map.stripes().size());
            return new ReclaimSwap(out, committed);
        }
    }

    /** Drops a pending reclaim whose blocks the raid-node deleted; answers the volume. Idempotent. */
    public VolumeInfo abortReclaim(int volumeId, String job) {
        return abortReclaim(volumeId, job, null);
    }

    /** As above, fenced by a raid lease (null: not fenced): applied only while that lease holds (docs/directory-api.md "Raid lease"). */
    public VolumeInfo abortReclaim(int volumeId, String job, LogEntry.Fence fence) {
        try (Latches.Held held = directory.latches().shared(Latches.volume(volumeId))) {
            ChangeLog.Writer w = directory.writer(fence);
            VolumeInfo v = directory.volume(volumeId);
            ReclaimPlan pending = meta.reclaim(volumeId);
            if (pending == null) {
                return v;
            }
            if (!pending.plan().job().equals(job)) {
                throw DirectoryErrors.JOB_MISMATCH.exception("volume " + volumeId + " has reclaim job "
                        + pending.plan().job() + " pending, not " + job);
            }
            w.deleteReclaim(volumeId);
            LOG.info("volume {}: reclaim job {} rolled back", volumeId, job);
            return v;
        }
    }

    /**
     * Which of {@code keys} are dead in volume {@code volumeId}: exactly those in the volume's delete
     * log ({@link HotPath}). Any other key is live: the directory keeps no per-photo record, the
     * stores are the authority for which photos exist. The raid-node asks this for every key of a
     * needle index.
     */
    public List<Long> deadKeys(int volumeId, List<Long> keys) {
        directory.volume(volumeId);
        if (keys == null || keys.size() > MAX_DEAD_KEYS) {
            throw Refusal.invalid("dead-keys takes 0.." + MAX_DEAD_KEYS + " keys, was "
                    + (keys == null ? "none" : keys.size()));
        }
        List<Long> dead = new ArrayList<>();
        for (Long k : keys) {
            if (k == null || k < 0) {
                throw Refusal.invalid("photo keys must be non-negative integers, was " + k);
            }
            if (directory.hotPath().logged(volumeId, k)) {
                dead.add(k);
            }
        }
        return dead;
    }

    private StripeMap committedMap(VolumeInfo v, String what) {
        if (v.state() != VolumeState.ERASURE_CODED && v.state() != VolumeState.DEGRADED && v.state() != VolumeState.REPAIRING) {
            throw DirectoryErrors.WRONG_STATE.exception("volume " + v.id() + " is " + v.state()
                    + "; only an erasure-coded volume can " + what);
        }
        StripeMap committed = meta.stripeMap(v.id());
        if (committed == null || !StripeMap.COMMITTED.equals(committed.status())) {
            throw DirectoryErrors.WRONG_STATE.exception("volume " + v.id() + " has no committed stripe map");
        }
        return committed;
    }

    private static void validate(StripeMap m) {
        if (m == null || m.job() == null || m.job().isBlank()) {
            throw Refusal.invalid("stripe map needs a job id");
        }
        if (m.k() < 1 || m.r() < 1 || m.blockSize() < 2) {
            throw Refusal.invalid("stripe map of volume " + m.volume() + ": bad k=" + m.k() + " r=" + m.r()
                    + " blockSize=" + m.blockSize());
        }
        for (StripeMap.Stripe s : m.stripes()) {
            if (s.blocks().size() != m.k() + m.r()) {
                throw Refusal.invalid("stripe " + s.index() + " of volume " + m.volume() + " has "
                        + s.blocks().size() + " blocks, expected " + (m.k() + m.r()));
            }
        }
    }
}
