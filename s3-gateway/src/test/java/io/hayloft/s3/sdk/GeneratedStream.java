package io.hayloft.s3.sdk;

import java.io.InputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * {@code length} pseudo-random bytes made on the fly from a seed (a 64-bit xorshift), never held in
 * memory, the same every time; with the SHA-256 of what it gave. Not thread-safe.
 */
public final class GeneratedStream extends InputStream {
    private final long length;
    private final MessageDigest sha256;
    private long position;
    private long state;
    private long word;

    public GeneratedStream(long seed, long length) {
        this.length = length;
        this.state = seed == 0 ? 0x9E3779B97F4A7C15L : seed;
        try {
            this.sha256 = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private byte next() {
        if ((position & 7) == 0) {
            state ^= state << 13;
            state ^= state >>> 7;
            state ^= state << 17;
            word = state;
        }
        byte b = (byte) (word >>> ((position & 7) * 8));
        position++;
        return b;
    }

    @Override
    public int read() {
        if (position >= length) {
            return -1;
        }
        byte b = next();
        sha256.update(b);
        return b & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) {
        if (position >= length) {
            return -1;
        }
        int n = (int) Math.min(len, length - position);
        for (int i = 0; i < n; i++) {
            b[off + i] = next();
        }
        sha256.update(b, off, n);
        return n;
    }

    /** Reads what is left and returns the SHA-256 of all the bytes. */
    public byte[] readAllAndDigest() {
        byte[] buf = new byte[1 << 16];
        while (read(buf, 0, buf.length) >= 0) {
            // digesting
        }
        return sha256();
    }

    /** The SHA-256 of the bytes read so far (all of them once the stream is at its end). */
    public byte[] sha256() {
        try {
            return ((MessageDigest) sha256.clone()).digest();
        } catch (CloneNotSupportedException e) {
            throw new IllegalStateException(e);
        }
    }
}
