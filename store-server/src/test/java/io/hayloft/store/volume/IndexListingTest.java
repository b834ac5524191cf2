package io.hayloft.store.volume;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.common.wire.VolumeIndex;
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
