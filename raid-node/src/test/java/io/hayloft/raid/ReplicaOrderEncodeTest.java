package io.hayloft.raid;

import io.hayloft.cold.ColdReader;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.testkit.Await;
import java.io.IOException;
import java.util.Collections;
import java.util.Comparator;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.VolumeIndex;
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

    /**
     * The source replica's store dies after stripe 0 while it holds blocks of the plan (7 stores for
     * k + r = 6): its blocks cannot be deleted, the plan is dropped anyway, and the encode starts over
     * from another replica with a plan that leaves the dead store out; once it is back, the orphan
     * sweep takes what it held.
     */
    @Test
    void theSourceReplicaDyingMidEncodeStartsTheEncodeOverFromAnotherOnEitherPath() throws Exception {
        for (String path : List.of(RaidConfig.ENCODE_AT_STORE, RaidConfig.ENCODE_AT_RAID_NODE)) {
            try (TestCluster cluster = new TestCluster(dir.resolve(path), 7); ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
                Cluster http = new Cluster(cluster.directory.address(), null, Duration.ofSeconds(10));
                int volume = cluster.writeVolumeInReplicaOrders(90, 3000);
                assertReplicasDiffer(http, volume);
                List<String> replicas = new ArrayList<>();
                replicas.addAll(http.volume(volume).replicas());
                Collections.sort(replicas);
                // EncodeJob starts at replica (volume mod replicas), by store id
                String source = replicas.get(Math.floorMod(volume, replicas.size()));
                RaidConfig config = config(cluster, "hh-xor+", path);
                config.workers = 1;
                String[] killed = {null};
                List<StripeMap> plans = new ArrayList<>();
                List<String> steps = new ArrayList<>();
                EncodeJob job = new EncodeJob(http, config, step -> {
                    steps.add(step);
                    try {
                        if (step.equals("begun")) {
                            plans.add(http.stripeMap(volume));
                        }
                        if (step.equals("stripe-0") && killed[0] == null) {
                            cluster.stores.get(source).close();
                            cluster.stopped.add(source);
                            killed[0] = source;
                        }
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                });

                EncodeJob.Result r = job.encode(volume);

                assertThat(killed[0]).as(path).isEqualTo(source);
                assertThat(plans).as("plans recorded, %s", path).hasSize(2);
                assertThat(plans.get(0).allBlocks()).extracting(StripeMap.Block::store).as("the first plan's stores").contains(source);
                assertThat(plans.get(1).allBlocks()).extracting(StripeMap.Block::store).as("the second plan's stores")
                        .doesNotContain(source);
                assertThat(r.stripes()).isGreaterThan(2);
                StripeMap map = http.stripeMap(volume);
                assertThat(map.status()).isEqualTo(StripeMap.COMMITTED);
                assertThat(map.job()).isEqualTo(r.job()).isEqualTo(plans.get(1).job());
                try (ColdReader reader = new ColdReader(http)) {
                    cluster.assertColdReads(reader, List.of(), "after the encode restarted, " + path);
                }
                // the dead store comes back with the first plan's blocks: orphans, which the sweep deletes
                cluster.restartStore(source, c -> { });
                cluster.stopped.remove(source);
                String orphans = "v" + volume + "-" + plans.get(0).job() + "-";
                assertThat(cluster.allBlocks()).as("blocks of the dropped plan on the store that came back")
                        .anyMatch(b -> b.startsWith(source + "/" + orphans));
                if (!http.stores().get(source).up()) {
                    http.restoreStore(source); // the health checker failed it while it was down: the operator's restore
                }
                RaidNode raid = new RaidNode(config, runner);
                Await.untilTrue("the orphan sweep deletes the dropped plan's blocks", Duration.ofSeconds(30), () -> {
                    raid.recover();
                    return cluster.allBlocks().stream().noneMatch(b -> b.contains("/" + orphans));
                });
                cluster.assertOnlyMappedBlocks(http, "after the sweep, " + path);
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
        return encodeWithDeletesAtStripe0(cluster, http, volume, path, compactAt, deleted, true);
    }

    /** As above; with {@code logged} false the log gets each photo with a wrong cookie instead of its own. */
    private static List<String> encodeWithDeletesAtStripe0(TestCluster cluster, Cluster http, int volume, String path, String compactAt,
                                                           List<Long> deleted, boolean logged) throws Exception {
        Map<String, Cluster.StoreRef> stores = http.stores();
        List<String> ids = new ArrayList<>();
        ids.addAll(http.volume(volume).replicas());
        Collections.sort(ids); // EncodeJob's order
        List<String> replicas = ids.stream().map(id -> stores.get(id).address()).toList();
        String source = replicas.get(Math.floorMod(volume, replicas.size()));
        // three photos in stripe 0 of the source (read before the deletes: the proof's tolerance) and the
        // two last ones (read after: their deleted flags are in the stripes)
        VolumeIndex own = http.volumeIndex(source, volume);
        List<TestCluster.Photo> byOffset = cluster.photos.values().stream().filter(p -> p.volume() == volume)
                .sorted(Comparator.comparingLong(p -> own.find(p.key(), 0).offset())).toList();
        assertThat(own.find(byOffset.get(2).key(), 0).offset()).as("third needle of the source in stripe 0").isLessThan(K * BLOCK);
        List<TestCluster.Photo> victims = new ArrayList<>(byOffset.subList(0, 3));
        victims.addAll(byOffset.subList(byOffset.size() - 2, byOffset.size()));
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
                        if (logged) {
                            cluster.logDelete(p);
                        } else {
                            cluster.logWrongCookieDelete(p);
                        }
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

    /**
     * A needle deleted on the source replica after the encode read it, with only a WRONG-cookie entry
     * for its key in the delete log (anyone may log one; it deletes nothing): not a client's delete, so
     * the proof fails naming the needle, the encode rolls back and the replicas stay.
     */
    @Test
    void aDeleteTheLogHoldsOnlyWithAnotherCookieStillFailsTheProof() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 8)) {
            Cluster http = new Cluster(cluster.directory.address(), null, Duration.ofSeconds(10));
            int volume = cluster.writeVolumeInReplicaOrders(90, 3000);
            assertThatThrownBy(() -> encodeWithDeletesAtStripe0(cluster, http, volume, RaidConfig.ENCODE_AT_RAID_NODE, null, new ArrayList<>(),
                    false))
                    .isInstanceOf(EncodeJob.IndexMismatchException.class).hasMessageContaining("is live only in the built index")
                    .hasMessageContaining("the replicas are kept");
            assertThat(http.volume(volume).state()).isEqualTo(VolumeState.READ_ONLY);
            assertThat(http.volume(volume).replicas()).hasSize(3);
            assertThat(cluster.allBlocks()).isEmpty();
        }
    }

    /**
     * A planned block's store (not a replica) dies mid-encode: the job fails and its rollback cannot
     * delete the blocks there, so the plan stays recorded and the volume ENCODING. Once the store is
     * back, {@link RaidNode#rollBackUnfinished()} (the daemon's pass) rolls it back, and the volume
     * encodes.
     */
    @Test
    void aPlanLeftByAFailedRollbackIsRolledBackByTheNextPass() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 7); ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            Cluster http = new Cluster(cluster.directory.address(), null, Duration.ofSeconds(10));
            int volume = cluster.writeVolumeInReplicaOrders(60, 3000);
            List<String> replicas = new ArrayList<>();
            replicas.addAll(http.volume(volume).replicas());
            RaidConfig config = config(cluster, "rs", RaidConfig.ENCODE_AT_RAID_NODE);
            config.workers = 1;
            String[] victim = {null};
            EncodeJob job = new EncodeJob(http, config, step -> {
                try {
                    if (step.equals("stripe-0") && victim[0] == null) {
                        victim[0] = http.stripeMap(volume).allBlocks().stream().map(StripeMap.Block::store)
                                .filter(st -> !replicas.contains(st)).findFirst().orElseThrow();
                        cluster.stores.get(victim[0]).close();
                        cluster.stopped.add(victim[0]);
                    }
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
            assertThatThrownBy(() -> job.encode(volume)).isInstanceOf(IOException.class);
            assertThat(http.volume(volume).state()).as("the plan kept").isEqualTo(VolumeState.ENCODING);
            assertThat(http.stripeMap(volume).status()).isEqualTo(StripeMap.PLANNED);

            cluster.restartStore(victim[0], c -> { });
            cluster.stopped.remove(victim[0]);
            RaidNode node = new RaidNode(config, runner);
            assertThat(node.rollBackUnfinished()).as("plans rolled back").isEqualTo(1);
            assertThat(http.volume(volume).state()).isEqualTo(VolumeState.READ_ONLY);
            assertThat(cluster.allBlocks()).as("blocks left").isEmpty();
            new EncodeJob(http, config, Checkpoints.NONE).encode(volume);
            assertThat(http.stripeMap(volume).status()).isEqualTo(StripeMap.COMMITTED);
            try (ColdReader reader = new ColdReader(http)) {
                cluster.assertColdReads(reader, List.of(), "after the unfinished plan was rolled back and the volume encoded");
            }
        }
    }

    private static void assertReplicasDiffer(Cluster http, int volume) throws Exception {
        Map<String, Cluster.StoreRef> stores = http.stores();
        List<String> ids = new ArrayList<>();
        ids.addAll(http.volume(volume).replicas());
        VolumeIndex first = http.volumeIndex(stores.get(ids.get(0)).address(), volume);
        VolumeIndex second = http.volumeIndex(stores.get(ids.get(1)).address(), volume);
        assertThat(VolumeIndex.difference(first, second, true)).as("replicas of volume %d hold their needles in different orders", volume)
                .isNotNull();
    }

    private static RaidConfig config(TestCluster cluster, String codec, String encodeAt) {
        return cluster.localEncodeConfig(codec, BLOCK, K, R, encodeAt);
    }
}
