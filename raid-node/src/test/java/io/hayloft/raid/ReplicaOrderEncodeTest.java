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

    /**
     * Deletes (logged in the directory, then flagged on every replica) land after the encode read
     * their needles: the proof accepts them and the deleted photos stay deleted when cold. Then the
     * same with a compaction of the source replica (it drops those needles and moves the rest) landing
     * mid-encode, and after the last stripe was read (every stripe consistent, the replica's index
     * not): the encode starts over from another replica and commits.
     */
    @Test
    void deletesAndACompactionOfTheSourceDuringTheEncodeOnEitherPath() throws Exception {
        for (String path : List.of(RaidConfig.ENCODE_AT_STORE, RaidConfig.ENCODE_AT_RAID_NODE)) {
            try (TestCluster cluster = new TestCluster(dir.resolve(path), 8)) {
                Cluster http = new Cluster(cluster.directory.address(), null, Duration.ofSeconds(10));
                List<Long> deleted = new ArrayList<>();
                for (String compactAt : new String[] {null, "stripe-1", "last stripe"}) {
                    int volume = cluster.writeVolumeInReplicaOrders(90, 3000);
                    List<String> steps = encodeWithDeletesAtStripe0(cluster, http, volume, path, compactAt, deleted);
                    assertThat(steps.stream().filter("begun"::equals)).as("plans recorded, %s, compaction at %s", path, compactAt)
                            .hasSize(compactAt == null ? 1 : 2);
                    assertThat(http.stripeMap(volume).status()).isEqualTo(StripeMap.COMMITTED);
                }
                cluster.assertOnlyMappedBlocks(http, "after the encodes, " + path);
                try (ColdReader reader = new ColdReader(http)) {
                    cluster.assertColdReads(reader, deleted, "after deletes and a compaction during the encode, " + path);
                }
            }
        }
    }

    /**
     * Encodes {@code volume} on one worker; when stripe 0 is done, deletes its last five photos as a
     * client does, and compacts the source replica when stripe 1 or the last stripe of the first plan
     * is done ({@code compactAt}: "stripe-1", "last stripe", or null for no compaction). Returns the
     * checkpoints reached.
     */
    private static List<String> encodeWithDeletesAtStripe0(TestCluster cluster, Cluster http, int volume, String path, String compactAt,
                                                           List<Long> deleted) throws Exception {
        Map<String, Cluster.StoreRef> stores = http.stores();
        List<String> replicas = new ArrayList<>();
        http.volume(volume).get("replicas").forEach(n -> replicas.add(stores.get(n.asText()).address()));
        String source = replicas.get(Math.floorMod(volume, replicas.size()));
        List<TestCluster.Photo> victims = cluster.photos.values().stream().filter(p -> p.volume() == volume).toList();
        victims = victims.subList(victims.size() - 5, victims.size());
        RaidConfig config = config(cluster, "rs", path);
        config.workers = 1;
        long stripes = (http.volumeSize(source, volume) + K * BLOCK - 1) / (K * BLOCK);
        assertThat(stripes).as("stripes of volume %d", volume).isGreaterThan(2);
        String compactStep = compactAt == null ? null : compactAt.equals("stripe-1") ? "stripe-1" : "stripe-" + (stripes - 1);
        List<String> steps = new ArrayList<>();
        List<TestCluster.Photo> gone = victims;
        EncodeJob job = new EncodeJob(http, config, step -> {
            steps.add(step);
            try {
                if (step.equals("stripe-0") && steps.indexOf(step) == steps.size() - 1) {
                    for (TestCluster.Photo p : gone) {
                        cluster.logDelete(p);
                        for (String r : replicas) {
                            // 404: the store applied the directory's delete log first
                            assertThat(cluster.send("DELETE", "http://" + r + "/" + volume + "/" + p.key() + "/0?cookie=" + p.cookie(), null))
                                    .as("delete on %s", r).isIn(200, 204, 404);
                        }
                        deleted.add(p.key());
                    }
                } else if (step.equals(compactStep) && steps.stream().filter("begun"::equals).count() == 1) {
                    assertThat(cluster.send("POST", "http://" + source + "/admin/volumes/" + volume + "/compact", null))
                            .as("compaction of the source replica").isEqualTo(200);
                }
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        job.encode(volume);
        return steps;
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
