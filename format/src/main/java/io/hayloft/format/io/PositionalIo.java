package io.hayloft.format.io;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

/**
 * Positional file reads and writes that loop until done: a {@link FileChannel}'s positional
 * {@code read} and {@code write} may move fewer bytes than asked. The one copy of these loops for
 * every module that reads or writes volume, block, index and spool files (it lives at the bottom
 * of the module stack so that the cold tier, below the servers, uses it too). The channel's own
 * position is never used or moved.
 *
 * <p>Thread-safe (stateless; concurrent positional I/O on one channel is the channel's business).
 */
public final class PositionalIo {
    private PositionalIo() {
    }

    /**
     * Fills {@code dst} (from its position to its limit) with the bytes of {@code ch} from {@code pos}.
     *
     * @throws EOFException when the file ends first ({@code dst} then holds what was there)
     */
    public static void readFully(FileChannel ch, ByteBuffer dst, long pos) throws IOException {
        long at = pos + readUpTo(ch, dst, pos);
        if (dst.hasRemaining()) {
            throw new EOFException("file ends at byte " + at + ", " + dst.remaining() + " bytes short of the "
                    + (at - pos + dst.remaining()) + " read at " + pos);
        }
    }

    /**
     * Reads into {@code dst} from {@code pos} until it is full or the file ends, whichever comes
     * first: for callers that judge a short read themselves (a torn tail is not an I/O error).
     *
     * @return the number of bytes read; fewer than {@code dst} had room for only at the end of the file
     */
    public static int readUpTo(FileChannel ch, ByteBuffer dst, long pos) throws IOException {
        int read = 0;
        while (dst.hasRemaining()) {
            int n = ch.read(dst, pos + read);
            if (n < 0) {
                break;
            }
            read += n;
        }
        return read;
    }

    /** Writes all of {@code src} (from its position to its limit) to {@code ch} at {@code pos}. */
    public static void writeFully(FileChannel ch, ByteBuffer src, long pos) throws IOException {
        long at = pos;
        while (src.hasRemaining()) {
            at += ch.write(src, at);
        }
    }
}
