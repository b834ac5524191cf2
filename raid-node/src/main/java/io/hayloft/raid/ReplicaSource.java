package io.hayloft.raid;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.Serializable;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A sealed volume read from ONE of its replicas. Replicas of one volume hold the same needles but
 * not the same bytes: writers that run at once reach the replicas in different orders (every store
 * appends in the order writes arrive), a write that failed on one replica may have landed on another,
 * and a compaction rewrites one replica's file alone. An encode cuts every stripe from the bytes of
 * one replica and proves the result against that replica's own index, so a source never reads from
 * another replica than the one it was opened on: when that replica fails, a read throws
 * {@link ReplicaFailedException} and the encode starts over from another replica
 * ({@link EncodeJob#encode}).
 *
 * <p>Thread-safe: immutable.
 */
public final class ReplicaSource implements VolumeSource {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicaSource.class);

    private final Cluster cluster;
    private final int volume;
    private final String replica;
    private final long size;

    private ReplicaSource(Cluster cluster, int volume, String replica, long size) {
        this.cluster = cluster;
        this.volume = volume;
        this.replica = replica;
        this.size = size;
    }

    /**
     * Seals the replica of {@code volume} on store {@code replica} (host:port) and reads its size.
     *
     * @throws ReplicaFailedException when that replica cannot be sealed or its size read
     */
    public static ReplicaSource open(Cluster cluster, int volume, String replica) throws ReplicaFailedException {
        try {
            cluster.sealVolume(replica, volume);
            return new ReplicaSource(cluster, volume, replica, cluster.volumeSize(replica, volume));
        } catch (IOException e) {
            throw new ReplicaFailedException(volume, replica, "could not be sealed and sized", e);
        }
    }

    /**
     * The first replica of {@code replicas} (host:port, in order) that can be sealed and sized.
     *
     * @throws IOException when none can
     */
    public static ReplicaSource open(Cluster cluster, int volume, List<String> replicas) throws IOException {
        IOException last = null;
        for (String r : replicas) {
            try {
                return open(cluster, volume, r);
            } catch (ReplicaFailedException e) {
                last = e;
                LOG.warn("volume {}: {}; trying the next replica", volume, e.getMessage());
            }
        }
        throw new IOException("volume " + volume + ": no replica could be sealed and read (replicas up: " + replicas + ")", last);
    }

    /**
     * Checks that the replica still has the size it had when this source was opened. A sealed
     * volume's file only changes by a compaction, which drops dead needles (so it shrinks) and moves
     * the others; an unchanged size means unchanged bytes, apart from delete flags.
     *
     * @throws ReplicaFailedException when the size changed or cannot be read
     */
    public void checkUnchanged() throws ReplicaFailedException {
        long now;
        try {
            now = cluster.volumeSize(replica, volume);
        } catch (IOException e) {
            throw new ReplicaFailedException(volume, replica, "could not be sized again", e);
        }
        if (now != size) {
            throw new ReplicaFailedException(volume, replica, "changed under the encode (a compaction: " + size
                    + " bytes when the encode began, " + now + " now)", null);
        }
    }

    /** The store address (host:port) of the replica every byte is read from. */
    public String replica() {
        return replica;
    }

    /** What it takes to read this volume elsewhere (an engine's executor): no seal, the same replica. */
    public Spec spec() {
        return new Spec(volume, replica, size);
    }

    /** A serializable description of a replica source whose replica is already sealed. */
    public record Spec(int volume, String replica, long size) implements Serializable {
        public Spec {
            if (replica == null || replica.isEmpty()) {
                throw new IllegalArgumentException("volume " + volume + ": a replica source needs a replica");
            }
        }

        /** A source reading through {@code cluster}; does not seal (the driver did). */
        public ReplicaSource open(Cluster cluster) {
            return new ReplicaSource(cluster, volume, replica, size);
        }
    }

    @Override
    public boolean threadSafe() {
        return true;
    }

    @Override
    public int volume() {
        return volume;
    }

    @Override
    public long size() {
        return size;
    }

    /** Tries of one read before the replica counts as failed (the same replica: the same bytes). */
    static final int READ_TRIES = 3;

    /** @throws ReplicaFailedException when the replica does not answer the read, {@link #READ_TRIES} times */
    @Override
    public byte[] read(long offset, int length) throws IOException {
        IOException last = null;
        for (int attempt = 1; attempt <= READ_TRIES; attempt++) {
            try {
                return cluster.readRaw(replica, volume, offset, length);
            } catch (IOException e) {
                last = e;
                if (attempt < READ_TRIES) {
                    LOG.info("volume {}: the replica on {} failed a read ({}); trying it again", volume, replica, e.toString());
                    try {
                        Thread.sleep(100L * attempt * attempt);
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                        throw new InterruptedIOException("volume " + volume + ": interrupted reading the replica on " + replica);
                    }
                }
            }
        }
        throw new ReplicaFailedException(volume, replica, "failed a read of " + length + " bytes at " + offset + " " + READ_TRIES
                + " times", last);
    }

    /**
     * The replica an encode reads from failed (no answer, an error, the replica gone): what was encoded
     * from it cannot be finished from another replica, whose bytes may be in another order.
     */
    public static final class ReplicaFailedException extends IOException {
        private final String replica;

        public ReplicaFailedException(int volume, String replica, String what, Throwable cause) {
            super("volume " + volume + ": the replica on " + replica + " " + what + (cause == null ? "" : ": " + cause.getMessage()), cause);
            this.replica = replica;
        }

        /** The store address of the replica that failed. */
        public String replica() {
            return replica;
        }

        /** The replica failure somewhere in {@code t}'s causes, or null. */
        public static ReplicaFailedException in(Throwable t) {
            for (Throwable c = t; c != null; c = c.getCause()) {
                if (c instanceof ReplicaFailedException f) {
                    return f;
                }
                if (c.getCause() == c) {
                    break;
                }
            }
            return null;
        }
    }
}
