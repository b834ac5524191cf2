package io.hayloft.s3.data;

import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.format.s3.Chunk;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * The bytes {@code [offset, offset + length)} of data made of chunks: only the chunks that cover the
 * range are read, the first and last sliced; while one chunk is being consumed the next is already
 * fetched ({@link HayloftClient#getAsync}), so at most two chunks are held in memory. A chunk whose
 * needle cannot be read, or that does not hold its recorded size, fails {@link #read} with an
 * IOException. Not thread-safe: one reader.
 */
final class ChunkInputStream extends InputStream {
    private final HayloftClient client;
    private final List<Chunk> chunks;
    private long remaining; // bytes of the range not yet returned
    private int next; // index of the chunk after the current one
    private long skipInNext; // bytes of chunk `next` before the range (only the first chunk has any)
    private static final byte[] EMPTY = new byte[0];
    private byte[] current = EMPTY;
    private int pos; // next byte of current
    private int end; // end of the range in current
    private CompletableFuture<byte[]> prefetch; // chunk `next`, fetched in the background
    private boolean closed;

    ChunkInputStream(HayloftClient client, List<Chunk> chunks, long offset, long length) {
        this.client = Objects.requireNonNull(client, "client");
        this.chunks = List.copyOf(chunks);
        long total = 0;
        for (Chunk c : this.chunks) {
            total += c.size();
        }
        if (offset < 0 || length < 0 || offset > total || length > total - offset) {
            throw new IllegalArgumentException("range " + offset + "+" + length + " outside data of " + total + " bytes");
        }
        this.remaining = length;
        long start = 0;
        int i = 0;
        while (i < this.chunks.size() && start + this.chunks.get(i).size() <= offset) {
            start += this.chunks.get(i).size();
            i++;
        }
        this.next = i;
        this.skipInNext = offset - start;
        if (remaining > 0) {
            prefetch = fetch(next);
        }
    }

    private CompletableFuture<byte[]> fetch(int i) {
        try {
            return client.getAsync(chunks.get(i).photo());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Makes chunk {@code next} current (waiting for its fetch) and starts fetching the one after it when the range needs it. */
    private void advance() throws IOException {
        Chunk c = chunks.get(next);
        byte[] data;
        try {
            data = Futures.await(prefetch);
        } catch (RuntimeException e) {
            prefetch = null;
            throw new IOException("cannot read chunk " + c.photo() + " (" + c.size() + " bytes): " + e.getMessage(), e);
        }
        if (data.length != c.size()) {
            throw new IOException("chunk " + c.photo() + " holds " + data.length + " bytes, not the " + c.size() + " recorded");
        }
        current = data;
        pos = (int) skipInNext;
        skipInNext = 0;
        end = (int) Math.min(data.length, pos + remaining);
        next++;
        // The next chunk is fetched while this one is read: two chunks in memory at most.
        prefetch = remaining > end - pos ? fetch(next) : null;
    }

    @Override
    public int read() throws IOException {
        byte[] one = new byte[1];
        int n = read(one, 0, 1);
        return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
        Objects.checkFromIndexSize(off, len, b.length);
        if (closed) {
            throw new IOException("stream closed");
        }
        if (len == 0) {
            return 0;
        }
        if (remaining == 0) {
            return -1;
        }
        if (pos == end) {
            advance();
        }
        int n = Math.min(len, end - pos);
        System.arraycopy(current, pos, b, off, n);
        pos += n;
        remaining -= n;
        if (pos == end) {
            current = EMPTY; // not held while the next is awaited
            pos = 0;
            end = 0;
        }
        return n;
    }

    @Override
    public int available() {
        return end - pos;
    }

    @Override
    public void close() {
        closed = true;
        current = null;
        prefetch = null;
    }
}
