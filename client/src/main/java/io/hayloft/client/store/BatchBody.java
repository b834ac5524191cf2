package io.hayloft.client.store;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * Encodes the body of a store multi-write, {@code POST /<volume>/batch}: the needles back to back,
 * big-endian, no padding (the store's {@code io.hayloft.store.http.BatchBody} parses it):
 * <pre>
 * offset size field
 *      0    8 key
 *      8    8 cookie
 *     16    4 alternate key
 *     20    4 data size n (unsigned)
 *     24    n data
 * </pre>
 * Thread-safe (stateless).
 */
public final class BatchBody {
    /** Bytes of a record before its data: key, cookie, alternate key, size. */
    public static final int RECORD_HEADER = 8 + 8 + 4 + 4;

    private BatchBody() {
    }

    /** The encoded size of {@code needles}. */
    public static long size(List<NeedleData> needles) {
        long n = 0;
        for (NeedleData d : needles) {
            n += RECORD_HEADER + d.data().length;
        }
        return n;
    }

    /**
     * Encodes {@code needles} into one array.
     *
     * @throws IllegalArgumentException when the list is empty or the body would exceed 2 GiB
     */
    public static byte[] encode(List<NeedleData> needles) {
        if (needles.isEmpty()) {
            throw new IllegalArgumentException("a batch needs at least one needle");
        }
        long size = size(needles);
        if (size > Integer.MAX_VALUE - 64) {
            throw new IllegalArgumentException("batch of " + needles.size() + " needles is " + size
                    + " bytes, more than one request can carry");
        }
        ByteBuffer b = ByteBuffer.allocate((int) size);
        for (NeedleData d : needles) {
            b.putLong(d.key()).putLong(d.cookie()).putInt(d.alt()).putInt(d.data().length).put(d.data());
        }
        return b.array();
    }
}
