package io.hayloft.format.directory;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import io.hayloft.format.wire.StripeMap;

/**
 * What a reclaim swap did: the answer of {@code POST /v1/volumes/{id}/reclaim/commit}
 * (docs/directory-api.md). Unknown fields are ignored on read. Immutable; thread-safe.
 *
 * @param volume   the volume's record after the swap (delete counters lowered by what the plan held)
 * @param replaced the committed map the swap replaced, or null when the swap had already happened (a retry)
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record ReclaimSwap(VolumeInfo volume, StripeMap replaced) {
}
