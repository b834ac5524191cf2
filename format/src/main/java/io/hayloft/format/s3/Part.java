package io.hayloft.format.s3;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;
import java.util.Map;

/**
 * One uploaded part of a multipart upload (the last upload of its number wins). Immutable; thread-safe.
 *
 * @param number    1 to 10000
 * @param etag      hex MD5 of the part's data, without quotes
 * @param checksums algorithm name to base64 value, as for {@link ObjectRecord#checksums()}
 * @param modified  epoch milliseconds (the directory leader's clock)
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record Part(int number, long size, String etag, List<Chunk> chunks, Map<String, String> checksums, long modified) {
    public Part {
        chunks = chunks == null ? List.of() : List.copyOf(chunks);
        checksums = checksums == null ? Map.of() : Map.copyOf(checksums);
    }
}
