package io.hayloft.raid;

import io.hayloft.client.store.NeedleData;
import io.hayloft.cold.ClusterReads;
import io.hayloft.cold.ColdReader;
import io.hayloft.format.wire.BatchBody;
import io.hayloft.format.wire.Wire;
import org.assertj.core.api.Assertions;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.needle.Superblock;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.VolumeIndex;
import io.hayloft.store.StoreServer;
import io.hayloft.testkit.PrometheusText;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stripes encoded on the replica holders ({@code encodeAt: store}, {@code POST
 * /admin/volumes/ID/encode-stripe}) against the raid-node path, on real stores: byte-identical blocks
 * and the same stripe-map CRCs for every codec at volume sizes on and next to block and stripe
 * boundaries (real volumes are 8-aligned, so "next to" is ±8 bytes), an empty volume and a last block
 * part-empty; stores without the endpoint (the raid-node path). A replica holder killed during the
 * encode: {@link ReplicaOrderEncodeTest}.
 */
class LocalEncodeTest {

    static final long BLOCK = 8192;
    static final int K = 4;
    static final int R = 2;
    static final long STRIPE = K * BLOCK;

    @TempDir
    Path dir;

    private static final HttpClient METRICS = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    /** Runs a test's block deletes at once (daemon threads: nothing to close). */
    private static final ExecutorService DELETES = Executors.newFixedThreadPool(8, r -> {
        Thread t = new Thread(r, "local-encode-test-delete");
        t.setDaemon(true);
        return t;
    });

    private final Random random = new Random(15);

    @Test
    void theStoresProduceTheRaidNodesBlocksForEveryCodecAndBoundary() throws Exception {
        long[] sizes = {32, BLOCK - 8, BLOCK, BLOCK + 8, 3 * BLOCK + 4000, STRIPE - 8, STRIPE, STRIPE + 8, 2 * STRIPE + BLOCK + 16};
        try (TestCluster cluster = new TestCluster(dir, 8)) {
            Cluster http = new Cluster(cluster.directory.address(), null, Duration.ofSeconds(10));
            List<Integer> volumes = new ArrayList<>();
            for (long size : sizes) {
                volumes.add(writeVolumeOfSize(cluster, size));
            }
            Map<String, Cluster.StoreRef> stores = http.stores();
            // The stores' encode counter is read once per volume and codec: the difference since the last
            // reading covers the previous raid-node path encode too, which must add nothing to it.
            double before = encodedOnStores(cluster);
            for (String codec : List.of("rs", "hh-xor", "hh-xor+", "hh-nonxor")) {
                for (int i = 0; i < sizes.length; i++) {
                    int volume = volumes.get(i);
                    String what = codec + " volume of " + sizes[i] + " bytes";
                    StripeMap atStore = writeAll(cluster, http, stores, volume, codec, RaidConfig.ENCODE_AT_STORE);
                    double after = encodedOnStores(cluster);
                    assertThat(after - before).as("stripes encoded on stores, %s (and none by the raid-node path before it)", what)
                            .isEqualTo(atStore.stripes().size());
                    before = after;
                    StripeMap atRaidNode = writeAll(cluster, http, stores, volume, codec, RaidConfig.ENCODE_AT_RAID_NODE);
                    assertThat(atStore.volumeBytes()).as(what).isEqualTo(sizes[i]);
                    assertThat(atStore.stripes()).as(what).hasSameSizeAs(atRaidNode.stripes());
                    assertThat(atStore.index().crc32c()).as("index block CRC, %s", what).isEqualTo(atRaidNode.index().crc32c());
                    for (int s = 0; s < atStore.stripes().size(); s++) {
                        for (int u = 0; u < K + R; u++) {
                            StripeMap.Block a = atStore.stripes().get(s).blocks().get(u);
                            StripeMap.Block b = atRaidNode.stripes().get(s).blocks().get(u);
                            assertThat(a.crc32c()).as("CRC of stripe %d unit %d, %s", s, u, what).isEqualTo(b.crc32c());
                            assertThat(http.readBlock(stores.get(a.store()).address(), a.name()))
                                    .as("bytes of stripe %d unit %d, %s", s, u, what)
                                    .isEqualTo(http.readBlock(stores.get(b.store()).address(), b.name()));
                        }
                    }
                    List<StripeMap.Block> written = new ArrayList<>(atStore.allBlocks());
                    written.addAll(atRaidNode.allBlocks());
                    assertThat(deleteAll(http, stores, written)).as("blocks deleted, %s", what).containsOnly(true);
                }
            }
            assertThat(encodedOnStores(cluster) - before).as("stripes encoded on stores by the last raid-node path encode").isZero();
            assertThat(cluster.allBlocks()).as("blocks left after the deletes").isEmpty();
        }
    }

    @Test
    void storesWithoutTheEndpointLeaveTheStripesToTheRaidNode() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 8)) {
            int volume = writeVolumeOfSize(cluster, 2 * STRIPE + 40);
            for (String id : List.copyOf(cluster.stores.keySet())) { // restart every store as an "older" one
                cluster.restartStore(id, c -> c.encodeStripes = false);
            }
            RaidConfig config = config(cluster, "rs", RaidConfig.ENCODE_AT_STORE);
            Cluster http = new Cluster(config.directory, null, Duration.ofSeconds(10));

            EncodeJob.Result r = new EncodeJob(http, config, Checkpoints.NONE).encode(volume);

            assertThat(r.stripes()).isEqualTo(3);
            assertThat(encodedOnStores(cluster)).as("no stripe encoded on a store").isZero();
            assertThat(http.stripeMap(volume).status()).isEqualTo(StripeMap.COMMITTED);
            assertOnlyMappedBlocksAndEveryPhotoReads(cluster, http, "after the raid-node path");
        }
    }

    @Test
    void aStoreStopsAnEncodeWhoseJobTheDirectoryNoLongerPlans() throws Exception {
        try (TestCluster cluster = new TestCluster(dir, 8)) {
            int volume = writeVolumeOfSize(cluster, STRIPE + 16);
            Cluster http = new Cluster(cluster.directory.address(), null, Duration.ofSeconds(10));
            Map<String, Cluster.StoreRef> stores = http.stores();
            String holder = stores.get(replicaIds(http, volume, stores).get(0)).address();
            http.sealVolume(holder, volume);
            List<Wire.EncodeTarget> targets = new ArrayList<>();
            List<Cluster.StoreRef> refs = new ArrayList<>(stores.values());
            for (int u = 0; u < K + R; u++) {
                targets.add(new Wire.EncodeTarget(refs.get(u).id(), refs.get(u).address(),
                        "v" + volume + "-0badf00d-s0-u" + u));
            }
            // a job a crashed raid-node planned and a recovery rolled back: the directory lists no plan
            Wire.EncodeStripeRequest req = new Wire.EncodeStripeRequest("0badf00d", "rs",
                    K, R, BLOCK, STRIPE + 16, 0, 4096, targets, holder);
            Assertions.assertThatThrownBy(() -> http.encodeStripe(holder, volume, req, Duration.ofSeconds(10)))
                    .isInstanceOfSatisfying(ClusterReads.HttpStatusException.class, e -> {
                        assertThat(e.status()).isEqualTo(409);
                        assertThat(e.errorName()).isEqualTo("JOB_NOT_PLANNED");
                    })
                    .hasMessageContaining("encode job 0badf00d of volume " + volume + " is not planned");
            assertThat(cluster.allBlocks()).as("blocks of a job no longer planned").isEmpty();
        }
    }

    // ------------------------------------------------------------------ helpers

    private static RaidConfig config(TestCluster cluster, String codec, String encodeAt) {
        return cluster.localEncodeConfig(codec, BLOCK, K, R, encodeAt);
    }

    /**
     * Seals a replica, plans and records the plan, writes every block on the path {@code encodeAt},
     * then aborts the plan in the directory (the blocks stay for the test to compare).
     */
    private static StripeMap writeAll(TestCluster cluster, Cluster http, Map<String, Cluster.StoreRef> stores, int volume,
                                      String codec, String encodeAt) throws Exception {
        RaidConfig config = config(cluster, codec, encodeAt);
        ReplicaSource src = ReplicaSource.open(http, volume, replicaIds(http, volume, stores).stream()
                .map(id -> stores.get(id).address()).toList());
        EncodeJob job = new EncodeJob(http, config, Checkpoints.NONE);
        StripeMap plan = job.plan(volume, src.size(), stores);
        http.beginEncoding(plan);
        try {
            return job.writeAll(plan, src, stores);
        } finally {
            http.abortEncoding(volume, plan.job());
        }
    }

    private static List<String> replicaIds(Cluster http, int volume, Map<String, Cluster.StoreRef> stores) throws Exception {
        List<String> out = new ArrayList<>();
        out.addAll(http.volume(volume).replicas());
        return out;
    }

    /** Deletes {@code blocks} from their stores, all at once; whether each was there, in order. */
    private static List<Boolean> deleteAll(Cluster http, Map<String, Cluster.StoreRef> stores, List<StripeMap.Block> blocks)
            throws Exception {
        List<CompletableFuture<Boolean>> deletes = new ArrayList<>();
        for (StripeMap.Block b : blocks) {
            deletes.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return http.deleteBlock(stores.get(b.store()).address(), b.name());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }, DELETES));
        }
        List<Boolean> out = new ArrayList<>();
        for (CompletableFuture<Boolean> d : deletes) {
            out.add(d.get(30, TimeUnit.SECONDS));
        }
        return out;
    }

    /** The running stores whose {@code hayloft_encode_stripes_total} is above 0. */
    private static List<String> storesThatEncoded(TestCluster cluster) throws Exception {
        List<String> out = new ArrayList<>();
        stripesEncoded(cluster).forEach((store, n) -> {
            if (n > 0) {
                out.add(store);
            }
        });
        return out;
    }

    /** The sum of {@code hayloft_encode_stripes_total} over the running stores. */
    private static double encodedOnStores(TestCluster cluster) throws Exception {
        return stripesEncoded(cluster).values().stream().mapToDouble(Double::doubleValue).sum();
    }

    /** {@code hayloft_encode_stripes_total} of each running store, from its {@code /metrics} (0 when absent). */
    private static Map<String, Double> stripesEncoded(TestCluster cluster) throws Exception {
        Map<String, CompletableFuture<HttpResponse<String>>> scrapes = new LinkedHashMap<>();
        for (Map.Entry<String, StoreServer> e : cluster.stores.entrySet()) {
            if (!cluster.stopped.contains(e.getKey())) { // every store's /metrics at once
                scrapes.put(e.getKey(), METRICS.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + e.getValue().port()
                        + "/metrics")).timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString()));
            }
        }
        Map<String, Double> out = new LinkedHashMap<>();
        for (Map.Entry<String, CompletableFuture<HttpResponse<String>>> e : scrapes.entrySet()) {
            HttpResponse<String> r = e.getValue().get(30, TimeUnit.SECONDS);
            assertThat(r.statusCode()).as("GET /metrics of %s", e.getKey()).isEqualTo(200);
            double n = PrometheusText.sum(r.body(), "hayloft_encode_stripes_total");
            out.put(e.getKey(), Double.isNaN(n) ? 0 : n);
        }
        return out;
    }

    /**
     * Writes a new volume of exactly {@code size} bytes (8-aligned, at least the 32-byte superblock;
     * 32: no needle) on every replica and marks it read-only.
     */
    private int writeVolumeOfSize(TestCluster cluster, long size) throws Exception {
        List<Integer> lengths = new ArrayList<>();
        long left = size - Superblock.SIZE;
        while (left > 0) {
            long len = left > 2400 ? 8L * (40 + random.nextInt(200)) : left;
            if (left - len > 0 && left - len < 48) {
                len = left - 48;
            }
            lengths.add((int) len);
            left -= len;
        }
        TestCluster.Leased a = cluster.lease(Math.max(1, lengths.size()));
        Map<Long, TestCluster.Photo> written = new LinkedHashMap<>();
        List<NeedleData> needles = new ArrayList<>();
        for (int i = 0; i < lengths.size(); i++) {
            TestCluster.Key p = a.photos().get(i);
            byte[] data = new byte[lengths.get(i) - 40]; // header 32 + footer 8, already 8-aligned
            random.nextBytes(data);
            needles.add(new NeedleData(p.key(), 0, Long.parseUnsignedLong(p.cookie(), 16), data));
            written.put(p.key(), new TestCluster.Photo(p.key(), a.volume(), p.cookie(), data));
        }
        if (!lengths.isEmpty()) {
            byte[] body = BatchBody.encode(needles);
            for (String replica : a.replicas()) {
                int code = cluster.send("POST", "http://" + replica + "/" + a.volume() + "/batch", body);
                assertThat(code).as("batch to %s", replica).isEqualTo(201);
            }
        }
        cluster.photos.putAll(written);
        cluster.directory.directory().markReadOnly(a.volume(), "test");
        Cluster http = new Cluster(cluster.directory.address(), null, Duration.ofSeconds(10));
        assertThat(http.volumeSize(a.replicas().get(0), a.volume())).as("volume size").isEqualTo(size);
        assertThat(VolumeIndex.needleLength(0)).isEqualTo(40);
        return a.volume();
    }

    /** No block the committed stripe maps leave out, and every photo written reads back through the cold reader. */
    private static void assertOnlyMappedBlocksAndEveryPhotoReads(TestCluster cluster, Cluster http, String when) throws Exception {
        cluster.assertOnlyMappedBlocks(http, when);
        try (ColdReader reader = new ColdReader(http)) {
            cluster.assertColdReads(reader, List.of(), when);
        }
    }
}
