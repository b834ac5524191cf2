package io.hayloft.format.directory;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * Whether raid work is held after a restore: the answer of {@code GET /v1/raid-hold}
 * (docs/directory-api.md, docs/operations.md). While it is held, {@code POST /v1/raid-lease} answers
 * {@code 409 LEASE_HELD}. Unknown fields are ignored on read. Immutable; thread-safe.
 *
 * @param hold why raid work is held (set by {@code hayloft directory restore}), or null when it is not
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record RaidHold(String hold) {
}
