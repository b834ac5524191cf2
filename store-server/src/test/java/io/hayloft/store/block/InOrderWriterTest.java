package io.hayloft.store.block;

import io.hayloft.serverkit.io.FileTrees;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.hayloft.serverkit.io.Disk;
import io.hayloft.serverkit.io.ForwardingDisk;
import io.hayloft.serverkit.io.SimulatedDisk;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link BlockStore#inOrderWriter}: around the page cache where the file system allows, through it
 * elsewhere, and byte for byte the same block either way, at every length around the alignment and
 * the staging buffer, written in pieces of any size.
 */
class InOrderWriterTest {
    private static final int STAGE = BlockStore.STAGE_BYTES;
    private static final long[] LENGTHS = {0, 1, 511, 512, 4095, 4096, 4097, 65_537, STAGE - 1, STAGE, STAGE + 1,
        2L * STAGE, 3L * STAGE + 123, 5L * STAGE - 4096};

    @TempDir
    Path dir;

    /** Whether this machine's temporary directory takes O_DIRECT (ext4, xfs: yes; tmpfs: no). */
    private boolean directPossible() throws IOException {
        Disk.Direct d = Disk.REAL.openDirect(dir.resolve("probe"));
        if (d == null) {
            return false;
        }
        d.channel().close();
        Files.delete(dir.resolve("probe"));
        return true;
    }

    @Test
    void everyLengthReadsBackExactInAnyPieces() throws Exception {
        boolean direct = directPossible();
        for (boolean allow : new boolean[] {true, false}) {
            BlockStore blocks = new BlockStore(Disk.REAL, dir.resolve("blocks-" + allow), true, allow);
            Random r = new Random(allow ? 7 : 8);
            for (long len : LENGTHS) {
                String name = "b" + len;
                byte[] data = new byte[(int) len];
                r.nextBytes(data);
                try (BlockStore.Writer w = blocks.inOrderWriter(name)) {
                    assertThat(w.direct()).as("O_DIRECT when allowed and possible").isEqualTo(allow && direct);
                    int at = 0;
                    while (at < data.length) {
                        // pieces from 1 byte to past the stage, heap and direct, not aligned
                        int n = Math.min(data.length - at, 1 + r.nextInt(r.nextBoolean() ? 100 : STAGE + 5000));
                        ByteBuffer piece = r.nextBoolean() ? ByteBuffer.allocate(n + 3).position(3).slice()
                                : ByteBuffer.allocateDirect(n + 5).position(5).slice();
                        piece.put(data, at, n).flip();
                        w.append(piece);
                        assertThat(piece.hasRemaining()).isFalse();
                        at += n;
                        assertThat(w.length()).isEqualTo(at);
                    }
                    w.commit(crc(data));
                }
                assertThat(read(blocks, name)).as("block of %d bytes", len).isEqualTo(data);
                assertThat(Files.size(dir.resolve("blocks-" + allow).resolve(name + ".blk"))).isEqualTo(len);
                assertThat(blocks.list()).filteredOn(b -> b.name().equals(name)).singleElement()
                        .satisfies(b -> assertThat(b.crc32c()).isEqualTo(crc(data)));
            }
            assertThat(leftovers(dir.resolve("blocks-" + allow))).isEmpty();
        }
    }

    @Test
    void aDirectWriterReplacesAnOldBlockAndANewStoreReadsIt() throws Exception {
        BlockStore blocks = new BlockStore(Disk.REAL, dir, true, true);
        blocks.put("x", ByteBuffer.wrap(new byte[3 * STAGE]));
        byte[] data = new byte[STAGE / 2 + 17];
        new Random(3).nextBytes(data);
        try (BlockStore.Writer w = blocks.inOrderWriter("x")) {
            w.append(ByteBuffer.wrap(data));
            w.commit(crc(data));
        }
        assertThat(read(new BlockStore(Disk.REAL, dir, true, true), "x")).isEqualTo(data);
    }

    @Test
    void writesOutOfOrderAndTheChannelAreRefused() throws Exception {
        assumeThat(directPossible()).as("this file system takes O_DIRECT").isTrue();
        BlockStore blocks = new BlockStore(Disk.REAL, dir, true, true);
        try (BlockStore.Writer w = blocks.inOrderWriter("y")) {
            w.append(ByteBuffer.wrap(new byte[10]));
            assertThatThrownBy(() -> w.write(ByteBuffer.wrap(new byte[1]), 0)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("written in order").hasMessageContaining("expected 10");
            assertThatThrownBy(w::channel).isInstanceOf(IllegalStateException.class);
            w.write(ByteBuffer.wrap(new byte[5]), 10); // at the end: fine
            assertThat(w.length()).isEqualTo(15);
        }
        assertThat(blocks.list()).isEmpty();
        assertThat(leftovers(dir)).isEmpty();
    }

    @Test
    void anAbandonedWriterLeavesNothingAndItsBufferServesTheNext() throws Exception {
        BlockStore blocks = new BlockStore(Disk.REAL, dir, true, true);
        long directBefore = directMemory();
        for (int i = 0; i < 100; i++) { // one after the other, more writers than the pool keeps: each returns its buffer
            try (BlockStore.Writer w = blocks.inOrderWriter("z")) {
                w.append(ByteBuffer.wrap(new byte[STAGE + 1]));
            }
        }
        // a new buffer per writer would be 100 MiB of direct memory (freed only by a GC); reused, one or two
        assertThat(directMemory() - directBefore).as("direct memory grown by 100 writers").isLessThan(8L * STAGE);
        assertThat(blocks.list()).isEmpty();
        assertThat(leftovers(dir)).isEmpty();
    }

    @Test
    void aSimulatedDiskHasNoDirectWritesAndKeepsItsPowerCutRules() throws Exception {
        SimulatedDisk disk = new SimulatedDisk(1);
        Path sim = Path.of("/sim/blocks");
        BlockStore blocks = new BlockStore(disk.session(), sim, false, true);
        byte[] data = new byte[STAGE + 99];
        new Random(5).nextBytes(data);
        try (BlockStore.Writer w = blocks.inOrderWriter("s")) {
            assertThat(w.direct()).isFalse();
            w.append(ByteBuffer.wrap(data));
            w.commit(crc(data));
        }
        disk.powerCut();
        assertThat(read(new BlockStore(disk.session(), sim, false, true), "s")).isEqualTo(data);
    }

    @Test
    void aFileSystemThatRefusesTheFirstDirectWriteGetsTheBlockThroughThePageCache() throws Exception {
        // a disk whose O_DIRECT open succeeds but whose first write fails, as some file systems do
        Disk refusing = new ForwardingDisk(Disk.REAL) {
            @Override
            public Direct openDirect(Path file) throws IOException {
                FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                ch.close(); // every write: ClosedChannelException
                return new Direct(ch, 4096);
            }
        };
        BlockStore blocks = new BlockStore(refusing, dir, true, true);
        byte[] data = new byte[3 * STAGE + 7];
        new Random(9).nextBytes(data);
        try (BlockStore.Writer w = blocks.inOrderWriter("f")) {
            assertThat(w.direct()).isTrue();
            w.append(ByteBuffer.wrap(data, 0, 100));
            w.append(ByteBuffer.wrap(data, 100, data.length - 100));
            assertThat(w.direct()).as("fell back at the first write").isFalse();
            w.commit(crc(data));
        }
        assertThat(read(blocks, "f")).isEqualTo(data);
        // refused at the commit's only write (a block shorter than the stage) the same way
        try (BlockStore.Writer w = blocks.inOrderWriter("g")) {
            w.append(ByteBuffer.wrap(data, 0, 10));
            w.commit(crc(Arrays.copyOf(data, 10)));
        }
        assertThat(read(blocks, "g")).isEqualTo(Arrays.copyOf(data, 10));
        assertThat(leftovers(dir)).isEmpty();
    }

    @Test
    void onTmpfsTheBlockReadsBackWhicheverWayItWent() throws Exception {
        // tmpfs refuses O_DIRECT at the open before Linux 6.6 and takes it since: either way, the same block
        Path shm = Path.of("/dev/shm");
        assumeThat(Files.isDirectory(shm) && Files.isWritable(shm)).as("a writable /dev/shm").isTrue();
        assumeThat(Files.getFileStore(shm).type()).isEqualTo("tmpfs");
        Path d = Files.createTempDirectory(shm, "hayloft-inorder");
        try {
            BlockStore blocks = new BlockStore(Disk.REAL, d, true, true);
            byte[] data = new byte[STAGE + 4097];
            new Random(11).nextBytes(data);
            Disk.Direct probe = Disk.REAL.openDirect(d.resolve("probe"));
            if (probe != null) {
                probe.channel().close();
            }
            try (BlockStore.Writer w = blocks.inOrderWriter("t")) {
                assertThat(w.direct()).isEqualTo(probe != null);
                w.append(ByteBuffer.wrap(data));
                w.commit(crc(data));
            }
            assertThat(read(blocks, "t")).isEqualTo(data);
        } finally {
            FileTrees.delete(d);
        }
    }

    /** Bytes of direct buffers this JVM holds now. */
    private static long directMemory() {
        return ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(b -> b.getName().equals("direct")).mapToLong(BufferPoolMXBean::getMemoryUsed).sum();
    }

    private static byte[] read(BlockStore blocks, String name) throws IOException {
        ByteBuffer b = blocks.read(name, 0, -1);
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    private static long crc(byte[] data) {
        CRC32C c = new CRC32C();
        c.update(data);
        return c.getValue();
    }

    private static List<String> leftovers(Path d) throws IOException {
        try (var s = Files.list(d)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".tmp")).toList();
        }
    }
}
