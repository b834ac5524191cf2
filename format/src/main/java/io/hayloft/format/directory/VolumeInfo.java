package io.hayloft.format.directory;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * A logical volume: its state in the life cycle ({@link VolumeState}) and where its replicas live.
 * The answer of {@code GET /v1/volumes} (a list), {@code GET /v1/volumes/{id}}, {@code POST /v1/volumes}
 * (a list), {@code POST /v1/volumes/{id}/read-only}, the encoding endpoints
 * ({@code POST /v1/volumes/{id}/encoding}, {@code .../encoding/commit}, {@code DELETE .../encoding}),
 * {@code POST /v1/volumes/{id}/replicas-dropped}, {@code POST /v1/volumes/{id}/replicas/move} and
 * {@code DELETE /v1/volumes/{id}/reclaim} (docs/directory-api.md). The directory also stores it, as
 * the same JSON, in the {@code volumes} column family, keyed by the 4-byte big-endian id
 * (docs/formats.md). Unknown fields are ignored on read. Immutable; thread-safe.
 *
 * @param id         logical volume id; each replica is the physical volume of the same id on its store
 * @param state      life-cycle state
 * @param replicas   ids of the stores holding a replica, in placement order
 * @param sizeBytes  largest replica size reported by heartbeats
 * @param limitBytes size at which the volume is marked read-only
 * @param created    creation time, epoch milliseconds
 * @param reason     why the volume left WRITABLE (full, store failed, operator), or null
 * @param deletedPhotos  photos of this volume deleted while it was encoding or erasure-coded, since
 *                       its stripes were last written (encode or reclaim): the reclaim hint
 * @param deletedNeedles their needles (alternate keys), counted the same way
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record VolumeInfo(int id, VolumeState state, List<String> replicas, long sizeBytes, long limitBytes,
                         long created, String reason, long deletedPhotos, long deletedNeedles) {

    @JsonCreator
    public VolumeInfo {
        replicas = replicas == null ? List.of() : List.copyOf(replicas);
    }

    /** A volume with no deletes counted. */
    public VolumeInfo(int id, VolumeState state, List<String> replicas, long sizeBytes, long limitBytes, long created,
                      String reason) {
        this(id, state, replicas, sizeBytes, limitBytes, created, reason, 0, 0);
    }

    public VolumeInfo withState(VolumeState s, String why) {
        return new VolumeInfo(id, s, replicas, sizeBytes, limitBytes, created, why, deletedPhotos, deletedNeedles);
    }

    public VolumeInfo withReplicas(List<String> r) {
        return new VolumeInfo(id, state, r, sizeBytes, limitBytes, created, reason, deletedPhotos, deletedNeedles);
    }

    public VolumeInfo withSize(long size) {
        return new VolumeInfo(id, state, replicas, Math.max(sizeBytes, size), limitBytes, created, reason, deletedPhotos,
                deletedNeedles);
    }

    /** This volume with the delete counters set. */
    public VolumeInfo withDeletes(long photos, long needles) {
        return new VolumeInfo(id, state, replicas, sizeBytes, limitBytes, created, reason, photos, needles);
    }
}
