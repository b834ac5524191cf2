package io.hayloft.client.store;

import io.hayloft.format.wire.BatchBody;
import java.util.Objects;

/**
 * One needle to write in a multi-write ({@link BatchBody}): key, alternate key, cookie and the data. The array is not
 * copied: do not modify it until the write completed.
 *
 * <p>Immutable as long as the caller leaves {@code data} alone.
 */
public record NeedleData(long key, int alt, long cookie, byte[] data) implements BatchBody.Record {
    public NeedleData {
        Objects.requireNonNull(data, "data");
        if (key < 0) {
            throw new IllegalArgumentException("key must be >= 0, was " + key);
        }
    }
}
