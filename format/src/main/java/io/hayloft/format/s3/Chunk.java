package io.hayloft.format.s3;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import io.hayloft.format.wire.PhotoId;

/**
 * One piece of an object's data: one needle (alternate key 0) of {@code size} bytes on logical volume
 * {@code volume}. An object's chunks, in order, are its bytes. Immutable; thread-safe.
 *
 * @param volume logical volume id
 * @param key    photo key (unsigned 64-bit, as the directory's allocator hands them out)
 * @param cookie the needle's cookie
 * @param size   bytes in this chunk, at least 1
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record Chunk(int volume, long key, long cookie, long size) {

    public static Chunk of(PhotoId id, long size) {
        return new Chunk(id.volume(), id.key(), id.cookie(), size);
    }

    /** The needle that holds this chunk. */
    public PhotoId photo() {
        return new PhotoId(volume, key, 0, cookie);
    }
}
