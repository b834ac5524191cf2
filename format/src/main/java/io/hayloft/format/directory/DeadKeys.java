package io.hayloft.format.directory;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * The answer of {@code POST /v1/volumes/{id}/dead-keys} (docs/directory-api.md): exactly the keys
 * of the request that the volume's delete log holds, with any cookie. Unknown fields are ignored on
 * read. Immutable; thread-safe.
 *
 * @param volume the volume asked about
 * @param dead   the logged keys among those asked
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record DeadKeys(int volume, List<Long> dead) {
    public DeadKeys {
        dead = dead == null ? List.of() : List.copyOf(dead);
    }
}
