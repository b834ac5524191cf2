package io.hayloft.erasure;

import java.io.IOException;
import java.nio.ByteBuffer;

/** Where a codec writes the units it computes (parity, or rebuilt units). */
@FunctionalInterface
public interface UnitWriter {
    /**
     * Writes {@code src} from its position to its limit into {@code unit} at {@code offset}. The
     * buffer is the codec's scratch space: copy it before returning if it must outlive the call.
     */
    void write(int unit, long offset, ByteBuffer src) throws IOException;
}
