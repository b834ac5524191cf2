package io.hayloft.store.http;

import io.hayloft.format.errors.StoreErrors;
import io.hayloft.format.errors.ApiException;
import io.hayloft.format.errors.CommonErrors;
import io.hayloft.serverkit.http.HttpResponses;
import io.hayloft.serverkit.http.StreamedRequestHandler;
import io.hayloft.store.block.BlockStore;
import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.zip.CRC32C;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The body of one streamed {@code PUT /blocks/<name>} (docs/store-api.md "Block files"): every piece
 * is written, as it arrives, into a {@link BlockStore.Writer} (its own {@code <name>~<n>.blk.enc.tmp})
 * and added to the block's CRC32C. At the end the CRC32C is checked against the one the client gave
 * ({@value #CRC_HEADER}, in the request head or, for a chunked body whose sender learns it only at the
 * end, in its trailer; both when both are given), then the writer commits: the file forced, renamed
 * over any block of that name, the directory forced, and the CRC recorded for {@code GET /blocks}
 * (no re-read). A body longer than the store's {@code maxBlockBytes} is refused 413 as soon as it
 * passes the limit; a mismatch is 400 {@code BLOCK_CRC_MISMATCH}; either way, and when the client goes
 * away mid-body, {@link #abort} deletes the temporary file and the block stays as it was.
 *
 * <p>Wire: {@value #CRC_HEADER} is the unsigned CRC32C as 1 to 8 hexadecimal digits (either case), as
 * the store's needle reads send it (8 lower-case digits). The answer is 201
 * {@code {"block","length","crc32c"}} with {@code crc32c} as an unsigned decimal, as in the listing.
 *
 * <p>Not thread-safe: the server calls it serially (see {@link StreamedRequestHandler}).
 */
final class StreamedBlockPut implements StreamedRequestHandler.RequestBody {
    private static final Logger LOG = LoggerFactory.getLogger(StreamedBlockPut.class);
    /** Request header or trailer: the CRC32C the block must have. */
    static final String CRC_HEADER = StoreHttpHandler.CRC_HEADER;

    private final BlockStore.Writer writer;
    private final long maxBytes;
    private final Long expected;
    private final CRC32C crc = new CRC32C();
    private long length;

    /**
     * @param expected the CRC32C from the request head, or null
     */
    StreamedBlockPut(BlockStore.Writer writer, long maxBytes, Long expected) {
        this.writer = writer;
        this.maxBytes = maxBytes;
        this.expected = expected;
    }

    @Override
    public void content(ByteBuf chunk) throws IOException {
        int n = chunk.readableBytes();
        if (length + n > maxBytes) {
            throw CommonErrors.BODY_TOO_LARGE.exception("block " + writer.name() + " is longer than the store's maxBlockBytes ("
                    + maxBytes + " bytes)");
        }
        length += n;
        for (ByteBuffer b : chunk.nioBuffers()) {
            crc.update(b.duplicate());
            writer.append(b);
        }
    }

    @Override
    public FullHttpResponse end(HttpHeaders trailers) throws IOException {
        long got = crc.getValue();
        Long trailer = parseCrc(trailers.get(CRC_HEADER), "trailer");
        for (Long want : new Long[] {expected, trailer}) {
            if (want != null && want != got) {
                throw StoreErrors.BLOCK_CRC_MISMATCH.exception("block " + writer.name() + ": the " + length
                        + " bytes received have CRC32C " + hex(got) + ", the request says " + hex(want)
                        + "; block " + writer.name() + " left as it was");
            }
        }
        writer.commit(got);
        return HttpResponses.json(HttpResponseStatus.CREATED, Map.of("block", writer.name(), "length", length, "crc32c", got));
    }

    @Override
    public void abort() {
        try {
            writer.close();
        } catch (IOException e) {
            LOG.warn("could not delete the temporary file of block {}", writer.name(), e);
        }
    }

    /**
     * The CRC32C in a {@value #CRC_HEADER} value (1..8 hex digits), or null when there is none.
     *
     * @param where "header" or "trailer", for the error message
     * @throws ApiException 400 naming the field and the bad value
     */
    static Long parseCrc(String value, String where) {
        if (value == null) {
            return null;
        }
        String v = value.trim();
        if (v.isEmpty() || v.length() > 8 || !v.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
            throw StoreErrors.BAD_ARGUMENT.exception(CRC_HEADER + " " + where + " must be the CRC32C as 1..8 hex digits, got '"
                    + (v.length() > 40 ? v.substring(0, 40) + "..." : v) + "'");
        }
        return Long.parseLong(v, 16);
    }

    private static String hex(long crc) {
        return String.format("%08x", crc);
    }
}
