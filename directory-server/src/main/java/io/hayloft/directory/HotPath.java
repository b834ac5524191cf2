package io.hayloft.directory;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.hayloft.directory.meta.KeyAllocator;
import io.hayloft.directory.meta.MetaStore.DeleteRecord;
import io.hayloft.directory.meta.MetaStore;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.wire.Wire;
import io.hayloft.format.wire.WriteToken;
import io.hayloft.serverkit.http.HttpResponses;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The directory's part of the hot path (docs/directory-api.md "Hot path"): no per-photo state, only
 * allocator leases of key ranges, the volume map clients cache, and each volume's delete log.
 *
 * <ul>
 * <li>{@link #lease}: a range of new keys on a writable volume and the write token for it; the keys
 *     come from the {@link KeyAllocator}, which writes only when its persisted high-water mark moves.</li>
 * <li>{@link #volumeMap}: every volume with the addresses of its replicas, computed again only when the
 *     {@link MetaStore#changes()} counter moved; its version is the first 16 hex digits of the SHA-256
 *     of the map's JSON (the version left empty), this process's random nonce and the stripe-map write
 *     counter, so it changes whenever anything the map shows (or a volume's stripe map) changes, and
 *     a heartbeat that changes nothing the map shows leaves it alone.</li>
 * <li>{@link #logDeletes} / {@link #deleteLog}: the per-volume delete log in {@link MetaStore}.</li>
 * </ul>
 *
 * <p>Thread-safe: leases and the map run concurrently; appends to delete logs are serialised on the
 * {@link Directory} (they are rare, and the cold-volume counters they bump are changed under that lock).
 */
public final class HotPath {
    private static final Logger LOG = LoggerFactory.getLogger(HotPath.class);


    /** Most entries in one {@code POST /v1/volumes/{id}/deletes}. */
    public static final int MAX_DELETES = 1000;
    /** Most (and default) entries in one {@code GET /v1/volumes/{id}/deletes}. */
    public static final int MAX_DELETE_READ = 10_000;
    /** Most volume ids in a lease request's {@code exclude}. */
    public static final int MAX_EXCLUDE = 10_000;

    private final Directory directory;
    private final MetaStore meta;
    private final KeyAllocator keys;
    private final WriteToken tokens;
    private final Clock clock;
    private final String nonce = HexFormat.of().formatHex(new SecureRandom().generateSeed(8));
    private volatile CachedMap cached;

    /**
     * The volume map as last computed: the {@link MetaStore#changes()} value it was computed at or after,
     * the map, and its JSON (shared by every answer until the next change: never modify it).
     */
    public record CachedMap(long changes, Wire.VolumeMap map, byte[] json) {
    }

    HotPath(Directory directory, KeyAllocator keys, WriteToken tokens, Clock clock) {
        this.directory = directory;
        this.meta = directory.meta();
        this.keys = keys;
        this.tokens = tokens;
        this.clock = clock;
        directory.log().onLeaderReady(this::warmKeys);
    }

    /**
     * A new leader reserves its term's first key range at once, so the first lease after a failover
     * waits for no commit of its own. A failure (the leadership already lost) is left to the first lease.
     */
    private void warmKeys() {
        try {
            ChangeLog.Writer w = directory.log().begin();
            keys.warm(w.term(), hwm -> w.raiseCounters(hwm, 0));
        } catch (RuntimeException e) {
            LOG.info("no key range reserved on becoming leader (the first lease will): {}", e.toString());
        }
    }

    // ------------------------------------------------------------------ leases

    /**
     * {@code POST /v1/leases}: {@code keys} new consecutive keys on a writable volume that is none of
     * {@code exclude}, with the write token for them ("" in an open cluster). No per-key record.
     */
    public Wire.Lease lease(Wire.LeaseRequest req) {
        if (req.keys() < 1 || req.keys() > Wire.MAX_LEASE_KEYS) {
            throw Refusal.invalid("keys must be in 1.." + Wire.MAX_LEASE_KEYS + ", was " + req.keys());
        }
        if (req.exclude().size() > MAX_EXCLUDE) {
            throw Refusal.invalid("exclude holds at most " + MAX_EXCLUDE + " volume ids, was " + req.exclude().size());
        }
        Set<Integer> exclude = new HashSet<>();
        for (Integer id : req.exclude()) {
            if (id == null || id < 1) {
                throw Refusal.invalid("exclude must list volume ids >= 1, got " + id);
            }
            exclude.add(id);
        }
        directory.log().readBarrier(); // leads, and reads what every earlier leader committed
        ChangeLog.Writer w = directory.log().begin();
        VolumeInfo v = directory.pickWritable(exclude);
        long first = keys.allocate(req.keys(), w.term(), hwm -> w.raiseCounters(hwm, 0));
        long expires = clock.millis() + directory.config().tokenTtlMillis;
        String token = tokens == null ? "" : tokens.sign(v.id(), first, req.keys(), expires);
        List<String> replicas = new ArrayList<>();
        for (String id : v.replicas()) {
            StoreInfo s = meta.store(id);
            replicas.add(s == null ? id : s.address());
        }
        return new Wire.Lease(v.id(), replicas, first, req.keys(), token, expires);
    }

    // ------------------------------------------------------------------ the volume map

    /** {@code GET /v1/volume-map}: the current map and its JSON (shared; do not modify the array). */
    public CachedMap volumeMap() {
        CachedMap c = cached;
        long now = meta.changes();
        if (c != null && c.changes() == now) {
            return c;
        }
        // Read the counter before the views: a change made meanwhile moves it past `now`, so the next call recomputes.
        c = compute(now);
        cached = c;
        return c;
    }

    private CachedMap compute(long changes) {
        Map<String, StoreInfo> byId = new HashMap<>();
        for (StoreInfo s : meta.stores()) {
            byId.put(s.id(), s);
        }
        List<Wire.VolumeLocation> volumes = new ArrayList<>();
        for (VolumeInfo v : meta.volumes()) {
            List<String> up = new ArrayList<>();
            List<String> down = new ArrayList<>();
            for (String id : v.replicas()) {
                StoreInfo s = byId.get(id);
                if (s != null) {
                    (s.state().up() ? up : down).add(s.address());
                }
            }
            volumes.add(new Wire.VolumeLocation(v.id(), v.state(), up, down, meta.deleteHead(v.id())));
        }
        DirectoryConfig config = directory.config();
        Wire.VolumeMap unversioned = new Wire.VolumeMap("", directory.scheme(), config.readPolicy, config.cacheNodes,
                config.gutterNodes, volumes);
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(HttpResponses.JSON.writeValueAsBytes(unversioned));
            sha.update((nonce + ":" + meta.stripeChanges()).getBytes(StandardCharsets.UTF_8));
            String version = HexFormat.of().formatHex(sha.digest()).substring(0, 16);
            Wire.VolumeMap map = new Wire.VolumeMap(version, unversioned.scheme(), unversioned.readPolicy(),
                    unversioned.cacheNodes(), unversioned.gutterNodes(), volumes);
            return new CachedMap(changes, map, HttpResponses.JSON.writeValueAsBytes(map));
        } catch (NoSuchAlgorithmException | JsonProcessingException e) {
            throw new IllegalStateException("cannot build the volume map: " + e.getMessage(), e);
        }
    }

    // ------------------------------------------------------------------ delete logs

    /**
     * {@code POST /v1/volumes/{id}/deletes}: appends the entries whose key is not yet in the volume's
     * log, numbered from its head, in one synced batch; for an encoding or coded volume each new entry
     * adds 1 to {@code deletedPhotos} and its {@code needles} to {@code deletedNeedles} in that batch.
     * Answers every distinct key of the request with its entry (a key logged before keeps its first
     * entry), the new head, and a write token for keys {@code min..max} of the request.
     */
    public Wire.DeleteLog logDeletes(int volumeId, Wire.DeleteRequest req) {
        List<Wire.DeleteEntry> asked = req.deletes();
        if (asked.isEmpty() || asked.size() > MAX_DELETES) {
            throw Refusal.invalid("deletes must hold 1.." + MAX_DELETES + " entries, had " + asked.size());
        }
        Map<Long, Wire.DeleteEntry> byKey = new LinkedHashMap<>();
        Map<Long, Long> cookies = new HashMap<>();
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (Wire.DeleteEntry e : asked) {
            if (e.key() < 0) {
                throw Refusal.invalid("photo keys must be non-negative, was " + e.key());
            }
            if (e.needles() < 0) {
                throw Refusal.invalid("needles must be >= 0, was " + e.needles() + " for key " + e.key());
            }
            cookies.putIfAbsent(e.key(), cookie(e.cookie(), e.key()));
            byKey.putIfAbsent(e.key(), e);
            min = Math.min(min, e.key());
            max = Math.max(max, e.key());
        }
        if (max - min >= Integer.MAX_VALUE) {
            throw Refusal.invalid("the keys of one delete request must lie within " + Integer.MAX_VALUE
                    + " of each other (one write token covers them), were " + min + ".." + max);
        }
        Map<Long, DeleteRecord> answer = new LinkedHashMap<>();
        long head;
        try (Latches.Held held = directory.latches().shared(Latches.volume(volumeId))) {
            ChangeLog.Writer w = directory.log().begin();
            VolumeInfo v = directory.volume(volumeId);
            head = meta.deleteHead(volumeId);
            long next = meta.nextDeleteSeq(volumeId);
            List<DeleteRecord> fresh = new ArrayList<>();
            long needles = 0;
            for (Wire.DeleteEntry e : byKey.values()) {
                long seq = meta.deleteSeq(volumeId, e.key(), cookies.get(e.key()));
                DeleteRecord r = seq > 0 ? meta.deleteEntry(volumeId, seq) : null;
                if (r == null) {
                    r = new DeleteRecord(next + fresh.size(), e.key(), cookies.get(e.key()), e.needles());
                    fresh.add(r);
                    needles += e.needles();
                }
                answer.put(e.key(), r);
            }
            if (!fresh.isEmpty()) {
                VolumeInfo counted = v.state().cold()
                        ? v.withDeletes(v.deletedPhotos() + fresh.size(), v.deletedNeedles() + needles) : null;
                head = w.appendDeletes(volumeId, fresh, counted);
            }
        }
        String token = tokens == null ? "" : tokens.sign(volumeId, min, (int) (max - min + 1),
                clock.millis() + directory.config().tokenTtlMillis);
        return new Wire.DeleteLog(volumeId, head, answer.values().stream().map(HotPath::wire).toList(), token, false);
    }

    /** {@code GET /v1/volumes/{id}/deletes?after=S&limit=N}: entries with a sequence number above {@code after}, in order. */
    public Wire.DeleteLog deleteLog(int volumeId, long after, int limit) {
        if (after < 0) {
            throw Refusal.invalid("after must be >= 0, was " + after);
        }
        if (limit < 1 || limit > MAX_DELETE_READ) {
            throw Refusal.invalid("limit must be in 1.." + MAX_DELETE_READ + ", was " + limit);
        }
        directory.volume(volumeId);
        long head = meta.deleteHead(volumeId); // read first: entries up to it are durable and readable
        List<DeleteRecord> got = meta.deletesAfter(volumeId, after, limit + 1);
        boolean more = got.size() > limit;
        List<Wire.DeleteEntry> entries = got.subList(0, Math.min(limit, got.size())).stream().map(HotPath::wire).toList();
        long last = entries.isEmpty() ? after : entries.get(entries.size() - 1).seq();
        return new Wire.DeleteLog(volumeId, Math.max(head, last), entries, null, more);
    }

    /** The delete-log head of every volume with a replica on {@code storeId} (0 for an empty log). */
    public Map<Integer, Long> deleteHeads(String storeId) {
        Map<Integer, Long> heads = new TreeMap<>();
        for (VolumeInfo v : meta.volumes()) {
            if (v.replicas().contains(storeId)) {
                heads.put(v.id(), meta.deleteHead(v.id()));
            }
        }
        return heads;
    }

    /** Whether {@code key} is in the volume's delete log. */
    public boolean logged(int volumeId, long key) {
        return meta.anyDelete(volumeId, key);
    }

    private static Wire.DeleteEntry wire(DeleteRecord r) {
        return new Wire.DeleteEntry(r.seq(), r.key(), Directory.hex(r.cookie()), r.needles());
    }

    private static final Pattern HEX = Pattern.compile("[0-9a-fA-F]{1,16}");

    private static long cookie(String hex, long key) {
        if (hex == null || hex.isEmpty() || hex.length() > 16 || !HEX.matcher(hex).matches()) {
            throw Refusal.invalid("cookie must be 1..16 hex digits, was "
                    + (hex == null ? "none" : "'" + (hex.length() > 40 ? hex.substring(0, 40) + "..." : hex) + "'") + " for key " + key);
        }
        return Long.parseUnsignedLong(hex.toLowerCase(Locale.ROOT), 16);
    }
}
