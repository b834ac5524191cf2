package io.hayloft.format.directory;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import io.hayloft.format.wire.StripeMap;

/**
 * A pending reclaim of an erasure-coded volume (docs/raid.md "Reclaim"): the new stripe map the
 * raid-node is writing, recorded before it writes any block so that a crash leaves every block name
 * known. The answer of {@code GET /v1/reclaims} (a list), {@code GET /v1/volumes/{id}/reclaim} and
 * {@code POST /v1/volumes/{id}/reclaim} (docs/directory-api.md); unknown fields are ignored on read.
 * Stored as JSON in the {@code reclaims} column family under the 4-byte big-endian volume id
 * (docs/formats.md); the volume's committed map in {@code stripes} stays in force until the swap.
 * Immutable; thread-safe.
 *
 * @param replaces       job id of the committed map the new one will replace (the swap's compare-and-set)
 * @param deletedPhotos  the volume's {@code deletedPhotos} counter when the plan was recorded
 * @param deletedNeedles the volume's {@code deletedNeedles} counter when the plan was recorded
 * @param plan           the new map, {@code PLANNED}: every block name that may exist
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record ReclaimPlan(String replaces, long deletedPhotos, long deletedNeedles, StripeMap plan) {
}
