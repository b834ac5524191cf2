package io.hayloft.raid;

import io.hayloft.cold.ColdReader;
import io.hayloft.store.StoreServer;
import java.util.HashMap;
import java.util.Random;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.VolumeIndex;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Reclaim end to end on 15 real stores: deletes on coded volumes are honoured and counted, a volume
 * over the threshold is re-encoded without its dead needles (fewer block bytes, fewer stripes), one
 * under it is left alone, every live needle reads back healthy, degraded and through a reader that
 * cached the old map, and a reclaim whose compaction reads degraded works too.
 */
class ReclaimTest extends ClusterFixture {

    static final long BLOCK = 16 << 10;


    @Test
    void reclaimFreesSpaceAndKeepsEveryLiveNeedle() throws Exception {
        cluster = new TestCluster(dir, 15);
        int big = cluster.writeVolume(60, 16_000); // about 480 KB: three stripes of 10 × 16 KiB blocks
        int small = cluster.writeVolume(30, 16_000);
        runner = new ThreadPoolRunner(2);
        RaidNode raid = new RaidNode(cluster.raidConfig("hh-xor+", BLOCK), runner);
        raid.encode(big);
        raid.encode(small);
        StripeMap bigBefore = raid.cluster().stripeMap(big);
        StripeMap smallBefore = raid.cluster().stripeMap(small);
        assertThat(bigBefore.stripes().size()).isGreaterThanOrEqualTo(3);

        ColdReader stale = new ColdReader(raid.cluster());
        cluster.assertColdReads(stale, List.of(), ""); // caches both volumes' maps and indexes
        long bytesBefore = blockBytes();

        // Delete 60% of the big volume's bytes and 10% of the small one's.
        Set<Long> deleted = new HashSet<>();
        deleted.addAll(cluster.deletePhotos(big, 0.6));
        deleted.addAll(cluster.deletePhotos(small, 0.1));
        // Entries with a wrong cookie for live photos: anyone may log them; they must delete nothing,
        // neither for readers nor for the reclaim (assertColdReads below reads every live photo).
        List<Long> decoys = cluster.logWrongCookieDeletes(big, 5);
        assertThat(decoys).hasSize(5);
        for (long k : decoys) {
            assertThat(stale.get(big, k, 0)).as("live photo %s logged with a wrong cookie", k).isNotNull();
        }
        for (long k : deleted) {
            assertThat(stale.get(cluster.volumeOf(k), k, 0)).as("deleted photo " + k).isNull();
        }
        assertThat(cluster.directory.directory().volume(big).deletedPhotos()).isPositive();

        Map<Integer, ReclaimJob.Survey> surveys = new HashMap<>();
        raid.surveys().forEach(s -> surveys.put(s.volume(), s));
        assertThat(surveys.get(big).deadFraction()).isGreaterThan(0.55);
        assertThat(surveys.get(small).deadFraction()).isBetween(0.05, 0.3);

        List<ReclaimJob.Result> results = raid.reclaimDue();
        assertThat(results).hasSize(2);
        ReclaimJob.Result r = results.stream().filter(x -> x.before().volume() == big).findFirst().orElseThrow();
        assertThat(r.reclaimed()).isTrue();
        assertThat(results.stream().filter(x -> x.before().volume() == small).findFirst().orElseThrow().reclaimed()).isFalse();

        // The small volume is untouched; the big one has a new, smaller stripe set.
        assertThat(raid.cluster().stripeMap(small)).isEqualTo(smallBefore);
        StripeMap bigAfter = raid.cluster().stripeMap(big);
        assertThat(bigAfter.job()).isNotEqualTo(bigBefore.job()).isEqualTo(r.newJob());
        assertThat(bigAfter.volumeBytes()).isEqualTo(32 + surveys.get(big).liveBytes());
        long blocks = (bigAfter.volumeBytes() + BLOCK - 1) / BLOCK;
        assertThat(bigAfter.stripes()).hasSize((int) ((blocks + 9) / 10)).hasSizeLessThan(bigBefore.stripes().size());
        assertThat(cluster.directory.directory().volume(big).deletedPhotos()).isZero();
        assertThat(raid.cluster().reclaims()).isEmpty();

        // Space: the block bytes on all stores fall by exactly what the maps say, and only committed blocks remain.
        long bytesAfter = blockBytes();
        assertThat(bytesAfter).isLessThan(bytesBefore).isEqualTo(bytesBefore - r.blockBytesFreed());
        assertThat(cluster.allBlocks()).containsExactlyInAnyOrderElementsOf(committedBlocks(raid));

        // Reads: through the reader that cached the old map, a fresh one, then degraded.
        cluster.assertColdReads(stale, List.of(), "");
        for (long k : deleted) {
            assertThat(stale.get(cluster.volumeOf(k), k, 0)).isNull();
        }
        try (ColdReader reader = new ColdReader(raid.cluster())) {
            ReclaimJob.Survey again = ReclaimJob.survey(raid.cluster(), reader, big);
            assertThat(again.deadBytes()).isZero();
            assertThat(again.liveNeedles()).isEqualTo(surveys.get(big).liveNeedles());
        }

        String victim = bigAfter.stripes().get(0).blocks().stream().map(StripeMap.Block::store)
                .filter(s -> !bigAfter.index().holders().contains(s)).findFirst().orElseThrow();
        cluster.stopStore(victim);
        try (ColdReader fresh = new ColdReader(raid.cluster())) {
            cluster.assertColdReads(fresh, List.of(), "");
            assertThat(fresh.degradedReads()).isPositive();
        }

        // Nothing changed since the last survey: the policy does not look again.
        assertThat(raid.reclaimDue()).allMatch(x -> !x.reclaimed());

        // A reclaim with a store down: compaction reads degraded, blocks go to the 14 stores up.
        deleted.addAll(cluster.deletePhotos(small, 0.4));
        ReclaimJob.Result degraded = raid.reclaim(small, 0.3);
        assertThat(degraded.reclaimed()).isTrue();
        try (ColdReader fresh = new ColdReader(raid.cluster())) {
            cluster.assertColdReads(fresh, List.of(), "");
            for (long k : deleted) {
                assertThat(fresh.get(cluster.volumeOf(k), k, 0)).isNull();
            }
        }
        cluster.assertColdReads(stale, List.of(), "");
        stale.close();
    }

    @Test
    void badRequestsAreRefusedWithClearErrors() throws Exception {
        cluster = new TestCluster(dir, 15);
        int volume = cluster.writeVolume(30, 2000);
        runner = new ThreadPoolRunner(1);
        RaidNode raid = new RaidNode(cluster.raidConfig("rs", BLOCK), runner);
        assertThatThrownBy(() -> raid.reclaim(volume)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is READ_ONLY").hasMessageContaining("only an erasure-coded volume");
        raid.encode(volume);
        assertThatThrownBy(() -> raid.reclaim(volume, 1.5)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("was 1.5");
        assertThatThrownBy(() -> raid.reclaim(4242)).isInstanceOf(Cluster.HttpStatusException.class)
                .hasMessageContaining("404").hasMessageContaining("UNKNOWN_VOLUME");
        // Nothing dead: nothing happens, even at threshold 0.
        assertThat(raid.reclaim(volume, 0).reclaimed()).isFalse();
        // A stale swap is refused by the directory's compare-and-set.
        StripeMap c = raid.cluster().stripeMap(volume);
        StripeMap m = new StripeMap(volume, "12345678", c.codec(), c.k(), c.r(), c.blockSize(), c.volumeBytes(), c.status(),
                c.stripes(), c.index());
        assertThatThrownBy(() -> raid.cluster().commitReclaim(m, c.job())).isInstanceOf(Cluster.HttpStatusException.class)
                .hasMessageContaining("409").hasMessageContaining("JOB_MISMATCH");
    }

    @Test
    void overwrittenAndStoreDeletedNeedlesAreDeadBytes() throws Exception {
        cluster = new TestCluster(dir, 15);
        var a = cluster.lease(60);
        Random random = new Random(7);
        Map<Long, byte[]> latest = new HashMap<>();
        long overwritten = 0;
        long storeDeleted = 0;
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < (round == 0 ? 60 : 20); i++) { // the second round overwrites the first 20 keys
                var p = a.photos().get(i);
                byte[] data = new byte[1 + random.nextInt(3000)];
                random.nextBytes(data);
                if (round == 1) {
                    overwritten += VolumeIndex.needleLength(latest.get(p.key()).length);
                }
                latest.put(p.key(), data);
                for (String replica : a.replicas()) {
                    assertThat(cluster.send("PUT", "http://" + replica + "/" + a.volume() + "/" + p.key() + "/0?cookie="
                            + p.cookie(), data)).isEqualTo(201);
                }
            }
        }
        // Keys 50..59 deleted on the stores only: the sealed volume flags them, the index carries the flag.
        for (int i = 50; i < 60; i++) {
            var p = a.photos().get(i);
            storeDeleted += VolumeIndex.needleLength(latest.remove(p.key()).length);
            for (String replica : a.replicas()) {
                assertThat(cluster.send("DELETE", "http://" + replica + "/" + a.volume() + "/" + p.key() + "/0?cookie="
                        + p.cookie(), null)).isEqualTo(204);
            }
        }
        cluster.directory.directory().markReadOnly(a.volume(), "test");
        runner = new ThreadPoolRunner(1);
        RaidNode raid = new RaidNode(cluster.raidConfig("rs", BLOCK), runner);
        raid.encode(a.volume());

        ReclaimJob.Survey s = raid.surveys().get(0);
        assertThat(s.deadBytes()).isEqualTo(overwritten + storeDeleted);
        assertThat(s.liveNeedles()).isEqualTo(50);
        assertThat(s.deadNeedles()).isEqualTo(10); // overwritten needles are not in the index at all
        assertThat(raid.reclaim(a.volume(), 0.05).reclaimed()).isTrue();
        assertThat(raid.cluster().stripeMap(a.volume()).volumeBytes()).isEqualTo(32 + s.liveBytes());
        try (ColdReader reader = new ColdReader(raid.cluster())) {
            for (var p : a.photos()) {
                assertThat(reader.get(a.volume(), p.key(), 0)).as("photo " + p.key()).isEqualTo(latest.get(p.key()));
            }
        }
        try (ColdReader reader = new ColdReader(raid.cluster())) {
            assertThat(ReclaimJob.survey(raid.cluster(), reader, a.volume()).deadBytes()).isZero();
        }
    }

    private long blockBytes() throws Exception {
        long sum = 0;
        for (Map.Entry<String, StoreServer> e : cluster.stores.entrySet()) {
            if (!cluster.stopped.contains(e.getKey())) {
                for (var b : e.getValue().store().blocks().list()) {
                    sum += b.length();
                }
            }
        }
        return sum;
    }

    private static Set<String> committedBlocks(RaidNode raid) throws Exception {
        Set<String> out = new HashSet<>();
        for (StripeMap m : raid.cluster().stripeMaps()) {
            m.allBlocks().forEach(b -> out.add(b.store() + "/" + b.name()));
        }
        return out;
    }
}
