package io.hayloft.cli.raid;

import io.hayloft.client.Futures;
import io.hayloft.cold.ClusterReads;
import java.util.HashMap;
import java.util.concurrent.CompletableFuture;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.client.Upload;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.VolumeIndex;
import io.hayloft.raid.Cluster;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.ThreadPoolRunner;
import io.hayloft.testkit.PrometheusText;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 24: volumes filled by 8 concurrent writers go cold with the default settings. Eight threads
 * put through two shared {@link HayloftClient}s (single puts, which the first client coalesces and
 * the second does not; photos with alternate keys over the whole unsigned 32-bit range; small
 * batches), sizes 0 B to 64 KiB, into 1 MiB volumes of an embedded cluster of 15 stores on 15
 * racks with 3 replicas. The replicas of a volume so written hold the same needles in different
 * orders (the test checks that some do, so it exercises what it is about, and gives those volumes
 * to the encodes first). Every volume is then marked read-only and encoded: with
 * {@code encodeAt: store} (the default) for each codec (rs, hh-xor, hh-xor+, hh-nonxor), and with
 * {@code encodeAt: raid-node}, different volumes each, 16 KiB blocks in stripes of 10 + 4 so that
 * needles cross block and stripe boundaries. Every photo reads back byte-exact, healthy and with
 * four stores stopped (four data blocks of one stripe gone, three or four of every other).
 *
 * <p>Single-threaded apart from the writers, which share only the clients and a concurrent map.
 */
class ConcurrentWritersEncodeTest {

    private static final int WRITERS = 8;
    private static final int OPS_PER_WRITER = 32;
    private static final long VOLUME_LIMIT = 1 << 20;
    private static final long BLOCK = 16 << 10;
    private static final int K = 10;
    /** Alternate keys on the edges of the unsigned 32-bit range: 0, 1, 2^31 - 1, 2^31, 2^32 - 1. */
    private static final int[] EDGE_ALTS = {0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF};
    /** Sizes on the edges: empty, one byte, around 4 KiB and a block's 16 KiB, the 64 KiB maximum. */
    private static final int[] EDGE_SIZES = {0, 1, 7, 8, 9, 4095, 4096, 4097, 16383, 16384, 16385, 65535, 65536};

    /** Where volumes are encoded, and with which codec: the four codecs on the stores, then the raid-node path. */
    private record Way(String codec, String encodeAt) {
        @Override
        public String toString() {
            return codec + " (encodeAt: " + encodeAt + ")";
        }
    }

    private static final List<Way> WAYS = List.of(new Way("rs", RaidConfig.ENCODE_AT_STORE),
            new Way("hh-xor", RaidConfig.ENCODE_AT_STORE), new Way("hh-xor+", RaidConfig.ENCODE_AT_STORE),
            new Way("hh-nonxor", RaidConfig.ENCODE_AT_STORE), new Way("hh-xor+", RaidConfig.ENCODE_AT_RAID_NODE));

    @TempDir
    Path dir;

    @Test
    void volumesFilledByConcurrentWritersEncodeWithEveryCodecAndReadBackHealthyAndDegraded() throws Exception {
        ClusterOptions options = ClusterOptions.of(dir).withStores(15, 15).withReplication(3).withVolumeLimit(VOLUME_LIMIT)
                .withTiming(1000, 200, 2).withFsync(false);
        try (EmbeddedCluster cluster = EmbeddedCluster.start(options);
             HayloftClient client = cluster.newClient();
             HayloftClient uncoalesced = cluster.clientBuilder().coalescePuts(0).build();
             ThreadPoolRunner runner = new ThreadPoolRunner(2)) {
            Map<PhotoId, byte[]> photos = writeConcurrently(client, uncoalesced);
            assertThat(photos.size()).as("photos written").isBetween(350, 700);

            Cluster http = new RaidNode(raidConfig(cluster, WAYS.get(0)), runner).cluster();
            TreeSet<Integer> volumes = new TreeSet<>();
            photos.keySet().forEach(id -> volumes.add(id.volume()));
            assertThat(volumes).as("volumes holding photos (one per way of encoding at least)").hasSizeGreaterThanOrEqualTo(WAYS.size());
            for (int v : volumes) {
                cluster.directory().directory().markReadOnly(v, "test: sealed for the encode");
            }

            // The premise: replicas of a volume hold the same needles in different orders; needles cross stripes.
            List<Integer> differing = new ArrayList<>();
            int crossing = 0;
            for (int v : volumes) {
                List<VolumeIndex> replicas = replicaIndexes(http, v);
                if (orderDiffers(replicas)) {
                    differing.add(v);
                }
                crossing += crossingStripes(replicas.get(0));
            }
            assertThat(differing).as("volumes whose replicas hold their needles in different orders").isNotEmpty();
            assertThat(crossing).as("needles crossing a stripe boundary").isPositive();

            // Every way gets volumes whose replicas differ first (the raid-node path the fifth, when there are five).
            List<Integer> same = volumes.stream().filter(v -> !differing.contains(v)).toList();
            int viaRaidNode = differing.size() >= WAYS.size() ? differing.get(WAYS.size() - 1)
                    : !same.isEmpty() ? same.get(0) : differing.get(differing.size() - 1);
            List<Integer> onStores = new ArrayList<>(differing);
            onStores.addAll(same);
            onStores.remove(Integer.valueOf(viaRaidNode));
            Map<Integer, Way> encodedBy = new TreeMap<>();
            encodedBy.put(viaRaidNode, WAYS.get(WAYS.size() - 1));
            for (int i = 0; i < onStores.size(); i++) {
                encodedBy.put(onStores.get(i), WAYS.get(i % (WAYS.size() - 1)));
            }
            List<String> failures = new ArrayList<>();
            for (Map.Entry<Integer, Way> e : encodedBy.entrySet()) {
                int v = e.getKey();
                try {
                    double before = stripesEncodedOnStores(cluster);
                    int stripes = new RaidNode(raidConfig(cluster, e.getValue()), runner).encode(v).stripes();
                    double byHolders = stripesEncodedOnStores(cluster) - before;
                    if (e.getValue().encodeAt().equals(RaidConfig.ENCODE_AT_STORE)) {
                        assertThat(byHolders).as("stripes of volume %d encoded by replica holders, of %d", v, stripes)
                                .isGreaterThanOrEqualTo(stripes);
                    } else {
                        assertThat(byHolders).as("stripes of volume %d encoded by replica holders on the raid-node path", v).isZero();
                    }
                } catch (IOException | RuntimeException x) {
                    failures.add("volume " + v + " " + e.getValue() + (differing.contains(v) ? ", replicas in different orders" : "")
                            + ": " + x.getMessage());
                }
            }
            assertThat(failures).as("encodes that failed (of %d volumes, %d with replicas in different orders)",
                    volumes.size(), differing.size()).isEmpty();
            for (Map.Entry<Integer, Way> e : encodedBy.entrySet()) {
                StripeMap map = http.stripeMap(e.getKey());
                assertThat(map.status()).as("volume %d", e.getKey()).isEqualTo(StripeMap.COMMITTED);
                assertThat(map.codec()).as("codec of volume %d", e.getKey()).isEqualTo(e.getValue().codec());
                assertThat(map.stripes().size()).as("stripes of volume %d", e.getKey()).isGreaterThanOrEqualTo(1);
            }

            readAll(client, photos, "healthy");

            // Four data blocks of one stripe gone: stop the stores holding them (every other stripe loses 3 or 4).
            StripeMap first = http.stripeMap(differing.get(0));
            StripeMap.Stripe victim = first.stripes().get(first.stripes().size() / 2);
            Set<String> stopped = new LinkedHashSet<>();
            for (int u = 0; u < 4; u++) {
                stopped.add(victim.blocks().get(u).store());
            }
            for (String store : stopped) {
                cluster.stopStore(Integer.parseInt(store.substring("store-".length())));
            }
            readAll(client, photos, "with stores " + stopped + " stopped");
        }
    }

    /**
     * Eight threads put at once: single puts, photos with several alternate keys, batches of 2 to 5;
     * six threads share {@code coalescing} (whose puts are combined while others are in flight), two
     * share {@code uncoalesced} (every put its own requests), as two applications would. Returns every
     * acknowledged needle's bytes.
     */
    private static Map<PhotoId, byte[]> writeConcurrently(HayloftClient coalescing, HayloftClient uncoalesced) throws Exception {
        Map<PhotoId, byte[]> photos = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(WRITERS);
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> writers = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                Random random = new Random(24_000 + w);
                HayloftClient client = w < WRITERS - 2 ? coalescing : uncoalesced;
                writers.add(pool.submit(() -> {
                    start.await();
                    for (int op = 0; op < OPS_PER_WRITER; op++) {
                        int kind = random.nextInt(10);
                        if (kind < 5) {
                            byte[] data = data(random);
                            photos.put(client.put(data).id(), data);
                        } else if (kind < 7) {
                            Upload photo = Upload.empty();
                            Map<Integer, byte[]> alts = new HashMap<>();
                            int n = 1 + random.nextInt(3);
                            while (alts.size() < n) {
                                int alt = random.nextBoolean() ? EDGE_ALTS[random.nextInt(EDGE_ALTS.length)] : random.nextInt();
                                if (!alts.containsKey(alt)) {
                                    byte[] data = data(random);
                                    alts.put(alt, data);
                                    photo.alt(alt, data);
                                }
                            }
                            for (PutResult r : client.put(photo)) {
                                photos.put(r.id(), alts.get(r.id().alt()));
                            }
                        } else {
                            List<byte[]> batch = new ArrayList<>();
                            for (int i = 2 + random.nextInt(4); i > 0; i--) {
                                batch.add(data(random));
                            }
                            List<PutResult> results = client.putAll(batch);
                            for (int i = 0; i < batch.size(); i++) {
                                photos.put(results.get(i).id(), batch.get(i));
                            }
                        }
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : writers) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        return photos;
    }

    /** A photo of 0 B to 64 KiB: one size in five on an edge, most small, some up to the maximum. */
    private static byte[] data(Random random) {
        int pick = random.nextInt(20);
        int size = pick < 4 ? EDGE_SIZES[random.nextInt(EDGE_SIZES.length)]
                : pick < 8 ? 1 + random.nextInt(256)
                : pick < 18 ? 1 + random.nextInt(24 << 10)
                : 1 + random.nextInt(64 << 10);
        byte[] b = new byte[size];
        random.nextBytes(b);
        return b;
    }

    private static RaidConfig raidConfig(EmbeddedCluster cluster, Way way) {
        RaidConfig c = new RaidConfig();
        c.directory = cluster.directoryAddress();
        c.codec = way.codec();
        c.encodeAt = way.encodeAt();
        c.k = K;
        c.r = 4;
        c.blockSize = BLOCK;
        c.transferBytes = 16 << 10;
        c.spoolDir = cluster.options().dataDir().toString();
        return c;
    }

    /** Each replica's own index of {@code volume}, as its store holds it. */
    private static List<VolumeIndex> replicaIndexes(Cluster http, int volume) throws IOException {
        Map<String, ClusterReads.StoreRef> stores = http.stores();
        List<VolumeIndex> out = new ArrayList<>();
        for (String id : http.volume(volume).replicas()) {
            out.add(http.volumeIndex(stores.get(id).address(), volume));
        }
        assertThat(out).as("replicas of volume %d", volume).hasSize(3);
        return out;
    }

    /** True when some live needle of the first replica lies at another offset on another replica. */
    private static boolean orderDiffers(List<VolumeIndex> replicas) {
        VolumeIndex first = replicas.get(0);
        for (VolumeIndex other : replicas.subList(1, replicas.size())) {
            for (VolumeIndex.Entry e : first.entries()) {
                VolumeIndex.Entry o = other.find(e.key(), e.alt());
                if (!e.deleted() && o != null && o.offset() != e.offset()) {
                    return true;
                }
            }
        }
        return false;
    }

    /** Live needles of {@code index} that begin in one stripe and end in the next. */
    private static int crossingStripes(VolumeIndex index) {
        long stripe = K * BLOCK;
        int n = 0;
        for (VolumeIndex.Entry e : index.entries()) {
            if (!e.deleted() && e.offset() / stripe != (e.offset() + e.length() - 1) / stripe) {
                n++;
            }
        }
        return n;
    }

    /** The sum of {@code hayloft_encode_stripes_total} over the running stores: stripes encoded by replica holders. */
    private static double stripesEncodedOnStores(EmbeddedCluster cluster) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        double sum = 0;
        for (int i = 0; i < cluster.storeCount(); i++) {
            String body = http.send(HttpRequest.newBuilder(URI.create("http://" + cluster.storeAddress(i) + "/metrics")).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            double n = PrometheusText.sum(body, "hayloft_encode_stripes_total");
            sum += Double.isNaN(n) ? 0 : n;
        }
        return sum;
    }

    /** Reads every photo through the client, 16 at a time, and compares its bytes. */
    private static void readAll(HayloftClient client, Map<PhotoId, byte[]> photos, String when) {
        List<Map.Entry<PhotoId, byte[]>> all = new ArrayList<>(photos.entrySet());
        for (int from = 0; from < all.size(); from += 16) {
            List<Map.Entry<PhotoId, byte[]>> some = all.subList(from, Math.min(all.size(), from + 16));
            List<CompletableFuture<byte[]>> reads = new ArrayList<>();
            some.forEach(e -> reads.add(client.getAsync(e.getKey())));
            for (int i = 0; i < some.size(); i++) {
                Map.Entry<PhotoId, byte[]> e = some.get(i);
                assertThat(Futures.await(reads.get(i))).as("photo %s (%d bytes), %s", e.getKey(), e.getValue().length,
                        when).isEqualTo(e.getValue());
            }
        }
    }
}
