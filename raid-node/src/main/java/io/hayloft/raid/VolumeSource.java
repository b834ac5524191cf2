package io.hayloft.raid;

import java.io.IOException;

/**
 * The bytes of a sealed volume, as the encoder reads them: a replica on a store
 * ({@link ReplicaSource}), or a volume image rebuilt without its dead needles (reclaim). Offsets are
 * offsets in the volume file (superblock first, docs/formats.md).
 *
 * <p>Implementations say whether they are thread-safe, and answer {@link #threadSafe()} accordingly:
 * the encoder reads the stripes of a volume in parallel, and funnels the reads of a source that is not
 * thread-safe through one lock.
 */
public interface VolumeSource {

    /** The logical volume these bytes belong to. */
    int volume();

    /** Bytes in the volume file. */
    long size();

    /**
     * Reads {@code length} bytes at {@code offset}; the range lies within {@link #size()}.
     *
     * @throws IOException when no copy of the range can be read
     */
    byte[] read(long offset, int length) throws IOException;

    /** True when {@link #read} may be called from several threads at once. */
    default boolean threadSafe() {
        return false;
    }
}
