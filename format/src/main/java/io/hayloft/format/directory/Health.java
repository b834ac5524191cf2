package io.hayloft.format.directory;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * The directory's {@code GET /health} answer (docs/directory-api.md, docs/security.md): stores,
 * caches and raid-nodes compare {@code secured} and {@code admin} with their own settings at start
 * and refuse a mismatch. Unknown fields are ignored on read. Immutable; thread-safe.
 *
 * @param status  {@code ok}
 * @param cluster the cluster's id
 * @param secured whether the directory has a {@code clusterSecret}; null when the answer does not say
 * @param admin   whether it has an {@code adminToken}; null when the answer does not say
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record Health(String status, String cluster, Boolean secured, Boolean admin) {
}
