package io.hayloft.raid;

import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.VolumeIndex;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves everything the directory lists on one store to other stores, so the store can go down for
 * maintenance (docs/raid.md "Drain"): {@code hayloft stores drain}.
 *
 * <ol>
 * <li>directory: the store DRAINING (no new volume or block goes there, its writable volumes
 * read-only);</li>
 * <li>each replica of a read-only volume: sealed on its source, pulled by a store that holds no
 * replica of the volume (another rack when possible, then the fewest replicas) from the drained
 * store, or from another replica when the drained store is down; verified: the new replica's own
 * index holds every live needle of the source's at the same offset with the same size and CRC32C;
 * swapped in the directory ({@code replicas/move}, idempotent); the old replica deleted;</li>
 * <li>each block of a committed stripe map: copied to a store holding no block of its stripe
 * ({@link BlockPlacement}) under the next generation's name (the target pulls it from the drained
 * store with one streamed read: {@link Cluster#pullBlock}), verified by length and CRC32C from the
 * target's listing, swapped with the compare-and-set on the old name, deleted; a block whose store
 * is down or whose copy there is damaged is rebuilt by the {@link BlockFixer} instead;</li>
 * <li>each copy of a needle index: copied whole from a good holder, verified, swapped
 * ({@code index/move}), deleted;</li>
 * <li>directory: DRAINED, which it grants only when it lists nothing on the store.</li>
 * </ol>
 *
 * <p>Resumable: every step reads what is left from the directory, so a rerun after a crash or an
 * interrupt goes on where the last one stopped. A crash between a copy and its swap leaves an
 * unlisted copy: a replica, which the rerun drops before it copies that volume again (from every
 * store that holds one the directory does not list), or a block, which the orphan sweep of
 * {@link RaidNode#recover()} deletes. The directory never lists a copy before it is verified. The
 * caller holds the cluster's raid lease and has run {@link RaidNode#recover()}.
 *
 * <p>Not thread-safe: one drain per instance, run by one thread.
 */
public final class DrainJob {

    private static final Logger LOG = LoggerFactory.getLogger(DrainJob.class);

    /** Told how much there is to move and as it moves. */
    public interface Listener {
        Listener NONE = new Listener() { };

        /** Once, before the first move: bytes of every replica, block and index copy to move. */
        default void planned(int items, long bytes) {
        }

        /** After each item is swapped. */
        default void moved(String what, long bytes) {
        }
    }

    /** What a drain did. */
    public record Result(String store, boolean storeWasDown, int replicasMoved, int blocksCopied, int blocksRebuilt,
                         int indexesMoved, long bytes, long nanos) {
    }

    private final Cluster cluster;
    private final RaidConfig config;
    private final Checkpoints checkpoints;
    private final BlockFixer fixer;
    private int rotation;
    /** False once a target answered that it cannot pull a block: the rest of the drain copies through this process. */
    private boolean pull = true;
    private long bytesPulled;

    public DrainJob(Cluster cluster, RaidConfig config, Checkpoints checkpoints) {
        this.cluster = cluster;
        this.config = config;
        this.checkpoints = checkpoints;
        this.fixer = new BlockFixer(cluster, config);
        this.fixer.checkpoints(checkpoints);
    }

    /**
     * Drains {@code storeId}. Items that fail are reported together at the end (the others still
     * move); the store becomes DRAINED only when nothing is left on it.
     *
     * @throws Cluster.HttpStatusException 404 for an unknown store
     * @throws IOException naming every item that could not be moved
     */
    public Result drain(String storeId, Listener listener) throws IOException {
        long t0 = System.nanoTime();
        cluster.checkLease();
        cluster.drainStore(storeId);
        checkpoints.reached("draining");
        Map<String, Cluster.StoreRef> stores = cluster.stores();
        Cluster.StoreRef self = stores.get(storeId);
        boolean reachable = self != null && cluster.healthy(self.address());
        if (!reachable) {
            LOG.warn("drain of {}: the store does not answer; replicas are copied from other replicas, blocks rebuilt", storeId);
        }
        List<VolumeInfo> volumes = new ArrayList<>();
        long bytes = 0;
        for (VolumeInfo v : cluster.volumes()) {
            if (v.replicas().contains(storeId)) {
                volumes.add(v);
                bytes += v.sizeBytes();
            }
        }
        List<StripeMap> maps = new ArrayList<>();
        int items = volumes.size();
        for (StripeMap m : cluster.stripeMaps()) {
            if (!StripeMap.COMMITTED.equals(m.status())) {
                continue;
            }
            maps.add(m);
            for (StripeMap.Block b : m.allBlocks()) {
                if (b.store().equals(storeId)) {
                    items++;
                    bytes += b.length();
                }
            }
        }
        listener.planned(items, bytes);
        Map<String, Set<Integer>> held = new HashMap<>();
        for (Cluster.StoreRef s : stores.values()) {
            if (s.placeable()) {
                try {
                    held.put(s.id(), cluster.storeVolumes(s.address()));
                } catch (IOException e) {
                    LOG.warn("drain of {}: store {} cannot list its volumes ({})", storeId, s.id(), e.toString());
                }
            }
        }
        Map<String, Integer> perStore = new HashMap<>();
        for (VolumeInfo v : cluster.volumes()) {
            v.replicas().forEach(r -> perStore.merge(r, 1, Integer::sum));
        }
        List<String> failures = new ArrayList<>();
        int replicasMoved = 0;
        int copied = 0;
        int rebuilt = 0;
        int indexes = 0;
        long moved = 0;
        for (VolumeInfo v : volumes) {
            int id = v.id();
            try {
                long n = moveReplica(id, self, reachable, stores, held, perStore);
                replicasMoved++;
                moved += n;
                listener.moved("replica of volume " + id, n);
            } catch (IOException e) {
                stopIfLeaseLost(e);
                LOG.warn("drain of {}: replica of volume {} not moved: {}", storeId, id, e.toString());
                failures.add("replica of volume " + id + ": " + e.getMessage());
            }
        }
        Map<String, Cluster.BlockInfo> listing = null;
        if (reachable) {
            try {
                listing = cluster.listBlocks(self.address());
            } catch (IOException e) {
                LOG.warn("drain of {}: the store cannot list its blocks ({}); rebuilding them", storeId, e.toString());
            }
        }
        for (StripeMap m : maps) {
            for (StripeMap.Stripe s : m.stripes()) {
                for (int u = 0; u < s.blocks().size(); u++) {
                    StripeMap.Block b = s.blocks().get(u);
                    if (!b.store().equals(storeId)) {
                        continue;
                    }
                    try {
                        Cluster.BlockInfo got = listing == null ? null : listing.get(b.name());
                        if (got != null && got.length() == b.length() && got.crc32c() == b.crc32c()) {
                            copyBlock(m.volume(), s.index(), u, self, stores);
                            copied++;
                        } else if (storeId.equals(storeOf(cluster.stripeMap(m.volume()), s.index(), u))) {
                            fixer.repair(new BlockFixer.Damage(m.volume(), s.index(), new int[] {u}, "drain of " + storeId));
                            rebuilt++;
                        }
                        moved += b.length();
                        listener.moved("block " + b.name(), b.length());
                    } catch (IOException | IllegalStateException e) {
                        stopIfLeaseLost(e);
                        LOG.warn("drain of {}: block {} of volume {} not moved: {}", storeId, b.name(), m.volume(), e.toString());
                        failures.add("block " + b.name() + " of volume " + m.volume() + ": " + e.getMessage());
                    }
                }
            }
            if (m.index() != null && m.index().holders().contains(storeId)) {
                try {
                    moveIndex(m.volume(), self, reachable, stores);
                    indexes++;
                    moved += m.index().length();
                    listener.moved("index of volume " + m.volume(), m.index().length());
                } catch (IOException | IllegalStateException e) {
                    stopIfLeaseLost(e);
                    LOG.warn("drain of {}: index of volume {} not moved: {}", storeId, m.volume(), e.toString());
                    failures.add("needle index of volume " + m.volume() + ": " + e.getMessage());
                }
            }
        }
        if (!failures.isEmpty()) {
            throw new IOException("drain of store " + storeId + ": " + failures.size() + " items not moved (run it again): "
                    + String.join("; ", failures));
        }
        if (reachable) {
            sweep(self);
        }
        cluster.markDrained(storeId);
        checkpoints.reached("drained");
        LOG.info("store {} drained: {} replicas, {} blocks copied, {} rebuilt, {} index copies", storeId, replicasMoved,
                copied, rebuilt, indexes);
        return new Result(storeId, !reachable, replicasMoved, copied, rebuilt, indexes, moved, System.nanoTime() - t0);
    }

    /**
     * Deletes what an interrupted drain left on the drained store after a swap: replicas and
     * raid-node blocks that the directory no longer lists there (a crash between a swap and the
     * delete of the old copy). Nothing listed anywhere else is touched.
     */
    private void sweep(Cluster.StoreRef self) throws IOException {
        cluster.confirmLease();
        for (int id : cluster.storeVolumes(self.address())) {
            VolumeInfo v;
            try {
                v = cluster.volume(id);
            } catch (Cluster.HttpStatusException e) {
                LOG.warn("drain: store {} holds volume {}, which the directory does not know; left alone", self.id(), id);
                continue;
            }
            if (!v.replicas().contains(self.id())) {
                LOG.info("drain: deleting the old replica of volume {} left on {}", id, self.id());
                cluster.dropVolume(self.address(), id);
            }
        }
        Set<String> known = new HashSet<>();
        List<StripeMap> maps = new ArrayList<>();
        cluster.reclaims().forEach(r -> maps.add(r.plan()));
        maps.addAll(cluster.stripeMaps());
        for (StripeMap m : maps) {
            m.allBlocks().forEach(b -> known.add(b.store() + "/" + b.name()));
        }
        for (String name : cluster.listBlocks(self.address()).keySet()) {
            if (RaidNode.OURS.matcher(name).matches() && !known.contains(self.id() + "/" + name)) {
                LOG.info("drain: deleting block {} left on {}", name, self.id());
                cluster.deleteBlock(self.address(), name);
            }
        }
    }

    /** Moves the replica of {@code id} on {@code self} to another store; returns its size. */
    private long moveReplica(int id, Cluster.StoreRef self, boolean reachable, Map<String, Cluster.StoreRef> stores,
                             Map<String, Set<Integer>> held, Map<String, Integer> perStore) throws IOException {
        cluster.checkLease();
        VolumeInfo v = cluster.volume(id);
        List<String> replicas = v.replicas();
        if (!replicas.contains(self.id())) {
            return 0; // moved meanwhile
        }
        if (!v.state().readOnly()) {
            throw new IOException("volume " + id + " is " + v.state() + "; only a READ_ONLY volume's replica is moved");
        }
        // Every reachable replica sealed on its store (the directory already refuses new writes, but a
        // client holding an older write token could still append to one); the source's bytes stay put.
        for (String r : replicas) {
            Cluster.StoreRef s = stores.get(r);
            if (s != null && s.up() && (reachable || !r.equals(self.id()))) {
                try {
                    cluster.sealVolume(s.address(), id);
                } catch (IOException e) {
                    LOG.info("drain: replica of volume {} on {} not sealed ({})", id, r, e.toString());
                }
            }
        }
        // The source: the drained replica itself, else another replica.
        List<Cluster.StoreRef> sources = new ArrayList<>();
        if (reachable) {
            sources.add(self);
        }
        for (String r : replicas) {
            Cluster.StoreRef s = stores.get(r);
            if (s != null && s.up() && !r.equals(self.id())) {
                sources.add(s);
            }
        }
        Cluster.StoreRef source = null;
        IOException last = null;
        for (Cluster.StoreRef s : sources) {
            try {
                if (cluster.storeVolume(s.address(), id) != null) {
                    cluster.sealVolume(s.address(), id);
                    source = s;
                    break;
                }
            } catch (IOException e) {
                last = e;
            }
        }
        if (source == null) {
            throw new IOException("no readable replica of volume " + id + " to copy from (replicas " + replicas + ")", last);
        }
        Cluster.StoreRef target = replicaTarget(replicas, stores, perStore);
        // Copies an earlier, interrupted drain left (listed by no directory entry) are garbage: replaced.
        for (Map.Entry<String, Set<Integer>> e : held.entrySet()) {
            if (e.getValue().contains(id) && !replicas.contains(e.getKey())) {
                cluster.confirmLease(); // unlisted: it may be another raid-node's copy in flight if this one lost its lease
                LOG.info("drain: dropping the unlisted copy of volume {} on {} (an interrupted move)", id, e.getKey());
                cluster.dropVolume(stores.get(e.getKey()).address(), id);
                e.getValue().remove(id);
            }
        }
        long size = cluster.volumeSize(source.address(), id);
        Duration deadline = Duration.ofMillis(config.requestTimeoutMillis + size / (10L << 20) * 1000);
        cluster.pullVolume(target.address(), id, source.address(), deadline);
        held.computeIfAbsent(target.id(), k -> new HashSet<>()).add(id);
        VolumeIndex want = cluster.volumeIndex(source.address(), id);
        VolumeIndex got = cluster.volumeIndex(target.address(), id);
        String diff = VolumeIndex.difference(want, got, true, false);
        if (diff != null) {
            throw new IOException("the copy of volume " + id + " on " + target.id() + " differs from " + source.id() + ": " + diff);
        }
        checkpoints.reached("replica-copied");
        cluster.moveReplica(id, self.id(), target.id());
        held.get(target.id()).remove(id); // listed now: no longer a stray copy
        perStore.merge(target.id(), 1, Integer::sum);
        checkpoints.reached("replica-moved");
        if (reachable) {
            try {
                cluster.dropVolume(self.address(), id);
            } catch (IOException e) {
                LOG.info("drain: the old replica of volume {} on {} was not deleted ({})", id, self.id(), e.toString());
            }
        }
        LOG.info("volume {}: replica moved from {} to {} ({} bytes, copied from {})", id, self.id(), target.id(), size,
                source.id());
        return size;
    }

    /**
     * A store for a new replica: placeable, holding no replica of the volume; on a rack the other
     * replicas do not use when there is one; then the fewest replicas; then by id.
     */
    private static Cluster.StoreRef replicaTarget(List<String> replicas, Map<String, Cluster.StoreRef> stores,
                                                  Map<String, Integer> perStore) throws IOException {
        Set<String> racks = new HashSet<>();
        for (String r : replicas) {
            Cluster.StoreRef s = stores.get(r);
            if (s != null && !s.draining()) {
                racks.add(s.rack());
            }
        }
        Cluster.StoreRef best = null;
        for (Cluster.StoreRef s : stores.values()) {
            if (!s.placeable() || replicas.contains(s.id())) {
                continue;
            }
            if (best == null || better(s, best, racks, perStore)) {
                best = s;
            }
        }
        if (best == null) {
            throw new IOException("no store outside " + replicas + " can take a replica (every other store is down or draining)");
        }
        return best;
    }

    private static boolean better(Cluster.StoreRef s, Cluster.StoreRef best, Set<String> racks, Map<String, Integer> perStore) {
        boolean newRack = !racks.contains(s.rack());
        if (newRack != !racks.contains(best.rack())) {
            return newRack;
        }
        int a = perStore.getOrDefault(s.id(), 0);
        int b = perStore.getOrDefault(best.id(), 0);
        return a != b ? a < b : s.id().compareTo(best.id()) < 0;
    }

    /** Copies block {@code unit} of {@code stripe} from the drained store to another, verifies, swaps, deletes. */
    /**
     * The store of block {@code unit} of stripe {@code stripe} in {@code m}, or null when {@code m} has no
     * such block (a reclaim since the drain listed the maps may have left the volume fewer stripes).
     */
    static String storeOf(StripeMap m, int stripe, int unit) {
        if (m == null || stripe >= m.stripes().size() || unit >= m.stripes().get(stripe).blocks().size()) {
            return null;
        }
        return m.stripes().get(stripe).blocks().get(unit).store();
    }

    private void copyBlock(int volume, int stripe, int unit, Cluster.StoreRef self, Map<String, Cluster.StoreRef> stores)
            throws IOException {
        cluster.checkLease();
        StripeMap m = cluster.stripeMap(volume);
        if (!self.id().equals(storeOf(m, stripe, unit))) {
            return; // moved meanwhile, or the volume reclaimed into fewer stripes (its new blocks: the next drain)
        }
        StripeMap.Block old = m.stripes().get(stripe).blocks().get(unit);
        Set<String> exclude = new HashSet<>();
        m.stripes().get(stripe).blocks().forEach(b -> exclude.add(b.store()));
        Cluster.StoreRef target = BlockPlacement.choose(stores, 1, rotation++, exclude).get(0);
        String name = EncodeJob.blockName(volume, m.job(), stripe, unit, BlockFixer.generation(old.name()) + 1);
        long crc = copy(self, old, target, name);
        Cluster.BlockInfo listed = cluster.listBlocks(target.address()).get(name);
        if (crc != old.crc32c() || listed == null || listed.length() != old.length() || listed.crc32c() != old.crc32c()) {
            throw new IOException("the copy " + name + " on " + target.id() + " of block " + old.name() + " failed verification: "
                    + listed + ", want length " + old.length() + " crc32c " + old.crc32c());
        }
        checkpoints.reached("block-copied");
        cluster.replaceBlock(volume, stripe, unit, old, new StripeMap.Block(target.id(), name, old.length(), old.crc32c()));
        checkpoints.reached("block-moved");
        try {
            cluster.deleteBlock(self.address(), old.name());
        } catch (IOException e) {
            LOG.info("drain: old block {} on {} not deleted ({}); the orphan sweep will", old.name(), self.id(), e.toString());
        }
    }

    /**
     * Copies block {@code old} from {@code self} to block {@code name} on {@code target}; returns the
     * copy's CRC32C. One streamed transfer: the target pulls the block from the drained store
     * ({@link Cluster#pullBlock}), so its bytes never pass through this process; a target without
     * that operation (an older store: 400) gets it in {@code transferBytes} reads and appends.
     */
    private long copy(Cluster.StoreRef self, StripeMap.Block old, Cluster.StoreRef target, String name) throws IOException {
        if (pull) {
            Duration deadline = Duration.ofMillis(config.requestTimeoutMillis + old.length() / (10L << 20) * 1000);
            try {
                Cluster.BlockInfo got = cluster.pullBlock(target.address(), name, self.address(), old.name(), old.length(),
                        deadline);
                bytesPulled += got.length();
                if (got.length() != old.length()) {
                    throw new IOException("the copy " + name + " on " + target.id() + " of block " + old.name() + " has "
                            + got.length() + " bytes, not " + old.length());
                }
                return got.crc32c();
            } catch (Cluster.HttpStatusException e) {
                // Classified by status and error name, not by message: this process builds the pull's
                // arguments (from, source, length) itself, so a 400 BAD_ARGUMENT means a store without
                // op=pull; were it another argument, the copy below meets it again and fails with it.
                if (e.status() != 400 || !"BAD_ARGUMENT".equals(e.errorName())) {
                    throw e;
                }
                LOG.info("drain: store {} cannot pull blocks ({}); copying through this process", target.id(), e.getMessage());
                pull = false;
            }
        }
        cluster.deleteBlock(target.address(), name); // a copy an interrupted drain left
        cluster.createBlock(target.address(), name);
        CRC32C crc = new CRC32C();
        int chunk = Math.max(8, config.transferBytes);
        for (long off = 0; off < old.length(); off += chunk) {
            int n = (int) Math.min(chunk, old.length() - off);
            byte[] b = cluster.readBlock(self.address(), old.name(), off, n);
            if (b.length != n) {
                throw new IOException("block " + old.name() + " on " + self.id() + ": " + b.length + " bytes at " + off + ", not " + n);
            }
            crc.update(b);
            cluster.appendBlock(target.address(), name, b);
        }
        return crc.getValue();
    }

    /**
     * A lost raid lease stops the whole drain at once (LEASE_LOST, or this process found it lost): its
     * other items would be refused too. The next drain, under the lease again, goes on from here.
     */
    private static void stopIfLeaseLost(Exception e) throws IOException {
        if (Cluster.leaseLost(e)) {
            throw e instanceof IOException io ? io : new IOException(e);
        }
    }

    /** Block bytes copied by target pulls (not through this process). */
    public long bytesPulled() {
        return bytesPulled;
    }

    /** Copies the needle index of {@code volume} from a good holder to a new one, verifies, swaps, deletes the old copy. */
    private void moveIndex(int volume, Cluster.StoreRef self, boolean reachable, Map<String, Cluster.StoreRef> stores)
            throws IOException {
        cluster.checkLease();
        StripeMap m = cluster.stripeMap(volume);
        StripeMap.IndexBlock idx = m.index();
        if (!idx.holders().contains(self.id())) {
            return;
        }
        List<Cluster.StoreRef> sources = new ArrayList<>();
        if (reachable) {
            sources.add(self);
        }
        for (String h : idx.holders()) {
            Cluster.StoreRef s = stores.get(h);
            if (s != null && s.up() && !h.equals(self.id())) {
                sources.add(s);
            }
        }
        byte[] bytes = null;
        for (Cluster.StoreRef s : sources) {
            try {
                byte[] b = cluster.readBlock(s.address(), idx.name());
                if (b.length == idx.length() && EncodeJob.crc(b, 0, b.length) == idx.crc32c()) {
                    bytes = b;
                    break;
                }
                LOG.warn("index {} on {} fails its length or CRC32C; trying another holder", idx.name(), s.id());
            } catch (IOException e) {
                LOG.warn("index {} on {} unreadable ({}); trying another holder", idx.name(), s.id(), e.toString());
            }
        }
        if (bytes == null) {
            throw new IOException("no good copy of the needle index " + idx.name() + " among " + idx.holders());
        }
        Cluster.StoreRef target = BlockPlacement.choose(stores, 1, rotation++, new HashSet<>(idx.holders())).get(0);
        cluster.putBlock(target.address(), idx.name(), bytes);
        Cluster.BlockInfo listed = cluster.listBlocks(target.address()).get(idx.name());
        if (listed == null || listed.length() != idx.length() || listed.crc32c() != idx.crc32c()) {
            throw new IOException("the copy of index " + idx.name() + " on " + target.id() + " failed verification: " + listed);
        }
        checkpoints.reached("index-copied");
        cluster.moveIndex(volume, self.id(), target.id());
        checkpoints.reached("index-moved");
        if (reachable) {
            try {
                cluster.deleteBlock(self.address(), idx.name());
            } catch (IOException e) {
                LOG.info("drain: old index copy {} on {} not deleted ({})", idx.name(), self.id(), e.toString());
            }
        }
    }
}
