package io.hayloft.directory.meta;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.directory.meta.ColumnFamilies.Family;
import io.hayloft.format.directory.ReclaimPlan;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.wire.StripeMap;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.rocksdb.Checkpoint;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.DBOptions;
import org.rocksdb.FlushOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The directory's durable state in one RocksDB database, with thirteen column families, opened and
 * looked up by name through {@link ColumnFamilies} (which lists them and what each holds; keys and
 * values byte by byte in {@code docs/formats.md}). The five {@code s3-*} families are the S3
 * namespace, read and written through {@link NamespaceStore}.
 *
 * <p>A volume's delete-log head (its highest sequence number, 0 for an empty log) is not stored: it is
 * derived when the database opens by seeking the last {@code deletes} key of each volume, and kept in
 * memory after each append. A new entry is numbered {@code max(head, delete-floor) + 1}: a restore from
 * a backup raises {@code delete-floor} past every sequence number the lost directory may have handed
 * out after the backup ({@link #raiseDeleteFloor}), so a store that applied such an entry never takes
 * a new entry for one it has already applied (absent: 0). Entries of a volume and their index records are written in one synced
 * batch ({@link #appendDeletes}), with the volume record when its delete counters change.
 *
 * <p>Every write is synced to the write-ahead log before it returns ({@code sync=true}), so
 * what the directory acknowledged survives a kill -9. Opening is strict: a missing database is an
 * error unless {@code create} is true (the {@code stripes}, {@code reclaims}, {@code deletes},
 * {@code delete-keys} and {@code s3-*} families are added, empty, to a database of format 1 that predates them), and a database of another format, or one RocksDB reports
 * corrupt, is an error, never a silent empty cluster.
 *
 * <p>Thread-safe: RocksDB is, and the store and volume views change together with their synced writes
 * under one lock. Read-modify-write sequences of callers must synchronise themselves.
 * Native handles are closed by {@link #close()}, idempotently.
 */
public final class MetaStore implements AutoCloseable {

    public static final int FORMAT = 1;

    private static final byte[] FORMAT_KEY = utf8("format");
    private static final byte[] CLUSTER_KEY = utf8("cluster-id");
    private static final byte[] KEY_HWM = utf8("key-hwm");
    private static final byte[] VOLUME_SEQ = utf8("volume-seq");
    private static final byte[] DELETE_FLOOR = utf8("delete-floor");
    /** Size of a {@code deletes} value: photo key, cookie, needle count. */
    public static final int DELETE_ENTRY_SIZE = 8 + 8 + 4;

    static {
        RocksDB.loadLibrary();
    }

    private final ObjectMapper json = new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    private final Path path;
    private final DBOptions dbOptions;
    private final ColumnFamilyOptions cfOptions;
    private final WriteOptions sync;
    private final RocksDB db;
    private final ColumnFamilies families;
    private final ColumnFamilyHandle meta;
    private final ColumnFamilyHandle stores;
    private final ColumnFamilyHandle volumes;
    private final ColumnFamilyHandle stripes;
    private final ColumnFamilyHandle reclaims;
    private final ColumnFamilyHandle deletes;
    private final ColumnFamilyHandle deleteKeys;
    private final NamespaceStore namespace;
    private volatile String clusterId;
    /** Delete-log head of each volume with a non-empty log; written under {@link #viewLock} after its batch. */
    private final ConcurrentHashMap<Integer, Long> deleteHeads = new ConcurrentHashMap<>();
    private volatile long deleteFloor;
    /**
     * Grows after every change of the store, volume, stripe-map and delete-log views (after the view is
     * updated), so a reader that saw a value computed from views at least that new: the volume map's cache key.
     */
    private final AtomicLong changes = new AtomicLong();
    /** Grows after every stripe-map write: a change the volume map does not show but its version covers. */
    private final AtomicLong stripeChanges = new AtomicLong();
    /**
     * In-memory views of the stores and volumes families, loaded at open and updated after each
     * synced write under {@link #viewLock}: leases and the volume map read them on every call, and they are
     * few (thousands at most), so no request parses them from RocksDB.
     */
    private final ConcurrentSkipListMap<String, StoreInfo> storeView = new ConcurrentSkipListMap<>();
    private final ConcurrentSkipListMap<Integer, VolumeInfo> volumeView = new ConcurrentSkipListMap<>();
    private final Object viewLock = new Object();
    private boolean closed;
    /** Writes without a sync of their own: an applied entry's batch, synced with its group ({@link #syncLog}). */
    private final WriteOptions unsynced = new WriteOptions().setSync(false);
    /**
     * The batch of the log entry being applied on this thread ({@link #applyEntry}), or null: every write
     * of a change goes into it, so an entry's records and its applied index reach RocksDB in one write.
     */
    private final ThreadLocal<WriteBatch> entry = new ThreadLocal<>();
    /** The in-memory view updates of the entry being applied on this thread, published once its batch is written. */
    private final ThreadLocal<List<Runnable>> entryViews = new ThreadLocal<>();
    private final boolean syncWrites;

    private MetaStore(Path path, boolean create, boolean syncWrites) {
        this.path = path;
        this.syncWrites = syncWrites;
        boolean exists = Files.exists(path.resolve("CURRENT"));
        if (!exists && !create) {
            throw new MetaStoreException("no directory database at " + path
                    + " (expected a RocksDB database there); start with --init to create a new cluster");
        }
        if (!exists && Files.exists(path) && !isEmptyDir(path)) {
            throw new MetaStoreException(path + " exists and is not a directory database (no CURRENT file); refusing to create one over it");
        }
        cfOptions = new ColumnFamilyOptions();
        dbOptions = new DBOptions().setCreateIfMissing(create).setCreateMissingColumnFamilies(true)
                .setParanoidChecks(true);
        sync = new WriteOptions().setSync(syncWrites);
        List<ColumnFamilyDescriptor> descriptors = ColumnFamilies.descriptors(cfOptions);
        List<ColumnFamilyHandle> handles = new ArrayList<>();
        try {
            Files.createDirectories(path);
            db = RocksDB.open(dbOptions, path.toString(), descriptors, handles);
        } catch (RocksDBException | IOException e) {
            closeOptions();
            throw new MetaStoreException("cannot open the directory database at " + path + ": " + e.getMessage(), e);
        }
        families = new ColumnFamilies(handles);
        meta = families.handle(Family.DEFAULT);
        stores = families.handle(Family.STORES);
        volumes = families.handle(Family.VOLUMES);
        // Family.PHOTOS is the legacy photos family: opened, never used.
        stripes = families.handle(Family.STRIPES);
        reclaims = families.handle(Family.RECLAIMS);
        deletes = families.handle(Family.DELETES);
        deleteKeys = families.handle(Family.DELETE_KEYS);
        namespace = new NamespaceStore(db, families, this::batch, json, path);
        try {
            byte[] format = db.get(meta, FORMAT_KEY);
            if (format == null) {
                if (exists) {
                    throw new MetaStoreException(path + " is a RocksDB database without a Hayloft format record; not a directory database");
                }
                try (WriteBatch b = new WriteBatch()) {
                    b.put(meta, FORMAT_KEY, ByteBuffer.allocate(4).putInt(FORMAT).array());
                    b.put(meta, CLUSTER_KEY, utf8(UUID.randomUUID().toString()));
                    db.write(sync, b);
                }
            } else if (format.length != 4 || ByteBuffer.wrap(format).getInt() != FORMAT) {
                throw new MetaStoreException(path + ": directory database format "
                        + (format.length == 4 ? ByteBuffer.wrap(format).getInt() : "unreadable") + ", this directory reads format " + FORMAT);
            }
            clusterId = new String(db.get(meta, CLUSTER_KEY), StandardCharsets.UTF_8);
            scan(stores, (k, v) -> {
                StoreInfo s = fromJson(v, StoreInfo.class);
                storeView.put(s.id(), s);
            });
            scan(volumes, (k, v) -> {
                VolumeInfo vi = fromJson(v, VolumeInfo.class);
                volumeView.put(vi.id(), vi);
            });
            deleteFloor = getLong(DELETE_FLOOR, 0);
            for (int volume : volumeView.keySet()) {
                long head = lastDeleteSeq(volume);
                if (head > 0) {
                    deleteHeads.put(volume, head);
                }
            }
        } catch (RocksDBException | RuntimeException e) {
            close();
            throw e instanceof MetaStoreException m ? m : new MetaStoreException("cannot read " + path + ": " + e.getMessage(), e);
        }
    }

    /**
     * Opens the database at {@code path}.
     *
     * @param create create a new, empty cluster database if none is there
     * @throws MetaStoreException when it is missing (and create is false), corrupt or of another format
     */
    public static MetaStore open(Path path, boolean create) {
        return new MetaStore(path, create, true);
    }

    /**
     * As {@link #open(Path, boolean)}; with {@code sync} false, writes are not synced one by one (a
     * directory configured {@code fsync: never}: a power cut may lose acknowledged changes).
     */
    public static MetaStore open(Path path, boolean create, boolean sync) {
        return new MetaStore(path, create, sync);
    }

    /**
     * As {@link #open(Path, boolean)}, for a replica of a Raft group: writes are not synced one by one,
     * because the Raft log that they are applied from is (a write lost with the machine's power is
     * applied again from the log, after the {@link #appliedIndex} that was lost with it).
     */
    public static MetaStore openReplica(Path path, boolean create) {
        return new MetaStore(path, create, false);
    }

    /** What {@link #inspect} finds in a database. */
    public record Inspection(String clusterId, long keyHighWaterMark, long volumeSequence, long stores, long volumes,
                             long deleteLogEntries) {
    }

    /**
     * Opens the database at {@code path} read-only (RocksDB writes nothing there) and reads its
     * identity and counters: a check that a backup opens, and what it holds.
     *
     * @throws MetaStoreException when it is not a readable directory database of this format
     */
    public static Inspection inspect(Path path) {
        if (!Files.exists(path.resolve("CURRENT"))) {
            throw new MetaStoreException("no directory database at " + path + " (no CURRENT file)");
        }
        List<ColumnFamilyHandle> hs = new ArrayList<>();
        try (ColumnFamilyOptions cf = new ColumnFamilyOptions(); DBOptions o = new DBOptions().setParanoidChecks(true);
             Options listing = new Options()) {
            List<ColumnFamilyDescriptor> ds = new ArrayList<>();
            for (byte[] name : RocksDB.listColumnFamilies(listing, path.toString())) {
                ds.add(new ColumnFamilyDescriptor(name, cf));
            }
            try (RocksDB ro = RocksDB.openReadOnly(o, path.toString(), ds, hs)) {
                Map<String, ColumnFamilyHandle> byName = new HashMap<>();
                for (int i = 0; i < ds.size(); i++) {
                    byName.put(new String(ds.get(i).getName(), StandardCharsets.UTF_8), hs.get(i));
                }
                ColumnFamilyHandle m = byName.get(Family.DEFAULT.onDisk());
                byte[] format = ro.get(m, FORMAT_KEY);
                if (format == null || format.length != 4 || ByteBuffer.wrap(format).getInt() != FORMAT) {
                    throw new MetaStoreException(path + " is not a directory database of format " + FORMAT);
                }
                byte[] hwm = ro.get(m, KEY_HWM);
                byte[] seq = ro.get(m, VOLUME_SEQ);
                return new Inspection(new String(ro.get(m, CLUSTER_KEY), StandardCharsets.UTF_8),
                        hwm == null ? 1 : ByteBuffer.wrap(hwm).getLong(), seq == null ? 1 : ByteBuffer.wrap(seq).getLong(),
                        count(ro, byName.get(Family.STORES.onDisk())), count(ro, byName.get(Family.VOLUMES.onDisk())),
                        count(ro, byName.get(Family.DELETES.onDisk())));
            } finally {
                for (ColumnFamilyHandle h : hs) {
                    h.close();
                }
            }
        } catch (RocksDBException e) {
            throw new MetaStoreException("cannot read the directory database at " + path + ": " + e.getMessage(), e);
        }
    }

    private static long count(RocksDB db, ColumnFamilyHandle cf) throws RocksDBException {
        if (cf == null) {
            return 0;
        }
        long n = 0;
        try (RocksIterator it = db.newIterator(cf)) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                n++;
            }
            it.status();
        }
        return n;
    }

    public Path path() {
        return path;
    }

    /** The S3 namespace: the {@code s3-*} families. */
    public NamespaceStore namespace() {
        return namespace;
    }

    /** A random id chosen when the database was created (in a Raft group: the group's first leader's, {@link #adoptClusterId}). */
    public String clusterId() {
        return clusterId;
    }

    private static final byte[] RAFT_CLUSTER = utf8("raft-cluster");
    private static final byte[] RAFT_APPLIED = utf8("raft-applied");

    /**
     * Takes {@code id} as the cluster id unless this database already took one this way (record
     * {@code raft-cluster}): the first entry of a new Raft group gives every replica its leader's id.
     */
    public synchronized void adoptClusterId(String id) {
        if (get(meta, RAFT_CLUSTER) != null) {
            return;
        }
        try (Batch b = batch()) {
            b.put(meta, CLUSTER_KEY, utf8(id));
            b.put(meta, RAFT_CLUSTER, utf8(id));
            b.write();
            published(() -> clusterId = id);
        } catch (RocksDBException e) {
            throw new MetaStoreException("cannot write the cluster id to " + path + ": " + e.getMessage(), e);
        }
    }

    /** Whether this database took its cluster id from a Raft group's first entry. */
    public boolean clusterAdopted() {
        return get(meta, RAFT_CLUSTER) != null;
    }

    /**
     * The Raft log index and term of the last entry applied wholly to this database ({@code raft-applied}:
     * two 8-byte longs first), {0, 0} when none: written with each applied entry, so after a crash the
     * entries above it are applied again and those at or below it are skipped. The parts of a pack
     * applied beyond it: {@link #partlyApplied}.
     */
    public long[] appliedIndex() {
        byte[] v = get(meta, RAFT_APPLIED);
        if (v == null) {
            return new long[] {0, 0};
        }
        ByteBuffer b = ByteBuffer.wrap(v);
        return new long[] {b.getLong(), b.getLong()};
    }

    /**
     * The pack applied in part ({@code raft-applied} of 40 bytes: after the last whole entry's index and
     * term, the pack's index, term and the number of its entries applied), as {index, term, parts};
     * null when every entry at or below {@link #appliedIndex} is applied wholly and none above it.
     */
    public long[] partlyApplied() {
        byte[] v = get(meta, RAFT_APPLIED);
        if (v == null || v.length != 40) {
            return null;
        }
        ByteBuffer b = ByteBuffer.wrap(v, 16, 24);
        return new long[] {b.getLong(), b.getLong(), b.getLong()};
    }

    /** Records that the entry at {@code index} of Raft term {@code term} is applied. */
    public void setAppliedIndex(long index, long term) {
        put(meta, RAFT_APPLIED, ByteBuffer.allocate(16).putLong(index).putLong(term).array());
    }

    /** Forgets the applied Raft index (a restored backup starts a new group's log). */
    public void clearAppliedIndex() {
        deleteSetting("raft-applied");
        deleteSetting("raft-cluster");
    }

    /** One column family's content: its number of records and the SHA-256 of its keys and values in order. */
    public record FamilyDigest(long entries, String sha256) {
    }

    /**
     * A digest of every column family (records in key order; the default family without
     * {@code raft-applied}, which says how far this replica got rather than what it holds): two
     * replicas hold the same state exactly when their digests are equal.
     */
    public Map<String, FamilyDigest> digest() {
        Map<String, FamilyDigest> out = new LinkedHashMap<>();
        for (Family family : Family.values()) {
            MessageDigest sha;
            try {
                sha = MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
            long[] n = {0};
            MessageDigest d = sha;
            scan(families.handle(family), (k, v) -> {
                if (Arrays.equals(k, RAFT_APPLIED)) {
                    return;
                }
                d.update(ByteBuffer.allocate(8).putInt(k.length).putInt(v.length).array());
                d.update(k);
                d.update(v);
                n[0]++;
            });
            out.put(family.onDisk(), new FamilyDigest(n[0], HexFormat.of().formatHex(d.digest())));
        }
        return out;
    }

    /**
     * Replaces every record of this database with those of the checkpoint at {@code checkpoint} (a
     * replica installing its leader's snapshot), and reloads the in-memory views: readers see the old
     * state or the new one. The checkpoint must be a directory database of this format.
     */
    public void replaceContents(Path checkpoint) {
        // A snapshot of a replica that predates some families (the s3-* ones) lacks them: they become empty here.
        List<String> present = new ArrayList<>();
        try (Options listing = new Options()) {
            for (byte[] n : RocksDB.listColumnFamilies(listing, checkpoint.toString())) {
                present.add(new String(n, StandardCharsets.UTF_8));
            }
        } catch (RocksDBException e) {
            throw new MetaStoreException("cannot read the snapshot " + checkpoint + ": " + e.getMessage(), e);
        }
        Family[] names = Family.values();
        List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
        int[] source = new int[names.length];
        for (int i = 0; i < names.length; i++) {
            String n = names[i].onDisk();
            source[i] = present.contains(n) ? descriptors.size() : -1;
            if (source[i] >= 0) {
                descriptors.add(new ColumnFamilyDescriptor(names[i].onDiskBytes(), cfOptions));
            }
        }
        List<ColumnFamilyHandle> from = new ArrayList<>();
        synchronized (viewLock) {
            synchronized (this) {
                try (DBOptions o = new DBOptions(); RocksDB src = RocksDB.openReadOnly(o, checkpoint.toString(), descriptors, from)) {
                    try {
                        for (int i = 0; i < names.length; i++) {
                            ColumnFamilyHandle to = families.handle(names[i]);
                            try (RocksIterator it = db.newIterator(to)) {
                                it.seekToFirst();
                                if (it.isValid()) {
                                    byte[] first = it.key();
                                    it.seekToLast();
                                    byte[] last = Arrays.copyOf(it.key(), it.key().length + 1);
                                    db.deleteRange(to, first, last);
                                }
                            }
                            if (source[i] < 0) {
                                continue;
                            }
                            try (RocksIterator it = src.newIterator(from.get(source[i])); WriteBatch b = new WriteBatch()) {
                                for (it.seekToFirst(); it.isValid(); it.next()) {
                                    b.put(to, it.key(), it.value());
                                    if (b.count() >= 10_000) {
                                        db.write(sync, b);
                                        b.clear();
                                    }
                                }
                                it.status();
                                db.write(sync, b);
                            }
                        }
                    } finally {
                        for (ColumnFamilyHandle h : from) {
                            h.close();
                        }
                    }
                    try (FlushOptions f = new FlushOptions().setWaitForFlush(true)) {
                        db.flush(f, families.all());
                    }
                } catch (RocksDBException e) {
                    throw new MetaStoreException("cannot load the snapshot " + checkpoint + " into " + path + ": " + e.getMessage(), e);
                }
                clusterId = new String(get(meta, CLUSTER_KEY), StandardCharsets.UTF_8);
                // Readers of the views (a follower's volume map) never see them empty: new records are put
                // first, then those the snapshot does not hold are removed.
                Map<String, StoreInfo> freshStores = new HashMap<>();
                scan(stores, (k, v) -> {
                    StoreInfo st = fromJson(v, StoreInfo.class);
                    freshStores.put(st.id(), st);
                });
                storeView.putAll(freshStores);
                storeView.keySet().retainAll(freshStores.keySet());
                Map<Integer, VolumeInfo> freshVolumes = new HashMap<>();
                scan(volumes, (k, v) -> {
                    VolumeInfo vi = fromJson(v, VolumeInfo.class);
                    freshVolumes.put(vi.id(), vi);
                });
                volumeView.putAll(freshVolumes);
                volumeView.keySet().retainAll(freshVolumes.keySet());
                deleteFloor = getLong(DELETE_FLOOR, 0);
                Map<Integer, Long> freshHeads = new HashMap<>();
                for (int volume : freshVolumes.keySet()) {
                    long head = lastDeleteSeq(volume);
                    if (head > 0) {
                        freshHeads.put(volume, head);
                    }
                }
                deleteHeads.putAll(freshHeads);
                deleteHeads.keySet().retainAll(freshHeads.keySet());
                stripeChanges.incrementAndGet();
                changes.incrementAndGet();
            }
        }
    }

    // ----- counters -----

    /** The persisted key high-water mark: every key below it may have been handed out. */
    public synchronized long keyHighWaterMark() {
        return getLong(KEY_HWM, 1);
    }

    /** Persists a new key high-water mark (synced) before any key below it is handed out. */
    public synchronized void setKeyHighWaterMark(long hwm) {
        putLong(KEY_HWM, hwm);
    }

    /** Allocates the next logical volume id, durably. */
    public synchronized int nextVolumeId() {
        long next = getLong(VOLUME_SEQ, 1);
        putLong(VOLUME_SEQ, next + 1);
        return (int) next;
    }

    /** The next logical volume id {@link #nextVolumeId()} will hand out. */
    public synchronized long volumeSequence() {
        return getLong(VOLUME_SEQ, 1);
    }

    /**
     * Raises the key high-water mark to at least {@code keyHwm} and the volume sequence to at least
     * {@code volumeSeq}, in one synced batch; never lowers either. Used after a restore from a backup
     * (keys and volume ids handed out after the backup must not be handed out again) and when a store
     * reports a volume id this database never created.
     */
    public synchronized void raiseCounters(long keyHwm, long volumeSeq) {
        if (volumeSeq > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("volume sequence " + volumeSeq + " is beyond the largest volume id " + Integer.MAX_VALUE);
        }
        try (Batch b = batch()) {
            b.put(meta, KEY_HWM, ByteBuffer.allocate(8).putLong(Math.max(keyHwm, keyHighWaterMark())).array());
            b.put(meta, VOLUME_SEQ, ByteBuffer.allocate(8).putLong(Math.max(volumeSeq, volumeSequence())).array());
            b.write();
        } catch (RocksDBException e) {
            throw new MetaStoreException("cannot raise the counters of " + path + ": " + e.getMessage(), e);
        }
    }

    /**
     * Writes a consistent, openable copy of the whole database into {@code target} with RocksDB's
     * {@link Checkpoint}: every write acknowledged before the call is in it (the memtable is flushed
     * first); table files are hard links when {@code target} is on the same file system (they are
     * immutable), copies otherwise. {@code target} must not exist; its parent must.
     *
     * @throws MetaStoreException when RocksDB cannot write it (the message says why)
     */
    public void checkpoint(Path target) {
        try (Checkpoint c = Checkpoint.create(db)) {
            c.createCheckpoint(target.toString());
        } catch (RocksDBException e) {
            throw new MetaStoreException("cannot write a checkpoint of " + path + " to " + target + ": " + e.getMessage(), e);
        }
    }

    /** A named record of the default family ({@code raid-lease}); null when absent. */
    public byte[] setting(String name) {
        return get(meta, utf8(name));
    }

    /** Deletes a named record of the default family, synced; nothing if it is absent. */
    public void deleteSetting(String name) {
        try (Batch b = batch()) {
            b.delete(meta, utf8(name));
            b.write();
        } catch (RocksDBException e) {
            throw new MetaStoreException("cannot delete " + name + " from " + path + ": " + e.getMessage(), e);
        }
    }

    /** Writes a named record of the default family, synced. */
    public void putSetting(String name, byte[] value) {
        put(meta, utf8(name), value);
    }

    // ----- request ids: the answers of changes made for a client's request -----

    /**
     * Answers kept for retries: the newest {@value} request ids of the default family. A client retries
     * a request within seconds to a minute; at a thousand changes a second this keeps the last
     * hundred seconds and more, at a few hundred bytes each.
     */
    public static final long RETAINED_REQUESTS = 100_000;
    private static final byte[] REQUEST_SEQ = utf8("request-seq");
    private static final String REQUEST = "request/";
    private static final String REQUEST_AT = "request-at/";

    /** The answer recorded for request id {@code id}, or null when none is (never applied, or forgotten). */
    public String requestAnswer(String id) {
        byte[] v = get(meta, utf8(REQUEST + id));
        return v == null ? null : new String(v, 8, v.length - 8, StandardCharsets.UTF_8);
    }

    /**
     * Records {@code id}'s answer with the change it answers (in the entry's batch when one is being
     * applied): {@code request/<id>} holds the record's sequence number (8 bytes, big-endian) then the
     * answer in UTF-8; {@code request-at/<sequence, 8 bytes big-endian>} the id, so the oldest is found
     * and forgotten once {@link #RETAINED_REQUESTS} newer ones are recorded; {@code request-seq} the
     * last sequence number. Every replica applies the same entries in the same order, so every replica
     * forgets the same ids.
     */
    public void recordRequest(String id, String answer) {
        long seq = getLong(REQUEST_SEQ, 0) + 1;
        byte[] a = utf8(answer);
        try (Batch b = batch()) {
            b.put(meta, utf8(REQUEST + id), ByteBuffer.allocate(8 + a.length).putLong(seq).put(a).array());
            b.put(meta, requestAt(seq), utf8(id));
            b.put(meta, REQUEST_SEQ, ByteBuffer.allocate(8).putLong(seq).array());
            if (seq > RETAINED_REQUESTS) {
                byte[] at = requestAt(seq - RETAINED_REQUESTS);
                byte[] old = get(meta, at);
                if (old != null) {
                    b.delete(meta, utf8(REQUEST + new String(old, StandardCharsets.UTF_8)));
                    b.delete(meta, at);
                }
            }
            b.write();
        } catch (RocksDBException e) {
            throw new MetaStoreException("cannot record request " + id + " in " + path + ": " + e.getMessage(), e);
        }
    }

    private static byte[] requestAt(long seq) {
        byte[] p = utf8(REQUEST_AT);
        return ByteBuffer.allocate(p.length + 8).put(p).putLong(seq).array();
    }

    // ----- stores -----

    public void putStore(StoreInfo s) {
        synchronized (viewLock) {
            put(stores, utf8(s.id()), toJson(s));
            published(() -> {
                storeView.put(s.id(), s);
                changes.incrementAndGet();
            });
        }
    }

    public StoreInfo store(String id) {
        return storeView.get(id);
    }

    /** Every store, by id, from the in-memory view (no RocksDB read). */
    public List<StoreInfo> stores() {
        return new ArrayList<>(storeView.values());
    }

    // ----- volumes -----

    public void putVolume(VolumeInfo v) {
        synchronized (viewLock) {
            put(volumes, intKey(v.id()), toJson(v));
            published(() -> {
                volumeView.put(v.id(), v);
                changes.incrementAndGet();
            });
        }
    }

    public VolumeInfo volume(int id) {
        return volumeView.get(id);
    }

    /** Every logical volume, by id, from the in-memory view (no RocksDB read). */
    public List<VolumeInfo> volumes() {
        return new ArrayList<>(volumeView.values());
    }

    // ----- stripe maps -----

    public StripeMap stripeMap(int volumeId) {
        byte[] v = get(stripes, intKey(volumeId));
        return v == null ? null : fromJson(v, StripeMap.class);
    }

    public List<StripeMap> stripeMaps() {
        List<StripeMap> out = new ArrayList<>();
        scan(stripes, (k, v) -> out.add(fromJson(v, StripeMap.class)));
        return out;
    }

    /**
     * Writes a volume record and its stripe map (or deletes the map when {@code map} is null) in one
     * synced batch: either both are durable or neither is.
     */
    public void putVolumeAndStripes(VolumeInfo v, StripeMap map) {
        if (map != null && map.volume() != v.id()) {
            throw new IllegalArgumentException("stripe map of volume " + map.volume() + " written with volume " + v.id());
        }
        synchronized (viewLock) {
            try (Batch b = batch()) {
                b.put(volumes, intKey(v.id()), toJson(v));
                if (map == null) {
                    b.delete(stripes, intKey(v.id()));
                } else {
                    b.put(stripes, intKey(v.id()), toJson(map));
                }
                b.write();
                published(() -> {
                    volumeView.put(v.id(), v);
                    stripeChanges.incrementAndGet();
                    changes.incrementAndGet();
                });
            } catch (RocksDBException e) {
                throw new MetaStoreException("cannot write volume " + v.id() + " with its stripe map: " + e.getMessage(), e);
            }
        }
    }

    public void putStripeMap(StripeMap map) {
        put(stripes, intKey(map.volume()), toJson(map));
        published(() -> {
            stripeChanges.incrementAndGet();
            changes.incrementAndGet();
        });
    }

    // ----- pending reclaims -----

    /** The pending reclaim of a volume, or null. */
    public ReclaimPlan reclaim(int volumeId) {
        byte[] v = get(reclaims, intKey(volumeId));
        return v == null ? null : fromJson(v, ReclaimPlan.class);
    }

    public List<ReclaimPlan> reclaims() {
        List<ReclaimPlan> out = new ArrayList<>();
        scan(reclaims, (k, v) -> out.add(fromJson(v, ReclaimPlan.class)));
        return out;
    }

    /** Records a pending reclaim (synced) before the raid-node writes any of its blocks. */
    public void putReclaim(ReclaimPlan p) {
        put(reclaims, intKey(p.plan().volume()), toJson(p));
    }

    /** Forgets a pending reclaim (rolled back). */
    public void deleteReclaim(int volumeId) {
        try (Batch b = batch()) {
            b.delete(reclaims, intKey(volumeId));
            b.write();
        } catch (RocksDBException e) {
            throw new MetaStoreException("cannot delete the reclaim of volume " + volumeId + ": " + e.getMessage(), e);
        }
    }

    /**
     * The reclaim swap, one synced batch: the volume's committed map becomes {@code map}, its pending
     * reclaim is deleted and its record becomes {@code v}.
     */
    public void swapStripes(VolumeInfo v, StripeMap map) {
        if (map.volume() != v.id()) {
            throw new IllegalArgumentException("stripe map of volume " + map.volume() + " swapped in with volume " + v.id());
        }
        synchronized (viewLock) {
            try (Batch b = batch()) {
                b.put(volumes, intKey(v.id()), toJson(v));
                b.put(stripes, intKey(v.id()), toJson(map));
                b.delete(reclaims, intKey(v.id()));
                b.write();
                published(() -> {
                    volumeView.put(v.id(), v);
                    stripeChanges.incrementAndGet();
                    changes.incrementAndGet();
                });
            } catch (RocksDBException e) {
                throw new MetaStoreException("cannot swap the stripe map of volume " + v.id() + ": " + e.getMessage(), e);
            }
        }
    }

    // ----- delete logs -----

    /**
     * One entry of a volume's delete log as stored: photo {@code key} with {@code cookie} is deleted;
     * {@code needles} is its needle count as the deleting client found it (0 when unknown).
     */
    public record DeleteRecord(long seq, long key, long cookie, int needles) {
    }

    /** The highest sequence number of the volume's delete log, 0 when it is empty (from memory). */
    public long deleteHead(int volume) {
        return deleteHeads.getOrDefault(volume, 0L);
    }

    /** The sequence number the volume's next delete-log entry gets: {@code max(head, delete-floor) + 1}. */
    public long nextDeleteSeq(int volume) {
        return Math.max(deleteHead(volume), deleteFloor) + 1;
    }

    /** The highest delete-log head of any volume, or the delete floor when that is higher. */
    public long maxDeleteHead() {
        long max = deleteFloor;
        for (long h : deleteHeads.values()) {
            max = Math.max(max, h);
        }
        return max;
    }

    /**
     * Raises the delete floor to at least {@code floor} (synced; never lowers it): every new delete-log
     * entry is numbered above it. Used by a restore from a backup.
     */
    public void raiseDeleteFloor(long floor) {
        synchronized (viewLock) {
            if (floor > deleteFloor) {
                putLong(DELETE_FLOOR, floor);
                deleteFloor = floor;
            }
        }
    }

    /** The sequence number of the entry of ({@code key}, {@code cookie}) in the volume's delete log, or 0 when there is none. */
    public long deleteSeq(int volume, long key, long cookie) {
        byte[] v = get(deleteKeys, deleteKey(volume, key, cookie));
        return v == null ? 0 : ByteBuffer.wrap(v).getLong();
    }

    /** Whether the volume's delete log has an entry for {@code key}, with any cookie. */
    public boolean anyDelete(int volume, long key) {
        byte[] prefix = volumeKey(volume, key);
        try (RocksIterator it = db.newIterator(deleteKeys)) {
            it.seek(prefix);
            boolean found = it.isValid() && Arrays.equals(it.key(), 0, prefix.length, prefix, 0, prefix.length);
            it.status();
            return found;
        } catch (RocksDBException e) {
            throw new MetaStoreException("cannot read the delete log of volume " + volume + ": " + e.getMessage(), e);
        }
    }

    static byte[] deleteKey(int volume, long key, long cookie) {
        return ByteBuffer.allocate(20).putInt(volume).putLong(key).putLong(cookie).array();
    }

    /** The entry {@code seq} of the volume's delete log, or null. */
    public DeleteRecord deleteEntry(int volume, long seq) {
        byte[] v = get(deletes, volumeKey(volume, seq));
        return v == null ? null : decodeDelete(volume, seq, v);
    }

    /**
     * Appends {@code entries} to the volume's delete log with their index records, and writes
     * {@code volume} (the volume's record with new delete counters) when not null, in one synced
     * batch. The entries must be numbered {@link #nextDeleteSeq} and on, one apart, for keys not yet in
     * the log with their cookies; callers serialise appends to one volume.
     *
     * @return the new head
     */
    public long appendDeletes(int volumeId, List<DeleteRecord> entries, VolumeInfo volume) {
        if (volume != null && volume.id() != volumeId) {
            throw new IllegalArgumentException("delete log of volume " + volumeId + " written with volume " + volume.id());
        }
        synchronized (viewLock) {
            long head = nextDeleteSeq(volumeId) - 1;
            try (Batch b = batch()) {
                for (DeleteRecord e : entries) {
                    if (e.seq() != ++head) {
                        throw new IllegalArgumentException("delete-log entry " + e.seq() + " of volume " + volumeId
                                + " does not follow " + (head - 1));
                    }
                    b.put(deletes, volumeKey(volumeId, e.seq()), ByteBuffer.allocate(DELETE_ENTRY_SIZE)
                            .putLong(e.key()).putLong(e.cookie()).putInt(e.needles()).array());
                    b.put(deleteKeys, deleteKey(volumeId, e.key(), e.cookie()), ByteBuffer.allocate(8).putLong(e.seq()).array());
                }
                if (volume != null) {
                    b.put(volumes, intKey(volumeId), toJson(volume));
                }
                b.write();
            } catch (RocksDBException e) {
                throw new MetaStoreException("cannot append " + entries.size() + " entries to the delete log of volume "
                        + volumeId + ": " + e.getMessage(), e);
            }
            long newHead = head;
            published(() -> {
                if (volume != null) {
                    volumeView.put(volumeId, volume);
                }
                if (newHead > 0) {
                    deleteHeads.put(volumeId, newHead);
                }
                changes.incrementAndGet();
            });
            return head;
        }
    }

    /** Up to {@code limit} entries of the volume's delete log with a sequence number above {@code after}, in order. */
    public List<DeleteRecord> deletesAfter(int volume, long after, int limit) {
        List<DeleteRecord> out = new ArrayList<>();
        if (after == Long.MAX_VALUE) {
            return out;
        }
        try (RocksIterator it = db.newIterator(deletes)) {
            for (it.seek(volumeKey(volume, Math.max(after, 0) + 1)); it.isValid() && out.size() < limit; it.next()) {
                ByteBuffer k = ByteBuffer.wrap(it.key());
                if (k.getInt() != volume) {
                    break;
                }
                out.add(decodeDelete(volume, k.getLong(), it.value()));
            }
            it.status();
        } catch (RocksDBException e) {
            throw new MetaStoreException("read of the delete log of volume " + volume + " failed: " + e.getMessage(), e);
        }
        return out;
    }

    /**
     * A counter that grows after every change of the stores, volumes, stripe maps or delete logs
     * this store holds, once the in-memory views show it: equal values mean nothing changed.
     */
    public long changes() {
        return changes.get();
    }

    /** A counter that grows after every stripe-map write (since this process opened the database). */
    public long stripeChanges() {
        return stripeChanges.get();
    }

    private long lastDeleteSeq(int volume) {
        try (RocksIterator it = db.newIterator(deletes)) {
            it.seekForPrev(volumeKey(volume, -1L)); // 0xffff... sorts last among the volume's keys
            if (it.isValid()) {
                ByteBuffer k = ByteBuffer.wrap(it.key());
                if (k.getInt() == volume) {
                    return k.getLong();
                }
            }
            it.status();
            return 0;
        } catch (RocksDBException e) {
            throw new MetaStoreException("read of the delete log of volume " + volume + " failed: " + e.getMessage(), e);
        }
    }

    private DeleteRecord decodeDelete(int volume, long seq, byte[] v) {
        if (v.length != DELETE_ENTRY_SIZE) {
            throw new MetaStoreException("corrupt delete-log entry " + seq + " of volume " + volume + " in " + path + ": "
                    + v.length + " bytes, expected " + DELETE_ENTRY_SIZE);
        }
        ByteBuffer b = ByteBuffer.wrap(v);
        return new DeleteRecord(seq, b.getLong(), b.getLong(), b.getInt());
    }

    static byte[] volumeKey(int volume, long n) {
        return ByteBuffer.allocate(12).putInt(volume).putLong(n).array();
    }

    // ----- plumbing -----

    /**
     * The records of one write: its own batch, written (synced) by {@link #write}, or, while an entry is
     * applied on this thread ({@link #applyEntry}), that entry's batch, written once the whole entry is.
     */
    final class Batch implements AutoCloseable {
        private final WriteBatch b;
        private final boolean own;

        private Batch(WriteBatch b, boolean own) {
            this.b = b;
            this.own = own;
        }

        void put(ColumnFamilyHandle cf, byte[] key, byte[] value) throws RocksDBException {
            b.put(cf, key, value);
        }

        void delete(ColumnFamilyHandle cf, byte[] key) throws RocksDBException {
            b.delete(cf, key);
        }

        void deleteRange(ColumnFamilyHandle cf, byte[] from, byte[] to) throws RocksDBException {
            b.deleteRange(cf, from, to);
        }

        /** Writes an own batch now (synced unless the database was opened without syncs); nothing for an entry's. */
        void write() throws RocksDBException {
            if (own) {
                db.write(sync, b);
            }
        }

        @Override
        public void close() {
            if (own) {
                b.close();
            }
        }
    }

    /**
     * Publishes an update of the in-memory views once the records behind it are written: at once for a
     * write of its own (already written), after the entry's batch is written when an entry is being
     * applied on this thread, never when that batch is not written. A reader never sees a view (a
     * delete-log head, a volume) ahead of the records it names.
     */
    private void published(Runnable update) {
        List<Runnable> views = entryViews.get();
        if (views != null) {
            views.add(update);
        } else {
            synchronized (viewLock) {
                update.run();
            }
        }
    }

    /** A batch for one write: the entry's being applied on this thread, or a new one of its own. */
    Batch batch() {
        WriteBatch e = entry.get();
        return e != null ? new Batch(e, false) : new Batch(new WriteBatch(), true);
    }

    /**
     * Applies one log entry: every record {@code apply} writes on this thread and the applied index
     * ({@code raft-applied}, when {@code index > 0}) reach RocksDB in one batch, not synced on its own:
     * a Raft replica's entries are durable in its Raft log, and a single directory syncs each group of
     * entries once ({@link #syncLog}) before it acknowledges them. The in-memory views show the entry's
     * records once its batch is written, before this returns. When {@code apply} throws, nothing of the
     * entry is written or shown, and the exception is thrown on.
     */
    public <T> T applyEntry(long index, long term, Supplier<T> apply) {
        return applyEntry(index > 0 ? ByteBuffer.allocate(16).putLong(index).putLong(term).array() : null, index, apply);
    }

    /**
     * Applies entry {@code part} (from 0) of the pack at {@code index} as {@link #applyEntry} does a
     * whole entry, in a batch of its own: with the last part the pack's index is recorded as applied;
     * with an earlier one, {@code raft-applied} keeps {@code before} (the index and term applied before
     * the pack) and adds the pack's index, term and {@code part + 1}, the parts applied
     * ({@link #partlyApplied}). After a crash in the middle of a pack the replica applies only the parts
     * not yet applied: each part once, in order, each seeing the records of those before it.
     */
    public <T> T applyPart(long index, long term, int part, int parts, long[] before, Supplier<T> apply) {
        if (part < 0 || part >= parts || index <= 0) {
            throw new IllegalArgumentException("part " + part + " of " + parts + " at index " + index);
        }
        byte[] marker = part == parts - 1
                ? ByteBuffer.allocate(16).putLong(index).putLong(term).array()
                : ByteBuffer.allocate(40).putLong(before[0]).putLong(before[1]).putLong(index).putLong(term).putLong(part + 1).array();
        return applyEntry(marker, index, apply);
    }

    private <T> T applyEntry(byte[] marker, long index, Supplier<T> apply) {
        if (entry.get() != null) {
            throw new IllegalStateException("an entry is already being applied on this thread");
        }
        List<Runnable> views = new ArrayList<>();
        try (WriteBatch b = new WriteBatch()) {
            entry.set(b);
            entryViews.set(views);
            T out;
            try {
                out = apply.get();
            } finally {
                entry.remove();
                entryViews.remove();
            }
            if (marker != null) {
                b.put(meta, RAFT_APPLIED, marker);
            }
            db.write(unsynced, b);
            synchronized (viewLock) {
                views.forEach(Runnable::run);
            }
            return out;
        } catch (RocksDBException e) {
            throw new MetaStoreException("cannot write the entry at index " + index + " to " + path + ": " + e.getMessage(), e);
        }
    }

    /**
     * Syncs the write-ahead log: every entry applied before the call is durable after it, one fsync
     * for a group of entries. Nothing when the database was opened without syncs.
     */
    public void syncLog() {
        if (!syncWrites) {
            return;
        }
        try {
            db.syncWal();
        } catch (RocksDBException e) {
            throw new MetaStoreException("cannot sync the write-ahead log of " + path + ": " + e.getMessage(), e);
        }
    }

    private interface Visitor {
        void visit(byte[] key, byte[] value);
    }

    private void scan(ColumnFamilyHandle cf, Visitor v) {
        try (RocksIterator it = db.newIterator(cf)) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                v.visit(it.key(), it.value());
            }
            it.status();
        } catch (RocksDBException e) {
            throw new MetaStoreException("scan of " + path + " failed: " + e.getMessage(), e);
        }
    }

    private byte[] get(ColumnFamilyHandle cf, byte[] key) {
        try {
            return db.get(cf, key);
        } catch (RocksDBException e) {
            throw new MetaStoreException("read from " + path + " failed: " + e.getMessage(), e);
        }
    }

    private void put(ColumnFamilyHandle cf, byte[] key, byte[] value) {
        try (Batch b = batch()) {
            b.put(cf, key, value);
            b.write();
        } catch (RocksDBException e) {
            throw new MetaStoreException("write to " + path + " failed: " + e.getMessage(), e);
        }
    }

    private long getLong(byte[] key, long dflt) {
        byte[] v = get(meta, key);
        return v == null ? dflt : ByteBuffer.wrap(v).getLong();
    }

    private void putLong(byte[] key, long value) {
        put(meta, key, ByteBuffer.allocate(8).putLong(value).array());
    }

    private byte[] toJson(Object o) {
        try {
            return json.writeValueAsBytes(o);
        } catch (IOException e) {
            throw new MetaStoreException("cannot serialise " + o + ": " + e.getMessage(), e);
        }
    }

    private <T> T fromJson(byte[] v, Class<T> type) {
        try {
            return json.readValue(v, type);
        } catch (IOException e) {
            throw new MetaStoreException("corrupt " + type.getSimpleName() + " record in " + path + ": " + e.getMessage(), e);
        }
    }

    static byte[] intKey(int id) {
        return ByteBuffer.allocate(4).putInt(id).array();
    }

    static byte[] longKey(long key) {
        return ByteBuffer.allocate(8).putLong(key).array();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static boolean isEmptyDir(Path p) {
        try (var s = Files.list(p)) {
            return s.findAny().isEmpty();
        } catch (IOException e) {
            return false;
        }
    }

    private void closeOptions() {
        sync.close();
        unsynced.close();
        dbOptions.close();
        cfOptions.close();
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (families != null) {
            families.close();
        }
        if (db != null) {
            db.close();
        }
        closeOptions();
    }
}
