package io.hayloft.cli.ec;

import java.util.Locale;

/**
 * How {@code hayloft ec} cuts a file into blocks and stripes. A file of {@code length} bytes is cut
 * into blocks of {@code blockSize} bytes; {@code k} consecutive blocks form a stripe, which gets
 * {@code r} parity blocks of {@code blockSize} bytes each. Data unit {@code j} of stripe {@code s}
 * holds file bytes {@code [(s*k + j) * blockSize, (s*k + j + 1) * blockSize)}.
 *
 * <p>Padding is logical: the last data block holds only the file's real bytes (it may be shorter
 * than {@code blockSize}) and data blocks wholly past the end of the file are not written at all.
 * The codec sees every data unit as {@code blockSize} bytes, the missing tail being zeros. An empty
 * file has no stripes. Immutable and thread-safe.
 */
public final class StripeLayout {

    private final int k;
    private final int r;
    private final long blockSize;
    private final long length;

    /** @throws IllegalArgumentException naming the bad value */
    public StripeLayout(int k, int r, long blockSize, long length) {
        if (k < 1) {
            throw new IllegalArgumentException("k must be at least 1, got " + k);
        }
        if (r < 1) {
            throw new IllegalArgumentException("r must be at least 1, got " + r);
        }
        if (k + r > 256) {
            throw new IllegalArgumentException("k + r must be at most 256, got " + k + " + " + r);
        }
        if (blockSize < 1) {
            throw new IllegalArgumentException("block size must be positive, got " + blockSize);
        }
        if (length < 0) {
            throw new IllegalArgumentException("file length must not be negative, got " + length);
        }
        this.k = k;
        this.r = r;
        this.blockSize = blockSize;
        this.length = length;
    }

    public int k() {
        return k;
    }

    public int r() {
        return r;
    }

    public int totalUnits() {
        return k + r;
    }

    public long blockSize() {
        return blockSize;
    }

    public long length() {
        return length;
    }

    /** Stripes needed for the file: {@code ceil(length / (k * blockSize))}, 0 for an empty file. */
    public long stripes() {
        long stripeBytes = k * blockSize;
        return length / stripeBytes + (length % stripeBytes == 0 ? 0 : 1);
    }

    public boolean isData(int unit) {
        return unit < k;
    }

    /** Offset in the original file of the first byte of data unit {@code unit} of {@code stripe}. */
    public long fileOffset(long stripe, int unit) {
        checkUnit(unit);
        if (unit >= k) {
            throw new IllegalArgumentException("unit " + unit + " is a parity unit; it has no file offset");
        }
        return (stripe * k + unit) * blockSize;
    }

    /**
     * Bytes stored in the block file of {@code unit} of {@code stripe}: {@code blockSize} for parity,
     * the file's real bytes (0 to {@code blockSize}) for data. A data block of length 0 is not written.
     */
    public long storedLength(long stripe, int unit) {
        checkUnit(unit);
        if (stripe < 0 || stripe >= stripes()) {
            throw new IllegalArgumentException("stripe " + stripe + " out of range 0.." + (stripes() - 1));
        }
        if (unit >= k) {
            return blockSize;
        }
        long start = fileOffset(stripe, unit);
        return Math.max(0, Math.min(blockSize, length - start));
    }

    /** Whether {@code unit} of {@code stripe} has a block file (every parity, and data with real bytes). */
    public boolean hasFile(long stripe, int unit) {
        return storedLength(stripe, unit) > 0;
    }

    /** The block file name: {@code s000000-d03.blk} for data unit 3, {@code s000000-p01.blk} for parity 1. */
    public String fileName(long stripe, int unit) {
        return name(k, stripe, unit);
    }

    /** The block file name of {@code unit} for a code with {@code k} data units. */
    public static String name(int k, long stripe, int unit) {
        boolean data = unit < k;
        return String.format(Locale.ROOT, "s%06d-%s%02d.blk", stripe, data ? "d" : "p", data ? unit : unit - k);
    }

    /** A unit's short label within its stripe: {@code d03}, {@code p01}. */
    public String unitLabel(int unit) {
        checkUnit(unit);
        return unit < k ? String.format(Locale.ROOT, "d%02d", unit) : String.format(Locale.ROOT, "p%02d", unit - k);
    }

    private void checkUnit(int unit) {
        if (unit < 0 || unit >= k + r) {
            throw new IllegalArgumentException("unit " + unit + " out of range 0.." + (k + r - 1));
        }
    }
}
