package io.hayloft.raid;

import io.hayloft.cold.ColdReader;
import io.hayloft.format.wire.StripeMap;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Degraded reads with the last parity block of a (4, 2) stripe unavailable and a data block either
 * gone or corrupt in place (its first 4 KiB flipped), for every codec, over needles larger than half
 * a block. A needle crossing into the corrupt block must be rebuilt leaving out that block alone: its
 * piece in the good block is read directly (life-cycle checker, seed 3003 step 57, hh-nonxor).
 */
class DegradedPairReadTest {

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"rs", "hh-xor", "hh-xor+", "hh-nonxor"})
    void aDataBlockGoneAndTheLastParityStoreDown(String codec) throws Exception {
        run(codec, false);
    }

    @ParameterizedTest
    @ValueSource(strings = {"rs", "hh-xor", "hh-xor+", "hh-nonxor"})
    void aDataBlockCorruptInPlaceAndTheLastParityStoreDown(String codec) throws Exception {
        run(codec, true);
    }

    private void run(String codec, boolean corrupt) throws Exception {
        try (TestCluster cluster = new TestCluster(dir.resolve(codec), 8); ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            RaidConfig config = cluster.raidConfig(codec, 256 << 10);
            config.k = 4;
            config.r = 2;
            RaidNode raid = new RaidNode(config, runner);
            int volume = cluster.writeVolume(6, 250_000);
            raid.encode(volume);
            StripeMap.Stripe s0 = raid.cluster().stripeMap(volume).stripes().get(0);
            StripeMap.Block data = s0.blocks().get(2);
            if (corrupt) {
                var blocks = cluster.stores.get(data.store()).store().blocks();
                ByteBuffer b = blocks.read(data.name(), 0, -1);
                ByteBuffer bad = ByteBuffer.allocate(b.remaining());
                bad.put(b).flip();
                for (int i = 0; i < 4096 && i < bad.limit(); i++) {
                    bad.put(i, (byte) (bad.get(i) ^ 0x5a));
                }
                blocks.put(data.name(), bad); // listed with its new CRC: only the map's CRC says it is bad
            } else {
                cluster.stores.get(data.store()).store().blocks().delete(data.name());
            }
            cluster.stopStore(s0.blocks().get(5).store());
            try (ColdReader reader = new ColdReader(raid.cluster())) {
                cluster.assertColdReads(reader, List.of(), codec + " without units 2 and 5");
            }
        }
    }
}
