package io.hayloft.store;

import io.hayloft.format.io.PositionalIo;
import io.hayloft.format.needle.Superblock;
import io.hayloft.format.wire.Wire;
import io.hayloft.serverkit.io.Disk;
import io.hayloft.store.StoreOperationException.Reason;
import io.hayloft.store.block.BlockStore;
import io.hayloft.store.volume.AppliedDeletes;
import io.hayloft.store.volume.Volume;
import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The volumes and block files of one store server, independent of HTTP: opens (and recovers)
 * every {@code N.dat} in the data directories on start, creates volumes on the directory with the
 * most free space, and flushes the {@code .idx} checkpoints in the background (a failure on one
 * volume is logged and does not stop the others). Every file operation goes through the
 * {@link Disk} it was given ({@link Disk#REAL} by default), through one {@link Disk#session()}.
 *
 * <p>Thread-safe.
 */
public final class Store implements Closeable {
    private static final Logger LOG = LoggerFactory.getLogger(Store.class);

    private final Disk disk;
    private final List<Path> dirs = new ArrayList<>();
    private final Volume.Options options;
    private final ConcurrentHashMap<Long, Volume> volumes = new ConcurrentHashMap<>();
    private final Set<Long> pulling = ConcurrentHashMap.newKeySet();
    private final BlockStore blocks;
    private final ScheduledExecutorService flusher;
    /** Per volume: the last delete-log sequence number applied here (its {@code N.dseq}). */
    private final ConcurrentHashMap<Long, Long> appliedDeletes = new ConcurrentHashMap<>();
    /** Volumes whose needles are not served until their first delete-log sync (see {@link #requireDeleteSync}). */
    private final Set<Long> syncing = ConcurrentHashMap.newKeySet();
    private volatile boolean syncRequired;
    private volatile LongConsumer readOnlyListener = id -> { };

    public Store(StoreConfig config) throws IOException {
        this(config, Disk.REAL);
    }

    /** A store whose files all live on {@code disk} (tests pass a simulated disk). */
    public Store(StoreConfig config, Disk disk) throws IOException {
        config.validate();
        this.disk = disk.session();
        this.options = config.volumeOptions();
        for (String d : config.dataDirs) {
            Path p = Paths.get(d).toAbsolutePath();
            this.disk.createDirectories(p);
            dirs.add(p);
        }
        try {
            for (Path dir : dirs) {
                for (String name : this.disk.list(dir)) {
                    if (name.endsWith(".dat" + PULL_SUFFIX)) {
                        this.disk.deleteIfExists(dir.resolve(name)); // an interrupted pull
                        continue;
                    }
                    if (!name.endsWith(".dat")) {
                        continue;
                    }
                    String idPart = name.substring(0, name.length() - 4);
                    if (!idPart.matches("[0-9]{1,18}")) {
                        continue;
                    }
                    long id = Long.parseLong(idPart);
                    if (volumes.containsKey(id)) {
                        throw new StoreOperationException(Reason.CORRUPT_FILE, "volume " + id + " found twice (second in " + dir + ")");
                    }
                    volumes.put(id, Volume.open(this.disk, dir, id, options));
                    appliedDeletes.put(id, AppliedDeletes.read(this.disk, dir, id));
                }
            }
            blocks = new BlockStore(this.disk, dirs.get(0).resolve("blocks"), options.fsync() == Volume.Fsync.ALWAYS,
                    config.directBlockWrites);
        } catch (IOException | RuntimeException e) {
            closeVolumes();
            throw e;
        }
        flusher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "idx-flusher");
            t.setDaemon(true);
            return t;
        });
        flusher.scheduleWithFixedDelay(this::flushAll, config.idxFlushMillis, config.idxFlushMillis, TimeUnit.MILLISECONDS);
        LOG.info("store opened {} volumes in {}", volumes.size(), dirs);
    }

    private void flushAll() {
        eachVolume(Volume::flushIndex, ".idx flush");
    }

    /** One step on one volume, for {@link #eachVolume}. */
    private interface VolumeStep {
        void apply(Volume v) throws IOException;
    }

    /** Applies {@code step} to every open volume; a volume's failure is logged ("volume N: {what} failed") and the rest go on. */
    private void eachVolume(VolumeStep step, String what) {
        for (Volume v : volumes.values()) {
            try {
                step.apply(v);
            } catch (IOException | RuntimeException e) {
                LOG.warn("volume {}: {} failed", v.id(), what, e);
            }
        }
    }

    public Volume volume(long id) {
        Volume v = volumes.get(id);
        if (v == null) {
            throw new StoreOperationException(Reason.VOLUME_NOT_FOUND, "volume " + id + " not found on this store");
        }
        return v;
    }

    public Collection<Volume> volumes() {
        return volumes.values();
    }

    /** Creates volume {@code id} in the data directory with the most usable space. */
    public synchronized Volume create(long id) throws IOException {
        if (id < 0) {
            throw new StoreOperationException(Reason.BAD_ARGUMENT, "volume id must be >= 0, got " + id);
        }
        if (volumes.containsKey(id)) {
            throw new StoreOperationException(Reason.VOLUME_EXISTS, "volume " + id + " already exists");
        }
        Path best = mostFreeDir();
        AppliedDeletes.delete(disk, best, id); // a stray one of an older volume of this id
        Volume v = Volume.create(disk, best, id, options);
        appliedDeletes.put(id, 0L); // a new volume has nothing to apply: synced by construction
        volumes.put(id, v);
        return v;
    }

    /** The data directory with the most usable space (the first of those with the most). */
    private Path mostFreeDir() throws IOException {
        Path best = dirs.get(0);
        long bestFree = -1;
        for (Path d : dirs) {
            long free = disk.usableSpace(d);
            if (free > bestFree) {
                best = d;
                bestFree = free;
            }
        }
        return best;
    }

    /** Reads {@code length} bytes of a source volume file at {@code offset} (a pull's source; another store over HTTP). */
    @FunctionalInterface
    public interface RawReader {
        byte[] read(long offset, int length) throws IOException;
    }

    /** Suffix of a volume file being pulled; an interrupted pull leaves one, which the next pull overwrites. */
    public static final String PULL_SUFFIX = ".pull";

    /**
     * Copies a sealed volume of {@code size} bytes from {@code source} (a replica on another store)
     * as volume {@code id}: the bytes go to {@code N.dat.pull} in the data directory with the most
     * free space, chunk by chunk, are forced, renamed to {@code N.dat} (directory fsync), and the
     * volume is then opened by the usual recovery, which scans every needle and rebuilds the index
     * and the {@code .idx}. Only then does it answer, so a pulled replica is durable and complete
     * (bytes a torn copy lacks are truncated by the scan and missed by the caller's verification).
     *
     * @throws StoreOperationException VOLUME_EXISTS when the volume is here (drop it first), BAD_RANGE for a short source
     */
    public Volume pull(long id, long size, int chunk, RawReader source) throws IOException {
        if (id < 0 || size < Superblock.SIZE || chunk < 1) {
            throw new StoreOperationException(Reason.BAD_ARGUMENT, "pull of volume " + id + ": bad size " + size + " or chunk " + chunk);
        }
        Path best;
        synchronized (this) {
            if (volumes.containsKey(id) || !pulling.add(id)) {
                throw new StoreOperationException(Reason.VOLUME_EXISTS, "volume " + id + " already exists or is being pulled");
            }
            best = mostFreeDir();
        }
        try {
            Path dat = Volume.datPath(best, id);
            Path tmp = dat.resolveSibling(dat.getFileName() + PULL_SUFFIX);
            try (FileChannel ch = disk.open(tmp, StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                for (long off = 0; off < size; ) {
                    int n = (int) Math.min(chunk, size - off);
                    byte[] b = source.read(off, n);
                    if (b.length != n) {
                        throw new StoreOperationException(Reason.BAD_RANGE, "pull of volume " + id + ": the source gave " + b.length
                                + " bytes at offset " + off + ", not " + n);
                    }
                    PositionalIo.writeFully(ch, ByteBuffer.wrap(b), off);
                    off += n;
                }
                ch.force(true);
            }
            disk.deleteIfExists(Volume.idxPath(best, id)); // a stray .idx of an older copy must not describe this one
            disk.move(tmp, dat);
            disk.syncDirectory(best);
            AppliedDeletes.delete(disk, best, id);
            Volume v = Volume.open(disk, best, id, options);
            appliedDeletes.put(id, 0L);
            if (syncRequired) {
                syncing.add(id); // a copy applies the whole delete log before it serves
            }
            volumes.put(id, v);
            LOG.info("volume {} pulled: {} bytes, {} needles", id, size, v.status().needles());
            volumeReadOnly(id); // a sealed copy: heartbeat at once, which also syncs its delete log
            return v;
        } finally {
            pulling.remove(id);
        }
    }

    /**
     * Deletes a sealed volume's files (the raid-node drops a replica once its stripes are committed).
     * The {@code .dat} goes first, so a crash in between leaves no volume to open, only a stray {@code .idx}.
     *
     * @throws StoreOperationException VOLUME_NOT_FOUND if absent, VOLUME_READ_ONLY (sic: not sealed) if still writable
     */
    public synchronized void drop(long id) throws IOException {
        Volume v = volume(id);
        if (!v.readOnly()) {
            throw new StoreOperationException(Reason.VOLUME_READ_ONLY, "volume " + id + " is writable; seal it before dropping it");
        }
        volumes.remove(id);
        v.close();
        Path dir = v.dir();
        disk.deleteIfExists(Volume.datPath(dir, id));
        disk.deleteIfExists(Volume.idxPath(dir, id));
        AppliedDeletes.delete(disk, dir, id);
        disk.syncDirectory(dir);
        appliedDeletes.remove(id);
        syncing.remove(id);
        LOG.info("volume {} dropped", id);
    }

    /**
     * Called once, before serving, by a store that has a directory: every volume opened so far
     * answers reads with {@link Reason#VOLUME_SYNCING} until {@link #markSynced} (its first
     * delete-log sync since the process started), so a photo deleted while the store was down is
     * never read back. Volumes created later start synced; pulled ones start syncing.
     */
    public void requireDeleteSync() {
        syncRequired = true;
        syncing.addAll(volumes.keySet());
    }

    /** True while volume {@code id} waits for its first delete-log sync. */
    public boolean syncing(long id) {
        return syncing.contains(id);
    }

    /** Throws {@link Reason#VOLUME_SYNCING} while volume {@code id} waits for its first delete-log sync. */
    public void checkSynced(long id) {
        if (syncing.contains(id)) {
            throw new StoreOperationException(Reason.VOLUME_SYNCING, "volume " + id
                    + " is applying the directory's delete log after a restart; try another replica");
        }
    }

    /** Volume {@code id} applied the delete log up to the head the directory gave: its reads are served. */
    public void markSynced(long id) {
        if (syncing.remove(id)) {
            LOG.info("volume {}: delete log applied, serving reads", id);
        }
    }

    /** The last delete-log sequence number volume {@code id} applied (0: none). */
    public long appliedDeletes(long id) {
        volume(id);
        return appliedDeletes.getOrDefault(id, 0L);
    }

    /**
     * Applies delete-log entries to volume {@code id}: for each, deletes the key's live needles
     * whose cookie is the entry's (others are untouched; an unknown key is fine), forces the
     * volume file, then records {@code upTo} (the last entry's sequence number) in the volume's
     * {@code N.dseq} ({@link io.hayloft.store.volume.AppliedDeletes}), so the recorded sequence
     * never runs ahead of durable deletes. Callers serialise the syncs of one volume.
     *
     * @return needles deleted
     */
    public int applyDeletes(long id, List<Wire.DeleteEntry> entries, long upTo) throws IOException {
        Volume v = volume(id);
        int deleted = 0;
        for (Wire.DeleteEntry e : entries) {
            long cookie;
            try {
                cookie = Long.parseUnsignedLong(e.cookie(), 16);
            } catch (RuntimeException bad) {
                LOG.warn("volume {}: delete-log entry {} has a bad cookie '{}'; skipped", id, e.seq(), e.cookie());
                continue;
            }
            deleted += v.deleteKey(e.key(), cookie).size();
        }
        if (upTo > appliedDeletes.getOrDefault(id, 0L)) {
            v.forceDeletes();
            AppliedDeletes.write(disk, v.dir(), id, upTo);
            appliedDeletes.put(id, upTo);
        }
        return deleted;
    }

    /** Whom to tell when a volume turns read-only (the heartbeat, so the directory stops leasing it at once). */
    public void onReadOnly(LongConsumer listener) {
        readOnlyListener = listener == null ? id -> { } : listener;
    }

    /** Tells the listener that volume {@code id} turned read-only (full, or sealed). */
    public void volumeReadOnly(long id) {
        try {
            readOnlyListener.accept(id);
        } catch (RuntimeException e) {
            LOG.warn("volume {}: read-only listener failed", id, e);
        }
    }

    public BlockStore blocks() {
        return blocks;
    }

    /** The disk (this store's session of it) every file of the store goes through. */
    public Disk disk() {
        return disk;
    }

    private void closeVolumes() {
        eachVolume(Volume::close, "close");
    }

    @Override
    public void close() {
        // shutdown, not shutdownNow: interrupting a flush in progress would close its .idx channel
        // (ClosedByInterruptException) and the final flush of the .idx would fail
        flusher.shutdown();
        try {
            flusher.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        closeVolumes();
    }

    /**
     * What {@code kill -9} leaves: stops the flusher and closes every file without writing
     * anything more (queued {@code .idx} records are dropped, nothing is flushed or forced).
     * Never throws; errors are logged.
     */
    public void crash() {
        flusher.shutdownNow();
        try {
            flusher.awaitTermination(30, TimeUnit.SECONDS); // a flush in progress finishes before the files close
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (Volume v : volumes.values()) {
            try {
                v.abandon();
            } catch (IOException | RuntimeException e) {
                LOG.warn("volume {}: abandon failed", v.id(), e);
            }
        }
    }
}
