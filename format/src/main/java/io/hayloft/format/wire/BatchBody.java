package io.hayloft.format.wire;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The body of a store multi-write, {@code POST /<volume>/batch}: needles back to back, big-endian,
 * no padding. The client encodes it, the store parses it; this is its one definition.
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

    /** One needle of a batch as the encoder sees it (the client's {@code NeedleData}). */
    public interface Record {
        long key();

        long cookie();

        int alt();

        byte[] data();
    }

    /** Makes the parser's result from one record; {@code data} is a copy the caller owns. */
    @FunctionalInterface
    public interface Maker<T> {
        T make(long key, long cookie, int alt, byte[] data);
    }

    /** A body that does not parse; the message names the record and the byte where it went wrong. */
    public static final class MalformedBatchException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        MalformedBatchException(String message) {
            super(message);
        }
    }

    /** The encoded size of {@code records}. */
    public static long size(List<? extends Record> records) {
        long n = 0;
        for (Record r : records) {
            n += RECORD_HEADER + r.data().length;
        }
        return n;
    }

    /**
     * Encodes {@code records} into one array.
     *
     * @throws IllegalArgumentException when the list is empty or the body would exceed 2 GiB
     */
    public static byte[] encode(List<? extends Record> records) {
        if (records.isEmpty()) {
            throw new IllegalArgumentException("a batch needs at least one needle");
        }
        long size = size(records);
        if (size > Integer.MAX_VALUE - 64) {
            throw new IllegalArgumentException("batch of " + records.size() + " needles is " + size
                    + " bytes, more than one request can carry");
        }
        ByteBuffer b = ByteBuffer.allocate((int) size);
        for (Record r : records) {
            b.putLong(r.key()).putLong(r.cookie()).putInt(r.alt()).putInt(r.data().length).put(r.data());
        }
        return b.array();
    }

    /**
     * Parses a whole body from its position to its limit (the buffer itself is not moved); the data
     * handed to {@code maker} are copies, independent of {@code body}.
     *
     * @param maxDataSize the largest data size a record may declare
     * @throws MalformedBatchException when a record is truncated, declares too much data, or the body is empty
     */
    public static <T> List<T> parse(ByteBuffer body, long maxDataSize, Maker<T> maker) {
        List<T> out = new ArrayList<>();
        ByteBuffer b = body.duplicate();
        while (b.hasRemaining()) {
            int at = b.position() - body.position();
            if (b.remaining() < RECORD_HEADER) {
                throw new MalformedBatchException("batch record " + out.size() + " at byte " + at
                        + " is truncated: " + b.remaining() + " bytes left, a record header needs " + RECORD_HEADER);
            }
            long key = b.getLong();
            long cookie = b.getLong();
            int alt = b.getInt();
            long n = Integer.toUnsignedLong(b.getInt());
            if (n > maxDataSize || n > b.remaining()) {
                throw new MalformedBatchException("batch record " + out.size() + " at byte " + at
                        + " declares " + n + " data bytes but " + b.remaining() + " remain");
            }
            byte[] data = new byte[(int) n];
            b.get(data);
            out.add(maker.make(key, cookie, alt, data));
        }
        if (out.isEmpty()) {
            throw new MalformedBatchException("batch body is empty");
        }
        return out;
    }
}
