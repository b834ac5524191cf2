package io.hayloft.format.directory;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * The cluster's raid lease: at most one raid-node deletes and rewrites blocks at a time
 * (docs/raid.md "One raid-node per cluster"). The answer of {@code GET}, {@code POST} and
 * {@code DELETE /v1/raid-lease} (docs/directory-api.md); the directory stores it, as the same JSON,
 * as record {@code raid-lease} of its default column family. Unknown fields are ignored on read.
 * Immutable; thread-safe.
 *
 * @param holder        who holds it, or null when it is free or has expired
 * @param expiresMillis when it runs out (directory clock), epoch milliseconds
 * @param epoch         grows by one each time the lease changes hands
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record RaidLease(String holder, long expiresMillis, long epoch) {
}
