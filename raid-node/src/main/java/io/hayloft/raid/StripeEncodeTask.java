package io.hayloft.raid;

import io.hayloft.cold.ClusterReads;
import io.hayloft.cold.StripeEncoder;
import io.hayloft.erasure.UnitReader;
import io.hayloft.format.io.PositionalIo;
import io.hayloft.format.wire.VolumeIndex;
import io.hayloft.format.wire.Wire;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Encodes one stripe of a volume (step 3 of the encode protocol, docs/raid.md). Every stripe of a
 * volume is cut from the bytes of the one replica its {@link ReplicaSource} was opened on (replicas
 * hold the same needles in different orders). With {@link RaidConfig#encodeAt} {@code "store"} (the
 * default) and a replica source, the store holding that replica does it from its own volume file
 * ({@link #run}); otherwise, or when that store could not, the raid-node path
 * ({@link #encode(Cluster, VolumeSource)}): it copies the {@code k} data blocks from the volume source
 * into local spool files (transfer-sized reads, zero-padded past the end of the volume), computes the
 * {@code r} parity blocks from the spool with the streaming codec, and uploads all {@code k + r}
 * blocks to their planned stores computing each one's CRC32C. Both run the one core,
 * {@link StripeEncoder} (cold-read), which also collects the stripe's candidate needle headers with
 * their footer CRC32C; the driver keeps only those on the needle chain ({@link EncodeJob#chain}), so
 * stripes need no order.
 *
 * <p>The task holds only serializable values (configuration, the stripe's shape and block targets, a
 * {@link ReplicaSource.Spec}), so any {@link JobRunner} can run it; {@link #encode(Cluster, VolumeSource)}
 * runs the raid-node path on a source that cannot travel (a reclaim's local image). It is idempotent:
 * a block left by an earlier attempt is replaced. The raid-node path needs {@code (k + r) × blockSize}
 * bytes of spool disk while it runs.
 *
 * <p>Immutable; thread-safe. Each run works on its own spool directory.
 */
public final class StripeEncodeTask implements RaidTask<StripeEncodeTask.Result> {

    private static final long serialVersionUID = 1L;
    private static final Map<String, Cluster> CLUSTERS = new ConcurrentHashMap<>();
    private static final Logger LOG = LoggerFactory.getLogger(StripeEncodeTask.class);

    /** Where one unit of the stripe goes. */
    public record Target(String store, String address, String name) implements Serializable {
    }

    /**
     * What a stripe task sends back: each unit's CRC32C (every block is {@code blockSize} long), the
     * candidate needles of its range (header fields and footer CRC32C), and the bytes it read from the source.
     */
    public record Result(int stripe, long[] crc32c, List<VolumeIndex.Entry> candidates, long bytesRead, long bytesSent,
                         String encodedBy) implements Serializable {
        /** A result of the raid-node path that does not count what it sent. */
        public Result(int stripe, long[] crc32c, List<VolumeIndex.Entry> candidates, long bytesRead) {
            this(stripe, crc32c, candidates, bytesRead, 0, ENCODED_HERE);
        }

        /** True when a replica holder encoded the stripe (not the raid-node path). */
        public boolean onStore() {
            return !ENCODED_HERE.equals(encodedBy);
        }
    }

    /** {@link Result#encodedBy()} of a stripe encoded by the raid-node path. */
    public static final String ENCODED_HERE = "raid-node";

    private final RaidConfig config;
    private final int volume;
    private final String codec;
    private final int k;
    private final int r;
    private final long blockSize;
    private final long size;
    private final int stripe;
    private final List<Target> targets;
    private final ReplicaSource.Spec source;
    private final String job;

    /**
     * @param config  transfer size, spool directory and how to reach the cluster
     * @param source  where the volume's bytes are read, or null when only {@link #encode} is called
     * @param targets the planned block of each of the {@code k + r} units, in unit order
     */
    public StripeEncodeTask(RaidConfig config, int volume, String codec, int k, int r, long blockSize, long size, int stripe,
                            List<Target> targets, ReplicaSource.Spec source) {
        this(config, volume, null, codec, k, r, blockSize, size, stripe, targets, source);
    }

    /** As above, naming the encode job ({@code job}, may be null) in a replica holder's logs. */
    public StripeEncodeTask(RaidConfig config, int volume, String job, String codec, int k, int r, long blockSize, long size,
                            int stripe, List<Target> targets, ReplicaSource.Spec source) {
        if (targets.size() != k + r) {
            throw new IllegalArgumentException("stripe " + stripe + " of volume " + volume + " needs " + (k + r)
                    + " block targets, got " + targets.size());
        }
        this.config = config;
        this.volume = volume;
        this.codec = codec;
        this.k = k;
        this.r = r;
        this.blockSize = blockSize;
        this.size = size;
        this.stripe = stripe;
        this.targets = List.copyOf(targets);
        this.source = source;
        this.job = job;
    }

    public int stripe() {
        return stripe;
    }

    /**
     * Runs where it lands, through a per-JVM cluster client: on a replica holder or from the replicas
     * ({@link #run}).
     */
    @Override
    public Result call() throws IOException {
        if (source == null) {
            throw new IllegalStateException("stripe task of volume " + volume + " carries no source; call encode(cluster, source)");
        }
        return run(cluster(config), null);
    }

    /** One HTTP client per configuration per JVM, shared by the tasks that land there. */
    static Cluster cluster(RaidConfig c) {
        return CLUSTERS.computeIfAbsent(c.directory + "|" + c.adminToken + "|" + c.requestTimeoutMillis + "|" + c.tlsTrustStore + "|" + c.tlsKeyStore,
                x -> c.cluster());
    }

    /**
     * Encodes the stripe where {@link RaidConfig#encodeAt} says. With {@code "store"} and a replica
     * source, the store holding the source's replica encodes it from its own file ({@code POST
     * /admin/volumes/ID/encode-stripe}; asked again while it answers 503, as it does past 4 stripes at
     * once, until the stripe's deadline; and up to {@link #CHANGED_TRIES} times while a delete changes
     * the replica between its two passes, 409 VOLUME_CHANGED). When it cannot (a target store down, an
     * older store without the endpoint, a timeout), the raid-node path ({@link #encode(Cluster,
     * VolumeSource)}) encodes it from the same replica, in one pass. Never from another replica: when the
     * replica itself fails, or changed size (a compaction), {@link ReplicaSource.ReplicaFailedException}
     * and the job starts over from another replica. A job the directory no longer plans (409
     * JOB_NOT_PLANNED) fails the task. Blocks a failed attempt left are replaced.
     *
     * @param src the source for the raid-node path, or null to open this task's replica source
     */
    public Result run(Cluster cluster, VolumeSource src) throws IOException {
        if (source != null && !RaidConfig.ENCODE_AT_RAID_NODE.equals(config.encodeAt)) {
            String holder = source.replica();
            try {
                return onStore(cluster, holder);
            } catch (ClusterReads.HttpStatusException e) {
                if ("VOLUME_SIZE_MISMATCH".equals(e.errorName())) {
                    throw new ReplicaSource.ReplicaFailedException(volume, holder, "changed under the encode", e);
                }
                if ("JOB_NOT_PLANNED".equals(e.errorName())) {
                    throw e;
                }
                LOG.warn("volume {} stripe {}: replica holder {} could not encode it ({}); encoding it on the raid-node from the same replica",
                        volume, stripe, holder, e.toString());
            } catch (InterruptedIOException e) {
                throw e;
            } catch (IOException e) {
                if (Thread.currentThread().isInterrupted()) {
                    throw e;
                }
                LOG.warn("volume {} stripe {}: replica holder {} could not encode it ({}); encoding it on the raid-node from the same replica",
                        volume, stripe, holder, e.toString());
            }
        }
        return encode(cluster, src != null ? src : source.open(cluster));
    }

    /** Tries of the holder while a delete changes its replica between the stripe's two passes (409 VOLUME_CHANGED). */
    static final int CHANGED_TRIES = 3;

    /** Asks replica holder {@code holder} to encode the stripe from its own volume file. */
    Result onStore(Cluster cluster, String holder) throws IOException {
        long deadline = System.nanoTime() + stripeDeadline().toNanos();
        int changed = 0;
        for (int attempt = 1; ; attempt++) {
            try {
                return onStoreOnce(cluster, holder);
            } catch (ClusterReads.HttpStatusException e) {
                if ("VOLUME_CHANGED".equals(e.errorName()) && ++changed < CHANGED_TRIES) {
                    LOG.info("volume {} stripe {}: {}; encoding it again", volume, stripe, e.getMessage());
                    continue;
                }
                if (e.status() != 503 || System.nanoTime() > deadline) {
                    throw e;
                }
                long pause = Math.min(1000, 25L << Math.min(attempt, 6));
                try {
                    Thread.sleep(pause / 2 + ThreadLocalRandom.current().nextLong(pause / 2 + 1));
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException("volume " + volume + " stripe " + stripe + ": interrupted waiting for " + holder);
                }
            }
        }
    }

    /** The whole stripe in one request: the usual deadline plus the stripe's blocks at a floor of 16 MB/s. */
    private Duration stripeDeadline() {
        return Duration.ofMillis(config.requestTimeoutMillis).plusMillis((k + r) * blockSize / (16L << 10));
    }

    private Result onStoreOnce(Cluster cluster, String holder) throws IOException {
        List<Wire.EncodeTarget> ts = new ArrayList<>(targets.size());
        for (Target t : targets) {
            ts.add(new Wire.EncodeTarget(t.store(), t.address(), t.name()));
        }
        Wire.EncodeStripeRequest req = new Wire.EncodeStripeRequest(job, codec, k, r, blockSize, size, stripe,
                config.transferBytes, ts, holder);
        Duration deadline = stripeDeadline();
        // The driver sealed this replica when it opened the source; sealing again is idempotent.
        cluster.sealVolume(holder, volume);
        Wire.EncodeStripeResult res = cluster.encodeStripe(holder, volume, req, deadline);
        if (res.stripe() != stripe || res.crc32c() == null || res.crc32c().length != k + r) {
            throw new IOException("replica holder " + holder + " answered stripe " + res.stripe() + " with "
                    + (res.crc32c() == null ? 0 : res.crc32c().length) + " CRCs for stripe " + stripe + " of " + (k + r) + " units");
        }
        return new Result(stripe, res.crc32c(), res.candidates(), res.bytesRead(), res.bytesSent(), holder);
    }

    /**
     * Encodes the stripe on this JVM (the raid-node path) from {@code src}, uploading through
     * {@code cluster}: data units copied into spool files, parity computed from the spool, every
     * block uploaded from its spool file ({@link StripeEncoder}).
     */
    public Result encode(Cluster cluster, VolumeSource src) throws IOException {
        int n = k + r;
        long b = blockSize;
        Path spoolDir = Path.of(config.spoolDir == null ? System.getProperty("java.io.tmpdir") : config.spoolDir);
        FileChannel[] spool = new FileChannel[n];
        Path dir = SpoolDisk.tempDirectory(spoolDir, "hayloft-spool-v" + volume + "-s" + stripe + "-");
        StripeEncoder core = new StripeEncoder(codec, k, r, b, size, stripe, config.transferBytes);
        try {
            for (int u = 0; u < n; u++) {
                spool[u] = SpoolDisk.get().open(dir.resolve("u" + u), StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                        StandardOpenOption.WRITE, StandardOpenOption.DELETE_ON_CLOSE);
            }
            UnitReader spooled = (unit, off, dst) -> PositionalIo.readFully(spool[unit], dst, off);
            StripeEncoder.Data data = core.copyData((off, dst) -> dst.put(src.read(off, dst.remaining())),
                    (unit, off, chunk) -> PositionalIo.writeFully(spool[unit], chunk, off), spooled, null);
            core.encodeParity(spooled, (unit, off, s) -> PositionalIo.writeFully(spool[unit], s, off));
            long[] crcs = new long[n];
            long sent = 0;
            for (int u = 0; u < n; u++) {
                Target t = targets.get(u);
                crcs[u] = StripeEncoder.upload(cluster, t.address(), t.name(), spool[u], b, config.transferBytes);
                sent += b;
            }
            return new Result(stripe, crcs, data.candidates(), data.bytesRead(), sent, ENCODED_HERE);
        } finally {
            for (FileChannel c : spool) {
                if (c != null) {
                    c.close();
                }
            }
            SpoolDisk.get().deleteIfExists(dir);
        }
    }

    /**
     * Streams a spooled block to its store in transfer-sized appends; returns its CRC32C. A block of
     * that name left by an earlier attempt of the same task is deleted and written again.
     */
    static long upload(Cluster cluster, int transferBytes, String store, String name, FileChannel from, long length)
            throws IOException {
        return StripeEncoder.upload(cluster, store, name, from, length, transferBytes);
    }
}
