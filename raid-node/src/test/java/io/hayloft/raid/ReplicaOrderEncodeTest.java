package io.hayloft.raid;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.common.wire.StripeMap;
import io.hayloft.common.wire.VolumeIndex;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Volumes whose replicas hold the same needles in different orders (as concurrent writers leave
 * them) encode from one replica: on the stores and on the raid-node path, for every codec, and read
 * back healthy and with {@code r} blocks of every stripe gone; when the replica an encode reads from
 * dies in the middle, the encode starts over from another replica and commits.
 */
class ReplicaOrderEncodeTest {

    static final long BLOCK = 8192;
    static final int K = 4;
    static final int R = 2;

    @TempDir
    Path dir;

    @Test
    void replicasInDifferentOrdersEncodeFromOneForEveryCodecOnBothPaths() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 8)) {
            Cluster http = new Cluster(cluster.directory.address(), null, Duration.ofSeconds(10));
            List<Integer> volumes = new ArrayList<>();
            for (String codec : List.of("rs", "hh-xor", "hh-xor+", "hh-nonxor")) {
                for (String path : List.of(RaidConfig.ENCODE_AT_STORE, RaidConfig.ENCODE_AT_RAID_NODE)) {
                    int volume = cluster.writeVolumeInReplicaOrders(50, 3000);
                    assertReplicasDiffer(http, volume);
                    new EncodeJob(http, config(cluster, codec, path), Checkpoints.NONE).encode(volume);
                    StripeMap map = http.stripeMap(volume);
                    assertThat(map.status()).as("%s encoded at %s", codec, path).isEqualTo(StripeMap.COMMITTED);
                    assertThat(map.stripes().size()).as("stripes of volume %d", volume).isGreaterThan(1);
                    volumes.add(volume);
                }
            }
            cluster.assertOnlyMappedBlocks(http, "after the encodes");
            try (ColdReader reader = new ColdReader(http)) {
                cluster.assertColdReads(reader, List.of(), "healthy");
            }
            Map<String, Cluster.StoreRef> stores = http.stores();
            for (int volume : volumes) {
                for (StripeMap.Stripe s : http.stripeMap(volume).stripes()) {
                    // one data unit and one parity unit of every stripe: r blocks gone
                    for (int u : new int[] {s.index() % K, K + s.index() % R}) {
                        StripeMap.Block b = s.blocks().get(u);
                        assertThat(http.deleteBlock(stores.get(b.store()).address(), b.name())).as("block %s deleted", b.name()).isTrue();
                    }
                }
            }
            try (ColdReader reader = new ColdReader(http)) {
                cluster.assertColdReads(reader, List.of(), "with " + R + " blocks of every stripe gone");
            }
        }
    }

    @Test
    void theSourceReplicaDyingMidEncodeStartsTheEncodeOverFromAnotherOnEitherPath() throws Exception {
        for (String path : List.of(RaidConfig.ENCODE_AT_STORE, RaidConfig.ENCODE_AT_RAID_NODE)) {
            try (TestCluster cluster = new TestCluster(dir.resolve(path), 10)) {
                Cluster http = new Cluster(cluster.directory.address(), null, Duration.ofSeconds(10));
                int volume = cluster.writeVolumeInReplicaOrders(90, 3000);
                assertReplicasDiffer(http, volume);
                List<String> replicas = new ArrayList<>();
                http.volume(volume).get("replicas").forEach(n -> replicas.add(n.asText()));
                // EncodeJob starts at replica (volume mod replicas); draining, it still serves its replica
                // but takes no block of any plan, so its death fails only the reads
                String source = replicas.get(Math.floorMod(volume, replicas.size()));
                http.drainStore(source);
                RaidConfig config = config(cluster, "hh-xor+", path);
                config.workers = 1;
                String[] killed = {null};
                List<String> steps = new ArrayList<>();
                EncodeJob job = new EncodeJob(http, config, step -> {
                    steps.add(step);
                    if (step.equals("stripe-0") && killed[0] == null) {
                        try {
                            cluster.stores.get(source).close();
                            cluster.stopped.add(source);
                            killed[0] = source;
                        } catch (Exception e) {
                            throw new AssertionError(e);
                        }
                    }
                });

                EncodeJob.Result r = job.encode(volume);

                assertThat(killed[0]).as(path).isEqualTo(source);
                assertThat(steps.stream().filter("begun"::equals)).as("plans recorded, %s", path).hasSize(2);
                assertThat(r.stripes()).isGreaterThan(2);
                StripeMap map = http.stripeMap(volume);
                assertThat(map.status()).isEqualTo(StripeMap.COMMITTED);
                assertThat(map.job()).isEqualTo(r.job());
                cluster.assertOnlyMappedBlocks(http, "after the encode restarted, " + path);
                try (ColdReader reader = new ColdReader(http)) {
                    cluster.assertColdReads(reader, List.of(), "after the encode restarted, " + path);
                }
            }
        }
    }

    private static void assertReplicasDiffer(Cluster http, int volume) throws Exception {
        Map<String, Cluster.StoreRef> stores = http.stores();
        List<String> ids = new ArrayList<>();
        http.volume(volume).get("replicas").forEach(n -> ids.add(n.asText()));
        VolumeIndex first = http.volumeIndex(stores.get(ids.get(0)).address(), volume);
        VolumeIndex second = http.volumeIndex(stores.get(ids.get(1)).address(), volume);
        assertThat(VolumeIndex.difference(first, second, true)).as("replicas of volume %d hold their needles in different orders", volume)
                .isNotNull();
    }

    private static RaidConfig config(TestCluster cluster, String codec, String encodeAt) {
        RaidConfig c = cluster.raidConfig(codec, BLOCK);
        c.k = K;
        c.r = R;
        c.transferBytes = 4096;
        c.encodeAt = encodeAt;
        c.indexReplicas = 2;
        return c.validate();
    }
}
