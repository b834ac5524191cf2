package io.hayloft.erasure;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * Where a codec reads the units of a stripe from: files, a store server, memory. Units are numbered
 * {@code 0..k-1} for data and {@code k..k+r-1} for parity. The codec names every byte range it needs,
 * so a reader that counts bytes sees exactly what a repair costs.
 */
@FunctionalInterface
public interface UnitReader {
    /**
     * Fills {@code dst} from its position to its limit with the bytes of {@code unit} starting at
     * {@code offset}. On return the position equals the limit.
     *
     * @throws IOException if the unit cannot be read; the codec does not retry
     */
    void read(int unit, long offset, ByteBuffer dst) throws IOException;
}
