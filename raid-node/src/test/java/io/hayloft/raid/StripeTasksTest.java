package io.hayloft.raid;

import io.hayloft.format.needle.Needle;
import io.hayloft.format.needle.Superblock;
import io.hayloft.format.wire.VolumeIndex;
import java.time.Duration;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.format.wire.StripeMap;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stripes encoded as independent tasks from a local volume image (the reclaim path: a source that is
 * neither serializable nor thread-safe): the needle index built from the stripes' candidate headers is
 * exact even when photo data is full of header magic and headers straddle chunk, block and stripe
 * boundaries; a broken chain is refused.
 */
class StripeTasksTest {

    static final int BLOCK = 4096;
    static final int K = 10;

    @TempDir
    Path dir;

    /** A volume image, the needles the test put in it, and a source over it. */
    record Image(byte[] bytes, List<VolumeIndex.Entry> needles) {
    }

    /** Needles whose data repeats the header magic; one header starts 16 bytes before every block boundary. */
    static Image image(int blocks) {
        ByteBuffer b = ByteBuffer.allocate(blocks * BLOCK);
        b.position(Superblock.SIZE);
        Random random = new Random(7);
        List<VolumeIndex.Entry> needles = new ArrayList<>();
        long key = 1000;
        while (true) {
            int pos = b.position();
            int size = 8 * (1 + random.nextInt(150));
            long boundary = ((long) pos / BLOCK + 1) * BLOCK;
            long gap = boundary - 16 - pos; // land the next header across the boundary when a needle fits before it
            if (gap >= 48 && gap <= VolumeIndex.needleLength(size) + 48) {
                size = (int) gap - 40;
            }
            int total = VolumeIndex.needleLength(size);
            if (pos + total > b.capacity() - 64) {
                break;
            }
            b.putInt(pos, Needle.HEADER_MAGIC).putLong(pos + Needle.OFF_COOKIE, key * 31)
                    .putLong(pos + Needle.OFF_KEY, key).putInt(pos + Needle.OFF_ALT, 0)
                    .putInt(pos + Needle.OFF_SIZE, size);
            for (int i = 0; i + 4 <= size; i += 4) {
                b.putInt(pos + Needle.HEADER_SIZE + i, Needle.HEADER_MAGIC); // false candidates
            }
            b.putInt(pos + Needle.HEADER_SIZE + size, Needle.FOOTER_MAGIC);
            needles.add(new VolumeIndex.Entry(key++, 0, 0, pos, total, size, 0));
            b.position(pos + total);
        }
        return new Image(Arrays.copyOf(b.array(), b.position()), needles);
    }

    /** An in-memory image that fails the test if two threads read it at once. */
    static final class LocalSource implements VolumeSource {
        final byte[] bytes;
        final AtomicInteger inside = new AtomicInteger();
        volatile int maxInside;

        LocalSource(byte[] bytes) {
            this.bytes = bytes;
        }

        @Override
        public int volume() {
            return 4242;
        }

        @Override
        public long size() {
            return bytes.length;
        }

        @Override
        public byte[] read(long offset, int length) {
            maxInside = Math.max(maxInside, inside.incrementAndGet());
            try {
                return Arrays.copyOfRange(bytes, (int) offset, (int) offset + length);
            } finally {
                inside.decrementAndGet();
            }
        }
    }

    @Test
    void theIndexFromCandidateHeadersIsExactAndTheBlocksHoldTheVolume() throws Exception {
        Image img = image(3 * K + 4); // 4 stripes, the last one short
        try (TestCluster cluster = new TestCluster(dir, 15)) {
            RaidConfig config = config(cluster);
            Cluster http = new Cluster(config.directory, null, Duration.ofSeconds(5));
            Map<String, Cluster.StoreRef> stores = http.stores();
            EncodeJob job = new EncodeJob(http, config, Checkpoints.NONE);
            StripeMap plan = job.plan(4242, img.bytes().length, stores);
            LocalSource src = new LocalSource(img.bytes());

            StripeMap done = job.writeAll(plan, src, stores);

            assertThat(done.stripes()).hasSize(4);
            assertThat(src.maxInside).as("reads of a source that is not thread-safe").isEqualTo(1);
            byte[] index = http.readBlock(stores.get(done.index().holders().get(0)).address(), done.index().name());
            assertThat(VolumeIndex.decode(index, "test", 0).entries()).containsExactlyInAnyOrderElementsOf(img.needles());
            // Every header straddling a block boundary is in the index.
            assertThat(img.needles()).filteredOn(e -> e.offset() % BLOCK == BLOCK - 16).hasSizeGreaterThan(20);
            byte[] padded = Arrays.copyOf(img.bytes(), 4 * K * BLOCK);
            for (StripeMap.Stripe s : done.stripes()) {
                for (int u = 0; u < K; u++) {
                    StripeMap.Block blk = s.blocks().get(u);
                    byte[] got = http.readBlock(stores.get(blk.store()).address(), blk.name());
                    int at = (s.index() * K + u) * BLOCK;
                    assertThat(got).as("stripe %d unit %d", s.index(), u).isEqualTo(Arrays.copyOfRange(padded, at, at + BLOCK));
                }
            }
        }
    }

    @Test
    void aBrokenNeedleChainIsRefusedNamingTheOffset() throws Exception {
        Image img = image(K + 2);
        VolumeIndex.Entry victim = img.needles().get(img.needles().size() / 2);
        ByteBuffer.wrap(img.bytes()).putInt((int) victim.offset(), 0);
        try (TestCluster cluster = new TestCluster(dir, 15)) {
            RaidConfig config = config(cluster);
            Cluster http = new Cluster(config.directory, null, Duration.ofSeconds(5));
            Map<String, Cluster.StoreRef> stores = http.stores();
            EncodeJob job = new EncodeJob(http, config, Checkpoints.NONE);
            StripeMap plan = job.plan(4242, img.bytes().length, stores);
            assertThatThrownBy(() -> job.writeAll(plan, new LocalSource(img.bytes()), stores)).isInstanceOf(IOException.class)
                    .hasMessageContaining("not a clean sealed volume: no needle (header and footer) at volume offset " + victim.offset());
        }
    }

    @Test
    void theChainSkipsFalseCandidatesAndStopsAtAGap() throws Exception {
        VolumeIndex.Entry a = new VolumeIndex.Entry(1, 0, 0, 32, 48, 8, 0);
        VolumeIndex.Entry fake = new VolumeIndex.Entry(0x4E45444C, 0, 0, 40, 1 << 30, 7, 0);
        VolumeIndex.Entry b = new VolumeIndex.Entry(2, 0, 0, 80, 48, 8, 0);
        assertThat(EncodeJob.chain(9, 128, Map.of(32L, a, 40L, fake, 80L, b))).containsExactly(a, b);
        assertThatThrownBy(() -> EncodeJob.chain(9, 136, Map.of(32L, a, 80L, b)))
                .hasMessageContaining("volume 9 is not a clean sealed volume: no needle (header and footer) at volume offset 128");
    }

    private RaidConfig config(TestCluster cluster) {
        RaidConfig c = cluster.raidConfig("hh-xor+", BLOCK);
        c.transferBytes = 4096;
        c.workers = 3;
        return c.validate();
    }
}
