package io.hayloft.format.s3;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * Needles that no key refers to (yet, or any more), named so that none is ever lost track of.
 *
 * <ul>
 * <li>{@code WRITING}: a gateway records each chunk here before it writes the needle; the commit of the
 *     object (or part) that takes the chunks removes the record in the same change. A commit whose
 *     pending record is gone or doomed fails, so the gateway never acknowledges data the sweep frees.</li>
 * <li>{@code DOOMED}: chunks to delete: those of an overwritten or deleted object, a replaced part, an
 *     aborted upload, or a {@code WRITING} record older than the sweep's limit. The gateway (or the
 *     sweep, after a crash) deletes the needles, then the record.</li>
 * </ul>
 * Immutable; thread-safe.
 *
 * @param created epoch milliseconds when the record was made (the directory leader's clock)
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record Pending(String id, String state, List<Chunk> chunks, long created) {
    public static final String WRITING = "WRITING";
    public static final String DOOMED = "DOOMED";

    public Pending {
        chunks = chunks == null ? List.of() : List.copyOf(chunks);
    }
}
