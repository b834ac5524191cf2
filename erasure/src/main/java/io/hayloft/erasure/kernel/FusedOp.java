package io.hayloft.erasure.kernel;

import java.nio.ByteBuffer;

/**
 * A fixed sequence of {@link FusedStep matrix products} over one set of buffers, prepared by
 * {@link GfKernel#prepareFused}, that runs a tile at a time: every step runs on bytes
 * {@code [t, t + tile)} of its buffers before any step moves on to the next tile, so a tile read by
 * several steps (or written by one step and read or accumulated into by the next) is still in cache.
 * Codes whose parity is several products over the same inputs (Hitchhiker: RS on each substripe,
 * piggybacks, coupling) do all of it in one pass over their data this way.
 *
 * <p>Buffer contract: buffer {@code x} is read and written at
 * {@code buffers[x].position() .. position() + len}; no position, limit or mark changes; heap and
 * direct buffers may be mixed. Buffers written by a step must not overlap any other buffer.
 *
 * <p>Immutable once prepared and safe for concurrent use by many threads. A native op holds native
 * memory: {@link #close()} frees it, is idempotent, and after it {@code apply} throws
 * {@link IllegalStateException}.
 */
public interface FusedOp extends AutoCloseable {

    /** How many buffers {@link #apply} takes (one more than the largest index of any step). */
    int buffers();

    /**
     * Runs every step, in order, over {@code len} bytes of the buffers, a tile at a time.
     *
     * @throws IllegalArgumentException naming the buffer when the count, a size or a read-only output is wrong
     */
    void apply(ByteBuffer[] buffers, int len);

    @Override
    default void close() {
    }
}
