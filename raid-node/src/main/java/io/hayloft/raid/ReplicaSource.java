package io.hayloft.raid;

import java.io.IOException;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A sealed volume read from its replicas: {@link #open} seals the first replica that answers and
 * reads its size; a read that fails moves to the next replica (every replica of a sealed volume holds
 * the same bytes).
 *
 * <p>Thread-safe: the current replica is a volatile index; concurrent reads may each fail over.
 */
public final class ReplicaSource implements VolumeSource {

    private static final Logger LOG = LoggerFactory.getLogger(ReplicaSource.class);

    private final Cluster cluster;
    private final int volume;
    private final List<String> replicas;
    private final long size;
    private volatile int current;

    private ReplicaSource(Cluster cluster, int volume, List<String> replicas, int current, long size) {
        this.cluster = cluster;
        this.volume = volume;
        this.replicas = List.copyOf(replicas);
        this.current = current;
        this.size = size;
    }

    /**
     * Seals a replica of {@code volume} (the next one if it fails) and reads its size.
     *
     * @param replicas store addresses (host:port) of the volume's replicas that are up
     * @throws IOException when no replica can be sealed and read
     */
    public static ReplicaSource open(Cluster cluster, int volume, List<String> replicas) throws IOException {
        IOException last = null;
        for (int i = 0; i < replicas.size(); i++) {
            try {
                cluster.sealVolume(replicas.get(i), volume);
                return new ReplicaSource(cluster, volume, replicas, i, cluster.volumeSize(replicas.get(i), volume));
            } catch (IOException e) {
                last = e;
                LOG.warn("volume {}: replica on {} unusable ({}); trying the next", volume, replicas.get(i), e.toString());
            }
        }
        throw new IOException("volume " + volume + ": no replica could be sealed and read (replicas up: " + replicas + ")", last);
    }

    /** Store addresses of the replicas, the one in use first. */
    public List<String> replicas() {
        int at = current;
        List<String> out = new java.util.ArrayList<>(replicas.subList(at, replicas.size()));
        out.addAll(replicas.subList(0, at));
        return out;
    }

    /** What it takes to read this volume elsewhere (an engine's executor): no seal, the same replicas. */
    public Spec spec() {
        return new Spec(volume, replicas(), size);
    }

    /**
     * A serializable description of a replica source whose replica is already sealed: volume, store
     * addresses (the one to read first, first) and size.
     */
    public record Spec(int volume, List<String> replicas, long size) implements java.io.Serializable {
        public Spec {
            if (replicas.isEmpty()) {
                throw new IllegalArgumentException("volume " + volume + ": a replica source needs at least one replica");
            }
            replicas = List.copyOf(replicas);
        }

        /** A source reading through {@code cluster}; does not seal (the driver did). */
        public ReplicaSource open(Cluster cluster) {
            return new ReplicaSource(cluster, volume, replicas, 0, size);
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

    @Override
    public byte[] read(long offset, int length) throws IOException {
        IOException last = null;
        int at = current;
        for (int tries = 0; tries < replicas.size(); tries++) {
            String s = replicas.get(at);
            try {
                byte[] got = cluster.readRaw(s, volume, offset, length);
                current = at;
                return got;
            } catch (IOException e) {
                last = e;
                LOG.warn("volume {}: replica on {} failed a read ({}); switching replica", volume, s, e.toString());
                at = (at + 1) % replicas.size();
            }
        }
        throw new IOException("volume " + volume + ": every replica failed to read " + length + " bytes at " + offset, last);
    }
}
