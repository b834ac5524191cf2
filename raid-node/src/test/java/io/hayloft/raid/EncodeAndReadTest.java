package io.hayloft.raid;

import io.hayloft.cold.ColdReader;
import io.hayloft.format.wire.StripeMap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.format.directory.VolumeState;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Encode on 15 real stores with each codec; healthy reads, degraded reads with 4 stores down, a clear error with 5.
 * Each volume is 40 needles of up to 16 000 bytes: two stripes of 10 × 16 KiB blocks, many needles across a
 * block boundary.
 */
class EncodeAndReadTest extends ClusterFixture {

    static final long BLOCK = 16 << 10;


    @ParameterizedTest
    @ValueSource(strings = {"rs", "hh-xor", "hh-xor+", "hh-nonxor"})
    void encodeThenReadHealthyDegradedAndLost(String codec) throws Exception {
        cluster = new TestCluster(dir, 15);
        int volume = cluster.writeVolume(40, 16_000);
        runner = new ThreadPoolRunner(2);
        RaidNode raid = new RaidNode(cluster.raidConfig(codec, BLOCK), runner);

        EncodeJob.Result res = raid.encode(volume);

        assertThat(res.stripes()).isGreaterThanOrEqualTo(2);
        assertThat(cluster.directory.directory().volume(volume).state()).isEqualTo(VolumeState.ERASURE_CODED);
        assertThat(cluster.directory.directory().volume(volume).replicas()).isEmpty();
        for (String id : cluster.stores.keySet()) {
            assertThat(cluster.stores.get(id).store().volumes()).as("replica on " + id).isEmpty();
        }
        StripeMap map = raid.cluster().stripeMap(volume);
        assertThat(map.status()).isEqualTo(StripeMap.COMMITTED);
        assertThat(map.codec()).isEqualTo(codec);
        Set<String> expected = new HashSet<>();
        map.allBlocks().forEach(b -> expected.add(b.store() + "/" + b.name()));
        assertThat(cluster.allBlocks()).containsExactlyInAnyOrderElementsOf(expected);
        for (StripeMap.Stripe s : map.stripes()) {
            assertThat(s.blocks().stream().map(StripeMap.Block::store).distinct()).hasSize(14);
        }

        try (ColdReader reader = new ColdReader(raid.cluster())) {
            cluster.assertColdReads(reader, List.of(), "");
            assertThat(reader.degradedReads()).as("degraded reads but hedges of slow direct reads").isLessThanOrEqualTo(reader.hedgedReads());
            assertThat(reader.healthyReads()).isGreaterThan(cluster.photos.size()); // some needles cross blocks

            // A delete after encoding is honoured.
            TestCluster.Photo gone = cluster.photos.values().iterator().next();
            cluster.logDelete(gone);
            assertThat(reader.get(gone.volume(), gone.key(), 0)).isNull();

            // Stop 4 stores holding blocks of stripe 0 (not every index holder): every needle still reads.
            List<String> victims = new ArrayList<>();
            for (StripeMap.Block b : map.stripes().get(0).blocks()) {
                if (victims.size() < 4 && !b.store().equals(map.index().holders().get(0))) {
                    victims.add(b.store());
                }
            }
            cluster.stopStores(victims);
            try (ColdReader fresh = new ColdReader(raid.cluster())) {
                cluster.assertColdReads(fresh, List.of(), "");
                assertThat(fresh.degradedReads()).isPositive();
            }
            cluster.assertColdReads(reader, List.of(), "");

            // A fifth: reads of the lost blocks fail and say why.
            String fifth = map.stripes().get(0).blocks().stream().map(StripeMap.Block::store)
                    .filter(s -> !victims.contains(s) && !s.equals(map.index().holders().get(0))).findFirst().orElseThrow();
            cluster.stopStore(fifth);
            assertThat(cluster.readEveryPhotoOrStripeLost(reader)).isPositive();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"hh-xor+"})
    void aVolumeThatIsNotReadOnlyIsRefused(String codec) throws Exception {
        cluster = new TestCluster(dir, 15);
        var a = cluster.lease(1);
        runner = new ThreadPoolRunner(1);
        RaidNode raid = new RaidNode(cluster.raidConfig(codec, BLOCK), runner);
        assertThatThrownBy(() -> raid.encode(a.volume())).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is WRITABLE");
    }
}
