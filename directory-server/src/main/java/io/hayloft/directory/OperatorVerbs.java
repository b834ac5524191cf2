package io.hayloft.directory;

import io.hayloft.format.errors.DirectoryErrors;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.directory.meta.LogEntry;
import io.hayloft.directory.meta.MetaStore;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.StoreState;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator's verbs on stores and replicas (docs/directory-api.md "Operator verbs"): fail a store
 * by hand, drain it (DRAINING, then DRAINED once nothing the directory lists is on it), and the two
 * swaps a drain makes: a replica of a read-only volume, or a copy of a coded volume's needle index,
 * moved from one store to another. Every swap is idempotent (a repeat of a done move answers the
 * volume as it is) and refuses, with WRONG_STATE, a move whose {@code from} is not there. A drain job
 * calls drain, drained and the moves with its raid lease's epoch: fenced, as the raid commits of
 * {@link ColdTier} are, they change nothing once that lease passed to another raid-node.
 *
 * <p>Thread-safe: every change is serialised on the {@link Directory}, as its own changes are.
 */
public final class OperatorVerbs {

    private static final Logger LOG = LoggerFactory.getLogger(OperatorVerbs.class);
    /** Prefix of {@code lastError} of a store an operator failed: the health checker does not restore it by itself. */
    static final String OPERATOR = "operator: ";

    private final Directory directory;
    private final MetaStore meta;

    OperatorVerbs(Directory directory) {
        this.directory = directory;
        this.meta = directory.meta();
    }

    /** True when an operator failed the store (autoRestore leaves it FAILED until {@code restore}). */
    static boolean byOperator(StoreInfo s) {
        return s.lastError() != null && s.lastError().startsWith(OPERATOR);
    }

    /** {@code POST /v1/stores/{id}/fail}: the store FAILED and its writable volumes READ_ONLY, as the health checker does. */
    public StoreInfo fail(String storeId, String reason) {
        try (Latches.Held held = directory.latches().exclusive()) {
            ChangeLog.Writer w = directory.log().begin();
            StoreInfo s = store(storeId);
            String why = OPERATOR + (reason == null || reason.isBlank() ? "failed by hand" : reason);
            LOG.warn("store {} failed by an operator ({}); its volumes become read-only", storeId, why);
            return directory.fail(w, s, s.failures(), why);
        }
    }

    /**
     * {@code POST /v1/stores/{id}/drain}: the store DRAINING (from any state): no new volume is
     * placed on it and each of its writable volumes becomes READ_ONLY. The drain job then moves its
     * replicas and blocks away and calls {@link #drained}.
     */
    public StoreInfo drain(String storeId) {
        return drain(storeId, null);
    }

    /** As above, fenced by a raid lease (null: not fenced): applied only while that lease holds (docs/directory-api.md "Raid lease"). */
    public StoreInfo drain(String storeId, LogEntry.Fence fence) {
        try (Latches.Held held = directory.latches().exclusive()) {
            ChangeLog.Writer w = directory.writer(fence);
            StoreInfo s = store(storeId);
            StoreInfo draining = s.state() == StoreState.DRAINING ? s : s.withState(StoreState.DRAINING, s.failures(), s.lastError());
            w.putStore(draining);
            directory.sealVolumesOn(w, storeId, "store " + storeId + " draining");
            if (s.state() != StoreState.DRAINING) {
                LOG.info("store {} draining (was {})", storeId, s.state());
            }
            return draining;
        }
    }

    /**
     * {@code POST /v1/stores/{id}/drained}: DRAINING becomes DRAINED when the directory lists nothing
     * on the store (no replica, no block of a stripe map or pending reclaim, no needle-index copy);
     * a repeat answers DRAINED. WRONG_STATE from any other state or naming what is left.
     */
    public StoreInfo drained(String storeId) {
        return drained(storeId, null);
    }

    /** As above, fenced by a raid lease (null: not fenced): applied only while that lease holds (docs/directory-api.md "Raid lease"). */
    public StoreInfo drained(String storeId, LogEntry.Fence fence) {
        try (Latches.Held held = directory.latches().exclusive()) {
            ChangeLog.Writer w = directory.writer(fence);
            StoreInfo s = store(storeId);
            if (s.state() == StoreState.DRAINED) {
                return s;
            }
            if (s.state() != StoreState.DRAINING) {
                throw DirectoryErrors.WRONG_STATE.exception("store " + storeId + " is " + s.state() + ", not DRAINING");
            }
            List<String> left = holdings(storeId);
            if (!left.isEmpty()) {
                throw DirectoryErrors.WRONG_STATE.exception("store " + storeId + " still holds " + left.size() + " items: "
                        + String.join(", ", left.subList(0, Math.min(5, left.size()))) + (left.size() > 5 ? ", ..." : ""));
            }
            StoreInfo done = s.withState(StoreState.DRAINED, s.failures(), s.lastError());
            w.putStore(done);
            LOG.info("store {} drained", storeId);
            return done;
        }
    }

    /** What the directory lists on a store: replicas, stripe blocks, index copies, blocks of pending reclaims. */
    List<String> holdings(String storeId) {
        List<String> left = new ArrayList<>();
        for (VolumeInfo v : meta.volumes()) {
            if (v.replicas().contains(storeId)) {
                left.add("replica of volume " + v.id());
            }
        }
        List<StripeMap> maps = new ArrayList<>(meta.stripeMaps());
        directory.cold().reclaims().forEach(r -> maps.add(r.plan()));
        for (StripeMap m : maps) {
            for (StripeMap.Block b : m.allBlocks()) {
                if (b.store().equals(storeId)) {
                    left.add("block " + b.name() + " of volume " + m.volume());
                }
            }
        }
        return left;
    }

    /**
     * {@code POST /v1/volumes/{id}/replicas/move}: replica {@code from} of a READ_ONLY volume becomes
     * {@code to} (same place in the list). A repeat after the move answers the volume unchanged.
     */
    public VolumeInfo moveReplica(int volumeId, String from, String to) {
        return moveReplica(volumeId, from, to, null);
    }

    /** As above, fenced by a raid lease (null: not fenced): applied only while that lease holds (docs/directory-api.md "Raid lease"). */
    public VolumeInfo moveReplica(int volumeId, String from, String to, LogEntry.Fence fence) {
        try (Latches.Held held = directory.latches().exclusive()) {
            ChangeLog.Writer w = directory.writer(fence);
            VolumeInfo v = directory.volume(volumeId);
            StoreInfo target = store(to);
            List<String> replicas = new ArrayList<>(v.replicas());
            if (!replicas.contains(from) && replicas.contains(to)) {
                return v; // done already
            }
            if (!replicas.contains(from)) {
                throw DirectoryErrors.WRONG_STATE.exception("store " + from + " holds no replica of volume " + volumeId
                        + " (replicas " + replicas + ")");
            }
            if (replicas.contains(to)) {
                throw DirectoryErrors.WRONG_STATE.exception("store " + to + " already holds a replica of volume " + volumeId);
            }
            if (target.state() != StoreState.UP) {
                throw DirectoryErrors.WRONG_STATE.exception("store " + to + " is " + target.state() + "; a replica moves only to an UP store");
            }
            if (v.state() != VolumeState.READ_ONLY) {
                throw DirectoryErrors.WRONG_STATE.exception("volume " + volumeId + " is " + v.state()
                        + "; only a READ_ONLY volume's replicas move");
            }
            replicas.set(replicas.indexOf(from), to);
            VolumeInfo out = v.withReplicas(replicas);
            w.putVolume(out);
            LOG.info("volume {}: replica moved from {} to {}", volumeId, from, to);
            return out;
        }
    }

    /**
     * {@code POST /v1/volumes/{id}/index/move}: the copy of a committed stripe map's needle index on
     * {@code from} is now on {@code to} (same block name, same length and CRC32C). Idempotent.
     */
    public StripeMap moveIndex(int volumeId, String from, String to) {
        return moveIndex(volumeId, from, to, null);
    }

    /** As above, fenced by a raid lease (null: not fenced): applied only while that lease holds (docs/directory-api.md "Raid lease"). */
    public StripeMap moveIndex(int volumeId, String from, String to, LogEntry.Fence fence) {
        try (Latches.Held held = directory.latches().exclusive()) {
            ChangeLog.Writer w = directory.writer(fence);
            directory.volume(volumeId);
            StoreInfo target = store(to);
            StripeMap m = directory.cold().stripeMap(volumeId);
            if (!StripeMap.COMMITTED.equals(m.status()) || m.index() == null) {
                throw DirectoryErrors.WRONG_STATE.exception("volume " + volumeId + " stripe map is " + m.status());
            }
            List<String> holders = new ArrayList<>(m.index().holders());
            if (!holders.contains(from) && holders.contains(to)) {
                return m;
            }
            if (!holders.contains(from) || holders.contains(to)) {
                throw DirectoryErrors.WRONG_STATE.exception("cannot move the index of volume " + volumeId + " from "
                        + from + " to " + to + ": its holders are " + holders);
            }
            if (target.state() != StoreState.UP) {
                throw DirectoryErrors.WRONG_STATE.exception("store " + to + " is " + target.state() + "; an index copy moves only to an UP store");
            }
            holders.set(holders.indexOf(from), to);
            StripeMap out = new StripeMap(m.volume(), m.job(), m.codec(), m.k(), m.r(), m.blockSize(), m.volumeBytes(),
                    m.status(), m.stripes(), new StripeMap.IndexBlock(m.index().name(), holders, m.index().length(),
                    m.index().crc32c()));
            w.putStripeMap(out);
            LOG.info("volume {}: needle index copy moved from {} to {}", volumeId, from, to);
            return out;
        }
    }

    private StoreInfo store(String id) {
        StoreInfo s = id == null ? null : meta.store(id);
        if (s == null) {
            throw DirectoryErrors.UNKNOWN_STORE.exception("no store " + id);
        }
        return s;
    }
}
