package io.hayloft.format.s3;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * One page of a bucket's keys in UTF-8 byte order: the objects and the common prefixes (keys rolled
 * up at the delimiter), at most {@code maxKeys} of both together. Immutable; thread-safe.
 *
 * @param truncated whether more follow
 * @param next      when truncated: the last key or common prefix of this page; the next page starts after it
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record Listing(List<ObjectRecord> objects, List<String> commonPrefixes, boolean truncated, String next) {
    public Listing {
        objects = objects == null ? List.of() : List.copyOf(objects);
        commonPrefixes = commonPrefixes == null ? List.of() : List.copyOf(commonPrefixes);
    }
}
