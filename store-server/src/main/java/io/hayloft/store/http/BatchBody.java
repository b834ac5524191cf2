package io.hayloft.store.http;

import io.hayloft.common.http.ApiException;
import io.hayloft.store.volume.Needle;
import io.hayloft.store.volume.Volume;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;

/**
 * The body of {@code POST /<volume>/batch}: needles back to back, big-endian, no padding.
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
    public static final int RECORD_HEADER = 24;

    private BatchBody() {
    }

    /** Parses a whole body; the returned buffers are copies, independent of {@code body}. */
    public static List<Volume.NeedleWrite> parse(ByteBuf body) {
        List<Volume.NeedleWrite> out = new ArrayList<>();
        ByteBuf b = body.duplicate();
        while (b.isReadable()) {
            int at = b.readerIndex() - body.readerIndex();
            if (b.readableBytes() < RECORD_HEADER) {
                throw new ApiException(StoreErrors.BAD_ARGUMENT, "batch record " + out.size() + " at byte " + at
                        + " is truncated: " + b.readableBytes() + " bytes left, a record header needs " + RECORD_HEADER);
            }
            long key = b.readLong();
            long cookie = b.readLong();
            int alt = b.readInt();
            long n = b.readUnsignedInt();
            if (n > Needle.MAX_DATA_SIZE || n > b.readableBytes()) {
                throw new ApiException(StoreErrors.BAD_ARGUMENT, "batch record " + out.size() + " at byte " + at
                        + " declares " + n + " data bytes but " + b.readableBytes() + " remain");
            }
            byte[] data = new byte[(int) n];
            b.readBytes(data);
            out.add(new Volume.NeedleWrite(key, alt, cookie, java.nio.ByteBuffer.wrap(data)));
        }
        if (out.isEmpty()) {
            throw new ApiException(StoreErrors.BAD_ARGUMENT, "batch body is empty");
        }
        return out;
    }

    /** Encodes needles into a batch body (for clients and tests). */
    public static void encode(ByteBuf out, long key, long cookie, int alt, byte[] data) {
        out.writeLong(key).writeLong(cookie).writeInt(alt).writeInt(data.length).writeBytes(data);
    }
}
