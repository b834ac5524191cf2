package io.hayloft.cli.ec;

import io.hayloft.erasure.UnitReader;
import io.hayloft.format.io.PositionalIo;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;

/**
 * The block files of one stripe, opened for positional reads, as the {@link UnitReader} a codec reads
 * through. Data units are {@code blockSize} bytes to the codec: bytes past a block file's stored
 * length, and data units wholly past the end of the original file, read as zeros (logical padding,
 * see {@link StripeLayout}). Units the caller declared unavailable throw if the codec asks for them.
 * Counts the bytes the codec asks for ({@link #bytesRead()}), which is what the code's repair costs.
 * Not thread-safe: one codec call at a time.
 */
public final class StripeFiles implements UnitReader, AutoCloseable {

    private static final byte[] ZEROS = new byte[64 * 1024];

    private final Manifest manifest;
    private final long stripe;
    private final FileChannel[] channels;
    private final boolean[] available;
    private final Progress progress;
    private long bytesRead;
    private long diskBytesRead;

    /**
     * Opens every unit of {@code stripe} that has a block file and is not in {@code unavailable}.
     * Units past the end of the file are always available (they are zeros).
     */
    public StripeFiles(Path dir, Manifest manifest, long stripe, Set<Integer> unavailable, Progress progress)
            throws IOException {
        this.manifest = manifest;
        this.stripe = stripe;
        this.progress = progress;
        int n = manifest.layout().totalUnits();
        this.channels = new FileChannel[n];
        this.available = new boolean[n];
        try {
            for (int u = 0; u < n; u++) {
                if (unavailable.contains(u)) {
                    continue;
                }
                Manifest.Block b = manifest.block(stripe, u);
                if (b != null) {
                    channels[u] = FileChannel.open(dir.resolve(b.file()), StandardOpenOption.READ);
                }
                available[u] = true;
            }
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    @Override
    public void read(int unit, long offset, ByteBuffer dst) throws IOException {
        if (unit < 0 || unit >= available.length || !available[unit]) {
            throw new IOException("the codec asked for unit " + unit + " of stripe " + stripe
                    + ", which is unavailable");
        }
        int want = dst.remaining();
        long blockSize = manifest.layout().blockSize();
        if (offset < 0 || offset + want > blockSize) {
            throw new IOException("read of unit " + unit + " at " + offset + "+" + want + " is outside the block of "
                    + blockSize + " bytes");
        }
        bytesRead += want;
        Manifest.Block b = manifest.block(stripe, unit);
        long stored = b == null ? 0 : b.length();
        if (offset < stored) {
            int fromFile = (int) Math.min(want, stored - offset);
            int limit = dst.limit();
            dst.limit(dst.position() + fromFile);
            try {
                PositionalIo.readFully(channels[unit], dst, offset);
            } catch (EOFException e) {
                throw new IOException(b.file() + " ends before its length " + stored + ": " + e.getMessage(), e);
            }
            dst.limit(limit);
            diskBytesRead += fromFile;
        }
        fillZeros(dst);
        progress.add(want);
    }

    /** Fills {@code dst} from its position to its limit with zeros. */
    static void fillZeros(ByteBuffer dst) {
        while (dst.hasRemaining()) {
            int n = Math.min(dst.remaining(), ZEROS.length);
            dst.put(ZEROS, 0, n);
        }
    }

    /** Bytes the codec asked for, padding included. */
    public long bytesRead() {
        return bytesRead;
    }

    /** Bytes actually read from block files (padding excluded). */
    public long diskBytesRead() {
        return diskBytesRead;
    }

    @Override
    public void close() throws IOException {
        IOException first = null;
        for (FileChannel c : channels) {
            if (c != null) {
                try {
                    c.close();
                } catch (IOException e) {
                    first = first == null ? e : first;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
