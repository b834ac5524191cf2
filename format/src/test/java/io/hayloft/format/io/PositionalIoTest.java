package io.hayloft.format.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The loops finish what a channel's positional read and write leave undone, and say when the file ends first. */
class PositionalIoTest {
    @TempDir
    Path dir;

    private static byte[] bytes(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 7 + 3);
        }
        return b;
    }

    @Test
    void readsAndWritesWholeThroughAChannelThatMovesAFewBytesPerCall() throws IOException {
        for (int step : new int[] {1, 3, 64}) {
            Trickle ch = new Trickle(new byte[100], step);
            byte[] data = bytes(37);
            ByteBuffer src = ByteBuffer.wrap(data, 2, 35);
            PositionalIo.writeFully(ch, src, 50);
            assertThat(src.hasRemaining()).isFalse();
            assertThat(Arrays.copyOfRange(ch.file, 50, 85)).isEqualTo(Arrays.copyOfRange(data, 2, 37));
            assertThat(ch.position()).as("the channel's position is not moved").isZero();
            assertThat(ch.calls).isEqualTo((35 + step - 1) / step);

            ByteBuffer dst = ByteBuffer.allocate(40).position(5);
            PositionalIo.readFully(ch, dst, 50);
            assertThat(dst.position()).isEqualTo(40);
            assertThat(Arrays.copyOfRange(dst.array(), 5, 40)).isEqualTo(Arrays.copyOfRange(data, 2, 37));
        }
    }

    @Test
    void readFullyFailsWhenTheFileEndsFirstAndReadUpToStopsThere() throws IOException {
        Trickle ch = new Trickle(bytes(10), 3);
        ByteBuffer dst = ByteBuffer.allocate(8);
        assertThatThrownBy(() -> PositionalIo.readFully(ch, dst, 4)).isInstanceOf(EOFException.class)
                .hasMessageContaining("file ends at byte 10, 2 bytes short of the 8 read at 4");
        assertThat(dst.position()).as("what was there was read").isEqualTo(6);

        ByteBuffer up = ByteBuffer.allocate(8);
        assertThat(PositionalIo.readUpTo(ch, up, 4)).isEqualTo(6);
        assertThat(Arrays.copyOf(up.array(), 6)).isEqualTo(Arrays.copyOfRange(bytes(10), 4, 10));
        assertThat(PositionalIo.readUpTo(ch, ByteBuffer.allocate(1), 10)).as("at the end").isZero();
        assertThat(PositionalIo.readUpTo(ch, ByteBuffer.allocate(1), 11)).as("past the end").isZero();
        assertThatThrownBy(() -> PositionalIo.readFully(ch, ByteBuffer.allocate(1), 10)).isInstanceOf(EOFException.class);
    }

    @Test
    void emptyBuffersNeedNoCall() throws IOException {
        Trickle ch = new Trickle(new byte[0], 1);
        PositionalIo.readFully(ch, ByteBuffer.allocate(0), 0);
        PositionalIo.writeFully(ch, ByteBuffer.allocate(0), 5);
        assertThat(PositionalIo.readUpTo(ch, ByteBuffer.allocate(0), 7)).isZero();
        assertThat(ch.calls).isZero();
    }

    @Test
    void aRealFileRoundTrips() throws IOException {
        Path f = dir.resolve("f");
        byte[] data = bytes(70_000);
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            PositionalIo.writeFully(ch, ByteBuffer.wrap(data), 1);
            ByteBuffer back = ByteBuffer.allocateDirect(data.length);
            PositionalIo.readFully(ch, back, 1);
            byte[] got = new byte[data.length];
            back.flip().get(got);
            assertThat(got).isEqualTo(data);
            assertThatThrownBy(() -> PositionalIo.readFully(ch, ByteBuffer.allocate(2), data.length))
                    .isInstanceOf(EOFException.class).hasMessageContaining("1 bytes short");
        }
        assertThat(Files.size(f)).isEqualTo(data.length + 1);
    }

    /** A file in memory whose positional read and write move at most {@code step} bytes per call. */
    private static final class Trickle extends FileChannel {
        byte[] file;
        final int step;
        int calls;

        Trickle(byte[] file, int step) {
            this.file = file;
            this.step = step;
        }

        @Override
        public int read(ByteBuffer dst, long position) {
            calls++;
            if (position >= file.length) {
                return -1;
            }
            int n = (int) Math.min(Math.min(step, dst.remaining()), file.length - position);
            dst.put(file, (int) position, n);
            return n;
        }

        @Override
        public int write(ByteBuffer src, long position) {
            calls++;
            int n = Math.min(step, src.remaining());
            if (position + n > file.length) {
                file = Arrays.copyOf(file, (int) position + n);
            }
            src.get(file, (int) position, n);
            return n;
        }

        @Override
        public long position() {
            return 0;
        }

        @Override
        public long size() {
            return file.length;
        }

        @Override
        public int read(ByteBuffer dst) {
            throw new UnsupportedOperationException();
        }

        @Override
        public long read(ByteBuffer[] dsts, int offset, int length) {
            throw new UnsupportedOperationException();
        }

        @Override
        public int write(ByteBuffer src) {
            throw new UnsupportedOperationException();
        }

        @Override
        public long write(ByteBuffer[] srcs, int offset, int length) {
            throw new UnsupportedOperationException();
        }

        @Override
        public FileChannel position(long newPosition) {
            throw new UnsupportedOperationException();
        }

        @Override
        public FileChannel truncate(long size) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void force(boolean metaData) {
        }

        @Override
        public long transferTo(long position, long count, WritableByteChannel target) {
            throw new UnsupportedOperationException();
        }

        @Override
        public long transferFrom(ReadableByteChannel src, long position, long count) {
            throw new UnsupportedOperationException();
        }

        @Override
        public MappedByteBuffer map(MapMode mode, long position, long size) {
            throw new UnsupportedOperationException();
        }

        @Override
        public FileLock lock(long position, long size, boolean shared) {
            throw new UnsupportedOperationException();
        }

        @Override
        public FileLock tryLock(long position, long size, boolean shared) {
            throw new UnsupportedOperationException();
        }

        @Override
        protected void implCloseChannel() {
        }
    }
}
