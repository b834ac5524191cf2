package io.hayloft.directory;

import io.hayloft.directory.meta.Change;
import io.hayloft.directory.meta.KeyAllocator;
import io.hayloft.directory.meta.LogEntry;
import io.hayloft.directory.meta.MetaStore;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.StoreState;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.format.errors.ApiException;
import io.hayloft.format.errors.DirectoryErrors;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.format.wire.Wire;
import io.hayloft.format.wire.WriteToken;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The directory's logic, independent of HTTP: stores and their heartbeats, logical volumes and their
 * placement and life cycle, allocator leases, the volume map and delete logs ({@link HotPath}). It
 * keeps no per-photo state: the stores are the authority for a photo's existence, cookie and
 * deletion. State lives in the {@link MetaStore}; this class adds the rules.
 *
 * <p>Thread-safe. A change to a store or a volume holds that record's latch ({@link Latches}) from
 * reading it until its change is applied, so changes to different records are committed together;
 * changes that read records they cannot name first (placement, failing a store) hold every latch.
 * Leases run concurrently, except when one must first create a volume.
 */
public final class Directory {

    private static final Logger LOG = LoggerFactory.getLogger(Directory.class);
    /** Leases leave a volume once it is this full, so in-flight writes still fit under the limit. */
    static final double FULL_FRACTION = 0.95;

    private final DirectoryConfig config;
    private final MetaStore meta;
    private final ChangeLog log;
    private final StoreAdmin stores;
    private final Clock clock;
    private final AtomicInteger rotation = new AtomicInteger();
    private final ColdTier cold;
    private final RaidLeases raidLeases;
    private final OperatorVerbs verbs;
    private final HotPath hotPath;
    private final Namespace namespace;
    private volatile boolean shutDown;
    private final Latches latches = new Latches();

    /** A single directory: changes are applied to {@code meta} at once. */
    public Directory(DirectoryConfig config, MetaStore meta, StoreAdmin stores, Clock clock) {
        this(config, meta, new LocalChangeLog(meta, () -> config.host + ":" + config.port), stores, clock);
    }

    /** A directory whose changes go through {@code log} (a replica of a Raft group, or a single directory). */
    public Directory(DirectoryConfig config, MetaStore meta, ChangeLog log, StoreAdmin stores, Clock clock) {
        this.config = config;
        this.meta = meta;
        this.log = log;
        this.stores = stores;
        this.clock = clock;
        this.cold = new ColdTier(this);
        this.raidLeases = new RaidLeases(meta, log, clock);
        this.verbs = new OperatorVerbs(this);
        this.hotPath = new HotPath(this, new KeyAllocator(meta, config.keyRangeSize),
                config.secured() ? new WriteToken(config.clusterSecret) : null, clock);
        this.namespace = new Namespace(this, clock);
    }

    /** The S3 namespace (docs/directory-api.md "S3 namespace"). */
    public Namespace namespace() {
        return namespace;
    }

    /** Allocator leases, the volume map and the per-volume delete logs (docs/directory-api.md "Hot path"). */
    public HotPath hotPath() {
        return hotPath;
    }

    /** The operator's verbs: fail and drain a store, move a replica or an index copy. */
    public OperatorVerbs verbs() {
        return verbs;
    }

    /** The cluster's raid lease (one raid-node at a time). */
    public RaidLeases raidLeases() {
        return raidLeases;
    }

    /** Stripe maps and the encode/repair steps of erasure-coded volumes. */
    public ColdTier cold() {
        return cold;
    }

    /**
     * The scheme of the read URLs ({@code readFrom}) and cache URL prefixes this directory hands out:
     * {@code https} when its own listener serves TLS ({@code tlsKeyStore} set), since a cluster is
     * secured as a whole (docs/directory-api.md "TLS"), else {@code http}.
     */
    public String scheme() {
        return config.tls().listenerTls() ? "https" : "http";
    }

    public DirectoryConfig config() {
        return config;
    }

    public MetaStore meta() {
        return meta;
    }

    /** A write begun on the change log, fenced by a raid lease when {@code fence} is not null. */
    ChangeLog.Writer writer(LogEntry.Fence fence) {
        return fence == null ? log.begin() : log.begin(fence);
    }

    /** Where this directory's changes go (docs/operations.md "A replicated directory"). */
    public ChangeLog log() {
        return log;
    }

    // ------------------------------------------------------------------ stores

    private static final Pattern STORE_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");
    private static final Pattern HOST = Pattern.compile("[A-Za-z0-9.-]{1,253}|\\[[0-9A-Fa-f:.]{2,45}\\]");

    /** A heartbeat's fields, each in its domain: a store registered from nonsense would be handed out to clients. */
    static void checkHeartbeat(Wire.Heartbeat hb) {
        if (hb.storeId() == null || !STORE_ID.matcher(hb.storeId()).matches()) {
            throw Refusal.invalid("storeId must be 1..128 characters of [A-Za-z0-9._-], got '" + hb.storeId() + "'");
        }
        String a = hb.address();
        int colon = a == null ? -1 : a.lastIndexOf(':');
        String port = colon < 0 ? "" : a.substring(colon + 1);
        if (colon < 1 || !HOST.matcher(a.substring(0, colon)).matches() || port.isEmpty() || port.length() > 5
                || !port.chars().allMatch(Character::isDigit) || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
            throw Refusal.invalid("address must be host:port with a port in 1..65535, got '" + a + "'");
        }
        if (hb.rack() != null && (hb.rack().isEmpty() || hb.rack().length() > 128 || !hb.rack().chars().allMatch(c -> c > 32 && c < 127))) {
            throw Refusal.invalid("rack must be 1..128 printable ASCII characters without spaces, got '" + hb.rack() + "'");
        }
        if (hb.capacityBytes() < 0 || hb.freeBytes() < 0) {
            throw Refusal.invalid("capacityBytes and freeBytes must be >= 0, got " + hb.capacityBytes() + " and "
                    + hb.freeBytes());
        }
        for (Wire.VolumeReport v : hb.volumes()) {
            if (v == null || v.id() < 1 || v.sizeBytes() < 0) {
                throw Refusal.invalid("every reported volume needs an id >= 1 and a size >= 0, got " + v);
            }
        }
    }

    /** What heartbeats report and only the leader keeps: a store's free space and last heartbeat. */
    private record LiveStore(long freeBytes, long lastHeartbeatMillis) {
    }

    /**
     * Soft state: each store's free space and last heartbeat, and each volume's size as its stores last
     * reported it, kept in this replica's memory and never committed. They change with every
     * heartbeat and only inform placement, the console and the metrics; a new leader has them again
     * from the next round of heartbeats (until then it shows the values last committed, at a state
     * change). What is committed is state: a store registered, its address, rack or capacity changed,
     * a volume gone read-only.
     */
    private final ConcurrentHashMap<String, LiveStore> liveStores = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Integer, Long> liveSizes = new ConcurrentHashMap<>();

    /** {@code s} with the free space and heartbeat time of its last heartbeat here, when newer. */
    StoreInfo live(StoreInfo s) {
        LiveStore l = s == null ? null : liveStores.get(s.id());
        return l == null || l.lastHeartbeatMillis() < s.lastHeartbeatMillis() ? s
                : s.withHeartbeat(s.address(), s.capacityBytes(), l.freeBytes(), l.lastHeartbeatMillis());
    }

    /** {@code v} with the size its stores last reported here. */
    VolumeInfo live(VolumeInfo v) {
        Long size = v == null ? null : liveSizes.get(v.id());
        return size == null || size == v.sizeBytes() ? v : v.withSize(size);
    }

    /**
     * Registers a store on its first heartbeat; afterwards keeps its space and its volumes' sizes in
     * memory (soft state) and commits only what changes state: a new store, a new address, rack or
     * capacity, a volume its store reports read-only or that is full. Everything one heartbeat commits
     * is one change of the log ({@link ChangeLog.Writer#batch}); most heartbeats commit nothing.
     */
    public StoreInfo heartbeat(Wire.Heartbeat hb) {
        checkHeartbeat(hb);
        List<Object> keys = new ArrayList<>();
        keys.add(Latches.store(hb.storeId()));
        for (Wire.VolumeReport r : hb.volumes()) {
            keys.add(Latches.volume(r.id()));
        }
        try (Latches.Held held = latches.shared(keys)) {
            ChangeLog.Writer w = log.begin();
            long now = clock.millis();
            StoreInfo old = meta.store(hb.storeId());
            StoreInfo s;
            List<Change> changes = new ArrayList<>();
            if (old == null) {
                s = new StoreInfo(hb.storeId(), hb.address(), hb.rack() == null ? "default" : hb.rack(), hb.capacityBytes(),
                        hb.freeBytes(), now, StoreState.UP, 0, null);
                LOG.info("store {} registered at {} on rack {}", s.id(), s.address(), s.rack());
                changes.add(new Change.PutStore(s));
            } else {
                s = new StoreInfo(old.id(), hb.address(), hb.rack() == null ? old.rack() : hb.rack(), hb.capacityBytes(),
                        hb.freeBytes(), now, old.state(), old.failures(), old.lastError());
                if (!s.address().equals(old.address()) || !s.rack().equals(old.rack()) || s.capacityBytes() != old.capacityBytes()) {
                    changes.add(new Change.PutStore(s));
                }
            }
            long volumeSeq = 0;
            for (Wire.VolumeReport r : hb.volumes()) {
                VolumeInfo v = meta.volume(r.id());
                if (v == null && r.id() >= meta.volumeSequence()) {
                    // A volume this database never created: it was restored from a backup older than the
                    // volume. Never hand its id out again (DirectoryBackup).
                    LOG.warn("store {} holds volume {}, which this directory never created (restored from an older backup?); "
                            + "volume ids up to it will not be used", s.id(), r.id());
                    volumeSeq = Math.max(volumeSeq, r.id() + 1L);
                }
                if (v == null || !v.replicas().contains(s.id())) {
                    continue;
                }
                liveSizes.put(v.id(), r.sizeBytes());
                if (v.state() == VolumeState.WRITABLE) {
                    VolumeInfo updated = v.withSize(r.sizeBytes());
                    if (r.readOnly()) {
                        updated = updated.withState(VolumeState.READ_ONLY, "store " + s.id() + " reports its replica read-only");
                    } else if (updated.sizeBytes() >= (long) (updated.limitBytes() * FULL_FRACTION)) {
                        updated = updated.withState(VolumeState.READ_ONLY, "full: " + updated.sizeBytes() + " of " + updated.limitBytes() + " bytes");
                    }
                    if (updated.state() != VolumeState.WRITABLE) {
                        LOG.info("volume {} marked read-only: {}", v.id(), updated.reason());
                        changes.add(new Change.PutVolume(updated));
                    }
                }
            }
            if (volumeSeq > 0) {
                changes.add(new Change.RaiseCounters(0, volumeSeq));
            }
            w.batch(changes);
            liveStores.put(s.id(), new LiveStore(hb.freeBytes(), now));
            return live(meta.store(s.id()));
        }
    }

    /** Every store, with its last heartbeat's free space. */
    public List<StoreInfo> stores() {
        List<StoreInfo> out = new ArrayList<>();
        for (StoreInfo s : meta.stores()) {
            out.add(live(s));
        }
        return out;
    }

    /** An operator brings a FAILED, DRAINING or DRAINED store back to UP; its volumes stay read-only. */
    public StoreInfo restore(String storeId) {
        try (Latches.Held held = latches.shared(Latches.store(storeId))) {
            ChangeLog.Writer w = log.begin();
            StoreInfo s = meta.store(storeId);
            if (s == null) {
                throw DirectoryErrors.UNKNOWN_STORE.exception("no store " + storeId);
            }
            StoreInfo up = s.withState(StoreState.UP, 0, null);
            w.putStore(up);
            LOG.info("store {} restored by operator", storeId);
            return live(up);
        }
    }

    /**
     * Stops recording probe results: a probe that completes while the server closes must not touch
     * the database after it is closed. Waits for the changes in flight.
     */
    void shutDown() {
        try (Latches.Held held = latches.exclusive()) {
            shutDown = true;
        }
    }

    /** The health checker's verdict on one probe. */
    void probeResult(String storeId, String error, int consecutiveSuccesses) {
        if (shutDown || !log.leads()) {
            return; // the leader's work: a follower's verdict would be refused
        }
        boolean failing;
        try (Latches.Held held = latches.shared(Latches.store(storeId))) {
            if (shutDown) {
                return;
            }
            ChangeLog.Writer w = log.begin();
            StoreInfo s = meta.store(storeId);
            if (s == null) {
                return;
            }
            if (error == null) {
                if (s.state() == StoreState.FAILED && config.autoRestore && consecutiveSuccesses >= config.failureThreshold
                        && !OperatorVerbs.byOperator(s)) {
                    LOG.info("store {} passed {} probes in a row; restored", storeId, consecutiveSuccesses);
                    w.putStore(s.withState(StoreState.UP, 0, null));
                } else if (s.failures() != 0) {
                    w.putStore(s.withState(s.state(), 0, s.lastError()));
                }
                return;
            }
            failing = s.state() == StoreState.UP && s.failures() + 1 >= config.failureThreshold;
            if (!failing) {
                w.putStore(s.withState(s.state(), s.failures() + 1, error));
                return;
            }
        }
        // Failing a store seals its volumes: records not known before reading them, so every latch.
        try (Latches.Held held = latches.exclusive()) {
            if (shutDown) {
                return;
            }
            ChangeLog.Writer w = log.begin();
            StoreInfo s = meta.store(storeId);
            int failures = s == null ? 0 : s.failures() + 1;
            if (s == null || s.state() != StoreState.UP || failures < config.failureThreshold) {
                return; // changed meanwhile
            }
            LOG.warn("store {} at {} failed {} probes in a row ({}); marking it FAILED and its volumes read-only",
                    storeId, s.address(), failures, error);
            fail(w, s, failures, error);
        }
    }

    /**
     * Marks a store FAILED and each of its writable volumes READ_ONLY (the health checker's verdict, or
     * an operator's). The caller holds every latch ({@link Latches#exclusive}).
     */
    StoreInfo fail(ChangeLog.Writer w, StoreInfo s, int failures, String error) {
        StoreInfo failed = s.withState(StoreState.FAILED, failures, error);
        w.putStore(failed);
        sealVolumesOn(w, s.id(), "store " + s.id() + " failed: " + error);
        return failed;
    }

    /** Marks every writable volume with a replica on {@code storeId} READ_ONLY with {@code reason}; the caller holds every latch. */
    void sealVolumesOn(ChangeLog.Writer w, String storeId, String reason) {
        for (VolumeInfo v : meta.volumes()) {
            if (v.state() == VolumeState.WRITABLE && v.replicas().contains(storeId)) {
                w.putVolume(v.withState(VolumeState.READ_ONLY, reason));
                LOG.info("volume {} marked read-only: {}", v.id(), reason);
            }
        }
    }

    // ------------------------------------------------------------------ volumes

    /** Every logical volume, with the sizes its stores last reported. */
    public List<VolumeInfo> volumes() {
        List<VolumeInfo> out = new ArrayList<>();
        for (VolumeInfo v : meta.volumes()) {
            out.add(live(v));
        }
        return out;
    }

    /**
     * A logical volume, with the size its stores last reported to this leader (soft state; the
     * committed size until a store reports one). A change computed from it commits that size too.
     */
    public VolumeInfo volume(int id) {
        VolumeInfo v = meta.volume(id);
        if (v == null) {
            throw DirectoryErrors.UNKNOWN_VOLUME.exception("no logical volume " + id);
        }
        return live(v);
    }

    /** The latches that order the directory's read-modify-writes. */
    Latches latches() {
        return latches;
    }

    public VolumeInfo markReadOnly(int id, String reason) {
        try (Latches.Held held = latches.shared(Latches.volume(id))) {
            ChangeLog.Writer w = log.begin();
            VolumeInfo v = volume(id);
            if (v.state() != VolumeState.WRITABLE) {
                return live(v);
            }
            VolumeInfo ro = v.withState(VolumeState.READ_ONLY, reason == null || reason.isBlank() ? "operator" : reason);
            w.putVolume(ro);
            LOG.info("volume {} marked read-only: {}", id, ro.reason());
            return live(ro);
        }
    }

    /**
     * Creates {@code count} logical volumes, each on {@code replication} distinct stores (distinct
     * racks when possible). A volume is recorded before its replicas are created; if any replica
     * fails it stays recorded, read-only with the reason, so nothing is orphaned silently.
     */
    public List<VolumeInfo> createVolumes(int count) {
        if (count < 1 || count > 100) {
            throw Refusal.invalid("count must be in 1..100, was " + count);
        }
        try (Latches.Held held = latches.exclusive()) {
            return create(count);
        }
    }

    /** Creates the volumes; the caller holds every latch (placement reads every volume and store). */
    private List<VolumeInfo> create(int count) {
        ChangeLog.Writer w = log.begin();
        List<VolumeInfo> created = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Map<String, Integer> perStore = new HashMap<>();
            for (VolumeInfo v : meta.volumes()) {
                for (String s : v.replicas()) {
                    perStore.merge(s, 1, Integer::sum);
                }
            }
            List<String> chosen = Placement.choose(stores(), perStore, config.replication);
            if (chosen.isEmpty()) {
                long up = meta.stores().stream().filter(s -> s.state() == StoreState.UP).count();
                throw DirectoryErrors.NO_PLACEMENT.exception("a volume needs " + config.replication
                        + " healthy stores, " + up + " are up");
            }
            int id = (int) meta.volumeSequence();
            w.raiseCounters(0, id + 1L);
            VolumeInfo v = new VolumeInfo(id, VolumeState.WRITABLE, chosen, 0, config.volumeLimitBytes, clock.millis(), null);
            w.putVolume(v.withState(VolumeState.READ_ONLY, "being created"));
            List<CompletableFuture<Void>> calls = new ArrayList<>();
            for (String storeId : chosen) {
                calls.add(stores.createVolume(meta.store(storeId).address(), id));
            }
            String failure = null;
            List<String> made = new ArrayList<>();
            for (int c = 0; c < calls.size(); c++) {
                try {
                    calls.get(c).get(config.probeTimeoutMillis * (HttpStoreAdmin.CREATE_FACTOR + 1), TimeUnit.MILLISECONDS);
                    made.add(chosen.get(c));
                } catch (Exception e) {
                    Throwable t = e.getCause() == null ? e : e.getCause();
                    failure = "creating the replica on store " + chosen.get(c) + " failed: " + t.getMessage();
                }
            }
            if (failure != null) {
                // Only the replicas that were made: the health checker probes a store's volumes, and a
                // replica that was never created (the store died or lost power meanwhile) would fail
                // that store for ever (found by the life-cycle checker, seed 3003 step 49).
                w.putVolume(v.withReplicas(made).withState(VolumeState.READ_ONLY, failure));
                throw DirectoryErrors.NO_PLACEMENT.exception("volume " + id + ": " + failure);
            }
            w.putVolume(v);
            LOG.info("created logical volume {} on stores {}", id, chosen);
            created.add(v);
        }
        return created;
    }

    // ------------------------------------------------------------------ writable volumes

    /**
     * A writable volume by rotation, none of {@code exclude}: all its replicas' stores UP and it is
     * less than {@value #FULL_FRACTION} full. Volumes are created first when fewer than
     * {@code minWritableVolumes} are writable (excluded ones count: a client's exclusion alone never
     * creates volumes).
     *
     * @throws ApiException NO_WRITABLE_VOLUME when there is none outside {@code exclude}
     */
    VolumeInfo pickWritable(Set<Integer> exclude) {
        List<VolumeInfo> writable = writableVolumes();
        if (writable.size() < config.minWritableVolumes) {
            try (Latches.Held held = latches.exclusive()) {
                writable = writableVolumes();
                int missing = config.minWritableVolumes - writable.size();
                if (missing > 0) {
                    try {
                        create(Math.min(missing, 100));
                    } catch (ApiException e) {
                        if (writable.isEmpty()) {
                            throw DirectoryErrors.NO_WRITABLE_VOLUME.exception("no writable volume and none can be created: " + e.getMessage());
                        }
                        LOG.warn("could not create a volume ({}); continuing with {} writable", e.getMessage(), writable.size());
                    }
                    writable = writableVolumes();
                }
            }
        }
        if (writable.isEmpty()) {
            throw DirectoryErrors.NO_WRITABLE_VOLUME.exception("no writable logical volume");
        }
        if (!exclude.isEmpty()) {
            int all = writable.size();
            writable = writable.stream().filter(v -> !exclude.contains(v.id())).toList();
            if (writable.isEmpty()) {
                throw DirectoryErrors.NO_WRITABLE_VOLUME.exception("no writable logical volume outside the " + exclude.size()
                        + " excluded; the " + all + " writable ones are all excluded");
            }
        }
        return writable.get(Math.floorMod(rotation.getAndIncrement(), writable.size()));
    }

    /** The writable volumes as of {@code changes} ({@link MetaStore#changes}). */
    private record Writable(long changes, List<VolumeInfo> volumes) {
    }

    private volatile Writable writable = new Writable(-1, List.of());

    /**
     * The volumes a lease may use: writable, not full, every replica's store UP. Worked out again only
     * when the database's records changed ({@link MetaStore#changes}), not on every lease: a lease
     * read every volume and store record before. A volume whose reported size makes it full is
     * committed read-only by that heartbeat, which moves the counter, so the soft sizes need no
     * counter of their own.
     */
    private List<VolumeInfo> writableVolumes() {
        Writable w = writable;
        long changes = meta.changes(); // read before the records: a change meanwhile leaves an older mark, worked out again next time
        if (w.changes() == changes) {
            return w.volumes();
        }
        Map<String, StoreInfo> byId = storesById();
        List<VolumeInfo> out = new ArrayList<>();
        for (VolumeInfo v : volumes()) {
            if (v.state() == VolumeState.WRITABLE && v.sizeBytes() < (long) (v.limitBytes() * FULL_FRACTION) && v.replicas().stream()
                    .allMatch(id -> byId.containsKey(id) && byId.get(id).state() == StoreState.UP)) {
                out.add(v);
            }
        }
        List<VolumeInfo> list = List.copyOf(out);
        writable = new Writable(changes, list);
        return list;
    }

    // ------------------------------------------------------------------ helpers

    private Map<String, StoreInfo> storesById() {
        Map<String, StoreInfo> m = new HashMap<>();
        for (StoreInfo s : meta.stores()) {
            m.put(s.id(), s);
        }
        return m;
    }

    static String hex(long cookie) {
        return PhotoId.hex16(cookie);
    }
}
