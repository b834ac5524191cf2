package io.hayloft.store.volume;

import io.hayloft.format.needle.Needle;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.wire.VolumeIndex;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A replica's own index as the raid-node sees it ({@code GET /admin/volumes/ID/index}): every exact
 * (key, alt) with the newest needle's offset, size, deleted flag and CRC32C, across keys and
 * alternate keys over their whole range, overwrites, deletes, and a restart from the {@code .idx}.
 */
class IndexListingTest {

    @TempDir
    Path dir;

    private record Want(byte[] data, boolean deleted) {
    }

    @Test
    void theListingIsTheReplicasExactIndex() throws Exception {
        Random rnd = new Random(11);
        Map<String, Want> model = new HashMap<>();
        long[] keys = {0, 1, 2, -1, Long.MIN_VALUE, Long.MAX_VALUE, 41, 42};
        int[] alts = {0, 31, 62, 1000, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, 1};
        Volume.Options opts = new Volume.Options(8 << 20, Volume.Fsync.ALWAYS);
        try (Volume v = Volume.create(dir, 3, opts)) {
            for (int i = 0; i < 200; i++) {
                long key = rnd.nextBoolean() ? keys[rnd.nextInt(keys.length)] : rnd.nextLong();
                int alt = rnd.nextBoolean() ? alts[rnd.nextInt(alts.length)] : rnd.nextInt();
                byte[] data = new byte[rnd.nextInt(5) == 0 ? 0 : rnd.nextInt(3000)];
                rnd.nextBytes(data);
                v.write(key, alt, key ^ 0x5A5A, ByteBuffer.wrap(data)); // the same pair again overwrites
                model.put(key + "/" + alt, new Want(data, false));
                if (rnd.nextInt(10) == 0) {
                    v.delete(key, alt, key ^ 0x5A5A);
                    model.put(key + "/" + alt, new Want(data, true));
                }
            }
            check(v.indexListing(), model);
        }
        try (Volume v = Volume.open(dir, 3, opts)) {
            check(v.indexListing(), model);
        }
    }

    /**
     * A delete whose flag is durable in the volume file but whose {@code .idx} record was lost (a power
     * cut between the forced flag and the background checkpoint; found by the concurrent chaos
     * checker): after a restart the listing says deleted, as the header and every read do.
     */
    @Test
    void aDeleteFlagInTheFileThatTheCheckpointLacksIsListedDeleted() throws Exception {
        Volume.Options opts = new Volume.Options(8 << 20, Volume.Fsync.ALWAYS);
        long victimOffset;
        try (Volume v = Volume.create(dir, 4, opts)) {
            for (int i = 0; i < 5; i++) {
                v.write(100 + i, -1, 7, ByteBuffer.wrap(new byte[100 * i]));
            }
            victimOffset = VolumeIndex.of(4, v.indexListing()).find(102, -1).offset();
        }
        try (FileChannel dat = FileChannel.open(dir.resolve("4.dat"),
                StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer flag = ByteBuffer.allocate(1);
            dat.read(flag, victimOffset + Needle.OFF_FLAGS);
            dat.write(ByteBuffer.wrap(new byte[] {(byte) (flag.get(0) | Needle.FLAG_DELETED)}), victimOffset + Needle.OFF_FLAGS);
            dat.force(true);
        }
        try (Volume v = Volume.open(dir, 4, opts)) {
            VolumeIndex listed = VolumeIndex.of(4, v.indexListing());
            assertThat(listed.find(102, -1).deleted()).as("the needle whose flag is in the file").isTrue();
            assertThat(listed.liveCount()).isEqualTo(4);
            assertThat(listed.find(101, -1).deleted()).isFalse();
        }
    }

    private static void check(List<VolumeIndex.Entry> listing, Map<String, Want> model) {
        VolumeIndex index = VolumeIndex.of(3, listing);
        assertThat(index.size()).isEqualTo(listing.size()).isEqualTo(model.size());
        model.forEach((pair, want) -> {
            String[] ka = pair.split("/");
            VolumeIndex.Entry e = index.find(Long.parseLong(ka[0]), Integer.parseInt(ka[1]));
            assertThat(e).as("needle %s", pair).isNotNull();
            assertThat(e.deleted()).as("deleted %s", pair).isEqualTo(want.deleted());
            assertThat(e.dataSize()).isEqualTo(want.data().length);
            assertThat(e.length()).isEqualTo((int) Needle.totalLength(want.data().length));
            CRC32C crc = new CRC32C(); // the needle CRC: cookie, key, alt, size, then the data
            ByteBuffer h = ByteBuffer.allocate(24);
            h.putLong(e.key() ^ 0x5A5A).putLong(e.key()).putInt(e.alt()).putInt(want.data().length).flip();
            crc.update(h);
            crc.update(want.data());
            assertThat(e.crc32c()).as("crc %s", pair).isEqualTo((int) crc.getValue());
        });
    }
}
