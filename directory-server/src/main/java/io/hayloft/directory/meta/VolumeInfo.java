package io.hayloft.directory.meta;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * A logical volume: its state in the life cycle (DESIGN.md) and where its replicas live. Stored as
 * JSON in the {@code volumes} column family, keyed by the 4-byte big-endian id; unknown fields are
 * ignored on read.
 *
 * @param id         logical volume id; each replica is the physical volume of the same id on its store
 * @param state      life-cycle state
 * @param replicas   ids of the stores holding a replica, in placement order
 * @param sizeBytes  largest replica size reported by heartbeats
 * @param limitBytes size at which the volume is marked read-only
 * @param created    creation time, epoch milliseconds
 * @param reason     why the volume left WRITABLE (full, store failed, operator), or null
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record VolumeInfo(int id, VolumeState state, List<String> replicas, long sizeBytes, long limitBytes,
                         long created, String reason) {

    public enum VolumeState { WRITABLE, READ_ONLY, ENCODING, ERASURE_CODED, DEGRADED, REPAIRING }

    public VolumeInfo {
        replicas = List.copyOf(replicas);
    }

    public VolumeInfo withState(VolumeState s, String why) {
        return new VolumeInfo(id, s, replicas, sizeBytes, limitBytes, created, why);
    }

    public VolumeInfo withSize(long size) {
        return new VolumeInfo(id, state, replicas, Math.max(sizeBytes, size), limitBytes, created, reason);
    }
}
