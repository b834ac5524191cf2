package io.hayloft.directory;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.directory.meta.MetaStore;
import io.hayloft.directory.meta.MetaStoreException;
import io.hayloft.format.directory.BackupManifest;
import io.hayloft.format.errors.DirectoryErrors;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Online backups of the directory's database and their restore (docs/operations.md, "Backing up the
 * directory").
 *
 * <p><b>Backup</b> ({@code POST /v1/backup}, {@code hayloft directory backup --to DIR}): a RocksDB
 * checkpoint of the running database written into a new directory on the directory's host, then
 * opened read-only to check it and to read its counters, then {@value #MANIFEST} written last
 * (temporary file, fsync, rename, directory fsync). A directory without the manifest is an
 * interrupted backup and restore refuses it.
 *
 * <p><b>Restore</b> ({@code hayloft directory restore --from DIR}, offline, the directory stopped):
 * copies the checkpoint into {@code <dataDir>.restoring}, raises the key high-water mark by
 * {@code keyMargin} and the volume sequence by {@code volumeMargin}, then renames it to the data
 * directory. The margins are what keeps a restored directory from handing out again the keys and
 * volume ids the lost directory handed out after the backup was taken: the backup cannot know
 * them, so the restore skips far past them. The defaults (2^40 keys, 100,000 volumes) exceed what a
 * cluster leases in years; the key space is 2^63. The delete floor is raised to the backup's highest
 * delete-log head plus {@value #DELETE_SEQ_MARGIN}, for the same reason: a store that applied delete-log
 * entries the lost directory numbered after the backup must not take new entries of those numbers for
 * applied ones ({@link MetaStore#raiseDeleteFloor}). A store that later reports a volume id at or
 * past the sequence raises it too ({@link Directory#heartbeat}). The restore also puts a hold on raid
 * work ({@link RaidLeases#HOLD}): stripe maps written after the backup are not in it, and a raid-node's
 * orphan sweep would delete those volumes' blocks; an operator checks and releases it
 * ({@code hayloft directory release-raid}). A backup restored for a directory group goes into the
 * replica's {@code db/} and loses the old group's Raft records, on every replica alike, so the
 * replicas started afterwards form a new group from the same state.
 *
 * <p>Thread-safe: backups run one at a time.
 */
public final class DirectoryBackup {

    private static final Logger LOG = LoggerFactory.getLogger(DirectoryBackup.class);

    /** The file a complete backup holds next to the database files. */
    public static final String MANIFEST = "hayloft-backup.json";
    /** Version of {@link BackupManifest}. */
    public static final int MANIFEST_FORMAT = 1;
    /** Keys skipped by a restore unless told otherwise: 2^40. */
    public static final long DEFAULT_KEY_MARGIN = 1L << 40;
    /** Volume ids skipped by a restore unless told otherwise. */
    public static final long DEFAULT_VOLUME_MARGIN = 100_000;
    /** Delete-log sequence numbers a restore skips past the backup's highest head: 2^32. */
    public static final long DELETE_SEQ_MARGIN = 1L << 32;

    private static final ObjectMapper JSON = new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);
    private static final Object ONE_AT_A_TIME = new Object();

    private DirectoryBackup() {
    }

    /** What a restore did. */
    public record Restored(BackupManifest backup, Path dataDir, long keyHighWaterMark, long volumeSequence) {
    }

    /**
     * Writes a backup of the running database into {@code dir}, a new directory (an existing empty
     * one is accepted) on this host.
     *
     * @throws Refusal INVALID for a missing or relative path, or one inside the data directory
     * @throws io.hayloft.format.errors.ApiException 409 BACKUP_TARGET_EXISTS when
     *         {@code dir} exists and is not an empty directory, 500 BACKUP_FAILED when it cannot be written
     */
    public static BackupManifest backup(MetaStore meta, String dir) {
        if (dir == null || dir.isBlank()) {
            throw Refusal.invalid("a backup needs {\"dir\": \"/absolute/path\"}: a new directory on the directory's host");
        }
        Path target = Path.of(dir);
        if (!target.isAbsolute()) {
            throw Refusal.invalid("backup dir must be an absolute path on the directory's host, was '" + dir + "'");
        }
        target = target.normalize();
        if (target.startsWith(meta.path().toAbsolutePath().normalize())) {
            throw Refusal.invalid("backup dir " + target + " is inside the directory's data directory " + meta.path());
        }
        synchronized (ONE_AT_A_TIME) {
            long t0 = System.nanoTime();
            try {
                if (Files.exists(target)) {
                    if (!Files.isDirectory(target) || !isEmpty(target)) {
                        throw DirectoryErrors.BACKUP_TARGET_EXISTS.exception("backup target " + target
                                + " already exists and is not an empty directory; a backup never overwrites: name a new directory");
                    }
                    Files.delete(target); // RocksDB creates the checkpoint directory itself
                }
                if (target.getParent() != null) {
                    Files.createDirectories(target.getParent());
                }
                long created = System.currentTimeMillis();
                meta.checkpoint(target);
                MetaStore.Inspection in = MetaStore.inspect(target);
                long files;
                long bytes;
                try (Stream<Path> s = Files.list(target)) {
                    List<Path> all = s.filter(Files::isRegularFile).toList();
                    files = all.size();
                    bytes = 0;
                    for (Path p : all) {
                        bytes += Files.size(p);
                    }
                }
                BackupManifest m = new BackupManifest(MANIFEST_FORMAT, target.toString(), in.clusterId(), MetaStore.FORMAT,
                        in.keyHighWaterMark(), in.volumeSequence(), in.stores(), in.volumes(), in.deleteLogEntries(), files, bytes,
                        created, (System.nanoTime() - t0) / 1_000_000);
                writeManifest(target, m);
                LOG.info("backup of cluster {} written to {}: {} files, {} bytes, key high-water mark {}, in {} ms",
                        m.clusterId(), target, files, bytes, m.keyHighWaterMark(), m.millis());
                return m;
            } catch (MetaStoreException | IOException e) {
                LOG.warn("backup to {} failed", target, e);
                throw DirectoryErrors.BACKUP_FAILED.exception("backup to " + target + " failed: " + e.getMessage());
            }
        }
    }

    /** Reads and checks the manifest of a complete backup. */
    public static BackupManifest readManifest(Path backup) throws IOException {
        Path f = backup.resolve(MANIFEST);
        if (!Files.isDirectory(backup)) {
            throw new IllegalArgumentException("no backup at " + backup + " (not a directory)");
        }
        if (!Files.isRegularFile(f)) {
            throw new IllegalArgumentException(backup + " is not a complete directory backup: it has no " + MANIFEST
                    + " (the backup was interrupted, or this is not a backup)");
        }
        BackupManifest m = JSON.readValue(f.toFile(), BackupManifest.class);
        if (m.format() != MANIFEST_FORMAT) {
            throw new IllegalArgumentException(f + ": backup manifest format " + m.format() + ", this version reads " + MANIFEST_FORMAT);
        }
        if (m.databaseFormat() != MetaStore.FORMAT) {
            throw new IllegalArgumentException(f + ": directory database format " + m.databaseFormat()
                    + ", this version reads format " + MetaStore.FORMAT);
        }
        return m;
    }

    /**
     * Restores a backup into {@code dataDir}, which must be missing or an empty directory (the
     * directory server must be stopped). The key high-water mark becomes the backup's plus
     * {@code keyMargin}, the volume sequence the backup's plus {@code volumeMargin}.
     *
     * @throws IllegalArgumentException for an incomplete backup, a non-empty {@code dataDir} or bad margins
     */
    public static Restored restore(Path backup, Path dataDir, long keyMargin, long volumeMargin) throws IOException {
        return restore(backup, dataDir, keyMargin, volumeMargin, false);
    }

    /**
     * As {@link #restore(Path, Path, long, long)}; with {@code forGroup}, {@code dataDir} is a
     * replica's database directory ({@code <dataDir>/db} of a replica's configuration) and the old
     * group's records are dropped ({@link MetaStore#clearAppliedIndex()}: {@code raft-applied} and
     * {@code raft-cluster}): every replica restored from the same backup, then started with
     * {@code --init} and no Raft storage, forms a new group with that state.
     */
    public static Restored restore(Path backup, Path dataDir, long keyMargin, long volumeMargin, boolean forGroup)
            throws IOException {
        BackupManifest m = readManifest(backup);
        if (keyMargin < 0 || m.keyHighWaterMark() > Long.MAX_VALUE - keyMargin) {
            throw new IllegalArgumentException("key margin must be >= 0 and keep the key high-water mark "
                    + m.keyHighWaterMark() + " below 2^63, was " + keyMargin);
        }
        if (volumeMargin < 0 || m.volumeSequence() + volumeMargin > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("volume margin must be >= 0 and keep the volume sequence "
                    + m.volumeSequence() + " at most " + Integer.MAX_VALUE + ", was " + volumeMargin);
        }
        Path data = dataDir.toAbsolutePath().normalize();
        if (Files.exists(data) && (!Files.isDirectory(data) || !isEmpty(data))) {
            throw new IllegalArgumentException("dataDir " + data + " is not empty: stop the directory and move its old database "
                    + "aside first (a restore never overwrites a database)");
        }
        Path work = data.resolveSibling(data.getFileName() + ".restoring");
        deleteTree(work); // left by an interrupted restore: ours to remove
        Files.createDirectories(work);
        try (Stream<Path> s = Files.list(backup)) {
            for (Path f : s.filter(Files::isRegularFile).toList()) {
                String name = f.getFileName().toString();
                if (name.equals(MANIFEST) || name.equals("LOCK")) {
                    continue;
                }
                Path to = work.resolve(name);
                Files.copy(f, to, StandardCopyOption.COPY_ATTRIBUTES);
                force(to);
            }
        }
        force(work);
        long keyHwm = m.keyHighWaterMark() + keyMargin;
        long volumeSeq = m.volumeSequence() + volumeMargin;
        try (MetaStore restored = MetaStore.open(work, false)) {
            if (!restored.clusterId().equals(m.clusterId())) {
                throw new IllegalArgumentException(backup + ": the database belongs to cluster " + restored.clusterId()
                        + " but the manifest names " + m.clusterId());
            }
            if (forGroup) {
                restored.clearAppliedIndex(); // the backup's log indexes belong to the old group's log
            }
            restored.raiseCounters(keyHwm, volumeSeq);
            restored.raiseDeleteFloor(restored.maxDeleteHead() + DELETE_SEQ_MARGIN);
            restored.putSetting(RaidLeases.HOLD, ("raid work is held: this directory was restored from the backup " + backup
                    + " taken at " + Instant.ofEpochMilli(m.createdMillis()) + "; stripe maps of volumes encoded or reclaimed after"
                    + " it are not in it, and a raid-node would delete their blocks as orphans")
                    .getBytes(StandardCharsets.UTF_8));
            // Every replica of a group restores alike (their states are compared entry by entry): no clock in it.
            restored.putSetting("restored-from", JSON.writeValueAsBytes(forGroup
                    ? Map.of("backup", backup.toString(), "createdMillis", m.createdMillis(),
                            "keyHighWaterMark", keyHwm, "volumeSequence", volumeSeq)
                    : Map.of("backup", backup.toString(), "createdMillis", m.createdMillis(),
                            "restoredMillis", System.currentTimeMillis(), "keyHighWaterMark", keyHwm, "volumeSequence", volumeSeq)));
        }
        if (Files.exists(data)) {
            Files.delete(data);
        }
        Files.move(work, data, StandardCopyOption.ATOMIC_MOVE);
        force(data.getParent());
        LOG.info("restored the backup {} of cluster {} (taken at {}) into {}; key high-water mark {} -> {}, volume sequence {} -> {}",
                backup, m.clusterId(), m.createdMillis(), data, m.keyHighWaterMark(), keyHwm, m.volumeSequence(), volumeSeq);
        return new Restored(m, data, keyHwm, volumeSeq);
    }

    private static void writeManifest(Path dir, BackupManifest m) throws IOException {
        Path tmp = dir.resolve(MANIFEST + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(JSON.writerWithDefaultPrettyPrinter().writeValueAsBytes(m)));
            ch.force(true);
        } catch (FileAlreadyExistsException e) {
            throw new IOException("a backup is already being written to " + dir, e);
        }
        Files.move(tmp, dir.resolve(MANIFEST), StandardCopyOption.ATOMIC_MOVE);
        force(dir);
    }

    private static void force(Path p) throws IOException {
        if (Files.isDirectory(p)) {
            try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
                ch.force(true);
            }
        } else {
            try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
                ch.force(true);
            }
        }
    }

    private static boolean isEmpty(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.findAny().isEmpty();
        }
    }

    private static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> s = Files.walk(p)) {
            for (Path q : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(q);
            }
        }
    }
}
