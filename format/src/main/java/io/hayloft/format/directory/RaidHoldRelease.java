package io.hayloft.format.directory;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * The answer of {@code DELETE /v1/raid-hold} ({@code hayloft directory release-raid},
 * docs/directory-api.md): raid-nodes may take the lease again. Unknown fields are ignored on read.
 * Immutable; thread-safe.
 *
 * @param released the hold that was removed, or null when there was none
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record RaidHoldRelease(String released) {
}
