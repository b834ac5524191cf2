package io.hayloft.serverkit.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class SimulatedDiskTest {
    private static final Path DIR = Path.of("/sim/data");
    private static final Path FILE = DIR.resolve("a.dat");

    private static FileChannel create(Disk d, Path p) throws IOException {
        return d.open(p, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    private static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed + i * 31 + 1);
        }
        return b;
    }

    @Test
    void syncedBytesAndNamesSurviveACut() throws IOException {
        for (long seed = 0; seed < 50; seed++) {
            SimulatedDisk d = new SimulatedDisk(seed);
            d.createDirectories(DIR);
            try (FileChannel ch = create(d, FILE)) {
                ch.write(ByteBuffer.wrap(bytes(100, 1)), 0);
                ch.force(false);
            }
            d.syncDirectory(DIR);
            d.powerCut();
            assertThat(d.exists(FILE)).as("seed %d", seed).isTrue();
            assertThat(d.readAllBytes(FILE)).as("seed %d", seed).isEqualTo(bytes(100, 1));
        }
    }

    @Test
    void unsyncedWritesSurviveOnlyAsAPrefixInOrder() throws IOException {
        boolean sawLoss = false;
        boolean sawTear = false;
        boolean sawAll = false;
        for (long seed = 0; seed < 200; seed++) {
            SimulatedDisk d = new SimulatedDisk(seed);
            d.createDirectories(DIR);
            byte[] all = bytes(300, 7);
            try (FileChannel ch = create(d, FILE)) {
                ch.write(ByteBuffer.wrap(all, 0, 100), 0);
                ch.force(false);
                ch.write(ByteBuffer.wrap(all, 100, 100), 100);
                ch.write(ByteBuffer.wrap(all, 200, 100), 200);
            }
            d.syncDirectory(DIR);
            d.powerCut();
            byte[] got = d.readAllBytes(FILE);
            assertThat(got.length).as("seed %d", seed).isBetween(100, 300);
            int data = got.length;
            while (data > 100 && got[data - 1] == 0) {
                data--; // a zero-filled tail past a tear
            }
            assertThat(Arrays.copyOf(got, data)).as("seed %d: durable prefix then a prefix of the writes", seed)
                    .isEqualTo(Arrays.copyOf(all, data));
            sawLoss |= got.length < 300;
            sawTear |= got.length != 100 && got.length != 200 && got.length != 300 || data != got.length;
            sawAll |= got.length == 300 && data == 300;
        }
        assertThat(sawLoss).isTrue();
        assertThat(sawTear).isTrue();
        assertThat(sawAll).isTrue();
    }

    @Test
    void aFullySyncedFileWithoutItsDirectorySyncedIsGone() throws IOException {
        SimulatedDisk d = new SimulatedDisk(1);
        d.createDirectories(DIR);
        try (FileChannel ch = create(d, FILE)) {
            ch.write(ByteBuffer.wrap(bytes(10, 1)), 0);
            ch.force(true);
        }
        d.powerCut();
        assertThat(d.exists(FILE)).isFalse();
        assertThat(d.list(DIR)).isEmpty();
    }

    @Test
    void renameWithoutDirectorySyncReverts() throws IOException {
        SimulatedDisk d = new SimulatedDisk(2);
        d.createDirectories(DIR);
        Path tmp = DIR.resolve("x.tmp");
        Path target = DIR.resolve("x");
        try (FileChannel ch = create(d, tmp)) {
            ch.write(ByteBuffer.wrap("old".getBytes(StandardCharsets.UTF_8)), 0);
            ch.force(true);
        }
        d.syncDirectory(DIR);
        d.move(tmp, target);
        assertThat(d.list(DIR)).containsExactly("x");
        d.powerCut();
        assertThat(d.list(DIR)).containsExactly("x.tmp");
        d.move(tmp, target);
        d.syncDirectory(DIR);
        d.powerCut();
        assertThat(d.list(DIR)).containsExactly("x");
        assertThat(new String(d.readAllBytes(target), StandardCharsets.UTF_8)).isEqualTo("old");
    }

    @Test
    void deleteWithoutDirectorySyncReverts() throws IOException {
        SimulatedDisk d = new SimulatedDisk(3);
        d.createDirectories(DIR);
        create(d, FILE).close();
        d.syncDirectory(DIR);
        assertThat(d.deleteIfExists(FILE)).isTrue();
        d.powerCut();
        assertThat(d.exists(FILE)).isTrue();
        d.deleteIfExists(FILE);
        d.syncDirectory(DIR);
        d.powerCut();
        assertThat(d.exists(FILE)).isFalse();
    }

    @Test
    void channelsAndSessionsAreDeadAfterACutButTheDiskIsUsable() throws IOException {
        SimulatedDisk d = new SimulatedDisk(4);
        Disk session = d.session();
        session.createDirectories(DIR);
        FileChannel ch = create(session, FILE);
        ch.write(ByteBuffer.wrap(bytes(10, 1)), 0);
        d.powerCut();
        assertThatThrownBy(() -> ch.write(ByteBuffer.wrap(bytes(1, 1)), 0)).hasMessage("simulated power cut");
        assertThatThrownBy(() -> ch.read(ByteBuffer.allocate(1), 0)).hasMessage("simulated power cut");
        assertThatThrownBy(() -> ch.force(true)).hasMessage("simulated power cut");
        assertThatThrownBy(() -> session.move(FILE, DIR.resolve("b"))).hasMessage("simulated power cut");
        assertThatThrownBy(() -> session.syncDirectory(DIR)).hasMessage("simulated power cut");
        ch.close();
        try (FileChannel again = create(d.session(), FILE)) {
            again.write(ByteBuffer.wrap(bytes(3, 3)), 0);
            assertThat(again.size()).isEqualTo(3);
        }
        assertThat(d.powerCuts()).isEqualTo(1);
    }

    @Test
    void openOptions() throws IOException {
        SimulatedDisk d = new SimulatedDisk(5);
        d.createDirectories(DIR);
        assertThatThrownBy(() -> d.open(FILE, StandardOpenOption.READ)).isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> d.open(Path.of("/nodir/f"), StandardOpenOption.CREATE, StandardOpenOption.WRITE))
                .isInstanceOf(NoSuchFileException.class);
        try (FileChannel ch = d.open(FILE, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(bytes(5, 1)));
            ch.write(ByteBuffer.wrap(bytes(5, 2)));
            assertThat(ch.position()).isEqualTo(10);
        }
        assertThatThrownBy(() -> d.open(FILE, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE))
                .isInstanceOf(FileAlreadyExistsException.class);
        try (FileChannel ch = d.open(FILE, StandardOpenOption.APPEND)) {
            ch.write(ByteBuffer.wrap(bytes(2, 3)));
        }
        assertThat(d.size(FILE)).isEqualTo(12);
        try (FileChannel ch = d.open(FILE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(20);
            assertThat(ch.read(b)).isEqualTo(12);
            assertThat(ch.read(b)).isEqualTo(-1);
            ch.truncate(4);
            assertThat(ch.position()).isEqualTo(4);
            assertThat(ch.size()).isEqualTo(4);
            assertThatThrownBy(() -> ch.map(FileChannel.MapMode.READ_ONLY, 0, 4))
                    .isInstanceOf(UnsupportedOperationException.class);
        }
        try (FileChannel ch = d.open(FILE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            assertThat(ch.size()).isZero();
        }
    }

    @Test
    void truncateIsRevertedWhenNotSynced() throws IOException {
        int kept = 0;
        int dropped = 0;
        for (long seed = 0; seed < 40; seed++) {
            SimulatedDisk d = new SimulatedDisk(seed);
            d.createDirectories(DIR);
            try (FileChannel ch = create(d, FILE)) {
                ch.write(ByteBuffer.wrap(bytes(50, 1)), 0);
                ch.force(true);
            }
            d.syncDirectory(DIR);
            try (FileChannel ch = d.open(FILE, StandardOpenOption.WRITE)) {
                ch.truncate(10);
            }
            d.powerCut();
            long size = d.size(FILE);
            assertThat(size).as("seed %d", seed).isIn(10L, 50L);
            if (size == 10) {
                kept++;
            } else {
                dropped++;
                assertThat(d.readAllBytes(FILE)).isEqualTo(bytes(50, 1));
            }
        }
        assertThat(kept).isPositive();
        assertThat(dropped).isPositive();
    }

    @Test
    void deleteOnCloseRemovesTheNameUnlessACutKilledTheChannel() throws IOException {
        SimulatedDisk d = new SimulatedDisk(7);
        d.createDirectories(DIR);
        FileChannel ch = d.open(FILE, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, StandardOpenOption.DELETE_ON_CLOSE);
        assertThat(d.exists(FILE)).isTrue();
        ch.close();
        assertThat(d.exists(FILE)).isFalse();
        create(d, FILE).close();
        d.syncDirectory(DIR);
        FileChannel dying = d.open(FILE, StandardOpenOption.WRITE, StandardOpenOption.DELETE_ON_CLOSE);
        d.powerCut();
        dying.close();
        assertThat(d.exists(FILE)).as("a dead process deletes nothing").isTrue();
    }
}
