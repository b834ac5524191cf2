package io.hayloft.cli.cluster;

import io.hayloft.format.directory.VolumeState;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PartialFailureException;
import io.hayloft.client.PutResult;
import io.hayloft.client.RemoteException;
import io.hayloft.client.Upload;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.format.wire.PhotoId;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Puts coalesced by the client ({@link HayloftClient.Builder#coalescePuts(int)}) on a real embedded
 * cluster: many puts in flight at once, of every shape (no bytes to megabytes, alternate keys over
 * their whole unsigned range, several alternates per photo, a put too large to join others, an
 * oversized one refused), share requests and still each read back exactly from every replica; a
 * combined write that a replica misses gives every put its own failure, whose retry writes only it;
 * a volume that fills under a combined write moves it and loses nothing.
 */
class CoalescedPutsTest {
    private static final int[] ALTS = {0, 1, 2, 3, 4, 5, 7, 100, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFE, 0xFFFF_FFFF};

    @TempDir
    Path dir;

    private EmbeddedCluster cluster;
    private final Random random = new Random(20261124);
    /** Store write requests (PUT of one needle, POST of a multi-write) per store address. */
    private final Map<String, AtomicInteger> writes = new ConcurrentHashMap<>();
    private final Set<String> stores = ConcurrentHashMap.newKeySet();
    private final HttpTransport.Listener counting = new HttpTransport.Listener() {
        @Override
        public void onRequest(String target, String method, int status, RemoteException failure, long nanos) {
            if (("PUT".equals(method) || "POST".equals(method)) && stores.contains(target)) {
                writes.computeIfAbsent(target, k -> new AtomicInteger()).incrementAndGet();
            }
        }
    };

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private void start(ClusterOptions o) throws Exception {
        cluster = EmbeddedCluster.start(o);
        for (int i = 0; i < 3; i++) {
            stores.add(cluster.storeAddress(i));
        }
    }

    private ClusterOptions options() {
        return ClusterOptions.of(dir).withStores(3, 3).withTiming(100, 60_000, 2).withFsync(false);
    }

    private byte[] bytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    /** A photo and what it holds: alternate keys and their bytes, in order. */
    private record Photo(Upload upload, List<Integer> alts, List<byte[]> data) {
    }

    /**
     * A photo of 1 to 3 alternates with distinct keys from the whole range, of sizes 0, 1 and up to
     * {@code maxBytes}, or now and then {@code largeBytes} when that is not 0.
     */
    private Photo photo(int largeBytes, int maxBytes) {
        Upload u = Upload.empty();
        Set<Integer> seen = new HashSet<>();
        List<Integer> alts = new ArrayList<>();
        List<byte[]> data = new ArrayList<>();
        int n = 1 + random.nextInt(3);
        while (alts.size() < n) {
            int alt = random.nextInt(4) == 0 ? random.nextInt() : ALTS[random.nextInt(ALTS.length)];
            if (!seen.add(alt)) {
                continue;
            }
            int r = random.nextInt(20);
            int size = r == 0 ? 0 : r == 1 ? 1 : r == 2 && largeBytes > 0 ? largeBytes : random.nextInt(maxBytes);
            byte[] b = bytes(size);
            u.alt(alt, b);
            alts.add(alt);
            data.add(b);
        }
        return new Photo(u, alts, data);
    }

    @Test
    void manyPutsInFlightShareRequestsAndEachReadsBackExactlyFromEveryReplica() throws Exception {
        start(options());
        try (HayloftClient client = cluster.clientBuilder().coalescePuts(2).maxObjectBytes(3 << 20).listener(counting).build()) {
            List<Photo> photos = new ArrayList<>();
            List<CompletableFuture<List<PutResult>>> puts = new ArrayList<>();
            int needles = 0;
            for (int i = 0; i < 300; i++) {
                // now and then an alternate of 2.5 MiB: more than an eighth of the 16 MiB batch limit, so its put goes alone
                Photo u = photo(i % 10 == 0 ? (5 << 19) : 0, 70_000);
                photos.add(u);
                needles += u.alts().size();
                puts.add(client.putAsync(u.upload()));
                if (i == 150) { // refused alone, before anything is sent: the puts around it are unaffected
                    Throwable t = catchThrowable(() -> Futures.await(client.putAsync(Upload.of(new byte[(3 << 20) + 1]))));
                    assertThat(t).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("3145729 bytes");
                }
            }
            Set<Long> keys = new HashSet<>();
            for (int i = 0; i < photos.size(); i++) {
                Photo u = photos.get(i);
                List<PutResult> r = Futures.await(puts.get(i));
                assertThat(r).as("photo %d", i).hasSize(u.alts().size());
                PhotoId first = r.get(0).id();
                assertThat(keys.add(first.key())).as("photo %d has a key of its own", i).isTrue();
                for (int p = 0; p < r.size(); p++) {
                    PhotoId id = r.get(p).id();
                    assertThat(id.volume()).isEqualTo(first.volume());
                    assertThat(id.key()).isEqualTo(first.key());
                    assertThat(id.cookie()).isEqualTo(first.cookie());
                    assertThat(id.alt()).isEqualTo(u.alts().get(p));
                    byte[] want = u.data().get(p);
                    assertThat(client.get(id)).as("photo %d alternate %s", i, Integer.toUnsignedString(id.alt())).isEqualTo(want);
                    for (String replica : client.stat(id).replicas()) {
                        assertThat(Futures.await(client.stores().read(replica, id))).as("%s on %s", id, replica).isEqualTo(want);
                    }
                }
            }
            // Every put reached every replica, in far fewer requests than needles.
            assertThat(writes).hasSize(3);
            for (Map.Entry<String, AtomicInteger> e : writes.entrySet()) {
                assertThat(e.getValue().get()).as("write requests to %s for %d needles", e.getKey(), needles)
                        .isLessThan(needles / 2);
            }
        }
    }

    @Test
    void aCombinedWriteThatMissesAReplicaFailsEachPutOnItsOwnAndEachRetryWritesOnlyItsPhotos() throws Exception {
        start(options());
        try (HayloftClient client = cluster.clientBuilder().coalescePuts(1).maxAssigns(1).listener(counting).build()) {
            client.put(bytes(10)); // the directory creates the volumes while every store is up
            cluster.stopStore(2);
            writes.clear();
            List<Photo> photos = new ArrayList<>();
            List<CompletableFuture<List<PutResult>>> puts = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                Photo u = photo(0, 40_000); // at most 120 KB: small enough to join others
                photos.add(u);
                puts.add(client.putAsync(u.upload())); // the first goes at once; the other nine wait and go as one
            }
            List<PartialFailureException> failures = new ArrayList<>();
            for (int i = 0; i < photos.size(); i++) {
                int index = i;
                Throwable t = catchThrowable(() -> Futures.await(puts.get(index)));
                assertThat(t).as("put %d", i).isInstanceOf(PartialFailureException.class);
                PartialFailureException e = (PartialFailureException) t;
                assertThat(e.ids()).as("put %d names its own photo only", i).hasSize(photos.get(i).alts().size());
                assertThat(e.ids().stream().map(PhotoId::alt).toList()).isEqualTo(photos.get(i).alts());
                assertThat(e.ids().stream().map(PhotoId::key).distinct()).hasSize(1);
                assertThat(e.failures().keySet()).containsExactly(cluster.storeAddress(2));
                assertThat(e.succeeded()).containsExactlyInAnyOrder(cluster.storeAddress(0), cluster.storeAddress(1));
                assertThat(e.getMessage()).contains("put of " + e.ids().size() + " photo").contains("failed on 1 of 3 replicas");
                failures.add(e);
            }
            assertThat(failures.stream().map(e -> e.ids().get(0).key()).distinct()).hasSize(10);
            assertThat(writes.get(cluster.storeAddress(0)).get()).as("ten puts in two combined writes").isEqualTo(2);

            cluster.startStore(2);
            String third = cluster.storeAddress(2);
            PartialFailureException last = failures.get(9);
            assertThat(Futures.await(last.retry())).isEqualTo(last.ids());
            for (int p = 0; p < last.ids().size(); p++) {
                assertThat(Futures.await(client.stores().read(third, last.ids().get(p)))).isEqualTo(photos.get(9).data().get(p));
            }
            // The retry wrote that put's photo only: its neighbours in the combined write are still missing there.
            for (int i = 1; i < 9; i++) {
                PhotoId other = failures.get(i).ids().get(0);
                Throwable t = catchThrowable(() -> Futures.await(client.stores().read(third, other)));
                assertThat(t).as("put %d on the returned replica", i).isInstanceOf(RemoteException.class);
                assertThat(((RemoteException) t).httpStatus()).isEqualTo(404);
            }
            for (int i = 0; i < 9; i++) {
                Futures.await(failures.get(i).retry());
            }
            for (int i = 0; i < 10; i++) {
                List<PhotoId> ids = failures.get(i).ids();
                for (int p = 0; p < ids.size(); p++) {
                    for (int s = 0; s < 3; s++) {
                        assertThat(Futures.await(client.stores().read(cluster.storeAddress(s), ids.get(p))))
                                .isEqualTo(photos.get(i).data().get(p));
                    }
                }
            }
        }
    }

    @Test
    void aPutWritesTheAlternatesItWasGivenEvenWhenTheCallerAddsMoreWhileItWaits() throws Exception {
        start(options());
        try (HayloftClient client = cluster.clientBuilder().coalescePuts(1).build()) {
            List<CompletableFuture<List<PutResult>>> puts = new ArrayList<>();
            List<byte[]> firsts = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                byte[] first = bytes(100 + i);
                Upload u = Upload.empty().alt(3, first);
                puts.add(client.putAsync(u)); // all but the first wait for a slot
                u.alt(4, bytes(50)); // added after the call: not part of that put
                firsts.add(first);
            }
            for (int i = 0; i < puts.size(); i++) {
                List<PutResult> r = Futures.await(puts.get(i));
                assertThat(r).as("put %d", i).hasSize(1);
                assertThat(r.get(0).id().alt()).isEqualTo(3);
                assertThat(client.get(r.get(0).id())).isEqualTo(firsts.get(i));
            }
        }
    }

    @Test
    void combinedWritesThatFillTheirVolumeMoveAndLoseNothing() throws Exception {
        start(options().withVolumeLimit(256 * 1024));
        try (HayloftClient client = cluster.clientBuilder().coalescePuts(2).build()) {
            List<byte[]> data = new ArrayList<>();
            List<CompletableFuture<PutResult>> puts = new ArrayList<>();
            for (int i = 0; i < 200; i++) {
                byte[] b = bytes(4000 + random.nextInt(2000));
                data.add(b);
                puts.add(client.putAsync(b));
            }
            Set<Integer> volumes = new HashSet<>();
            for (int i = 0; i < puts.size(); i++) {
                PhotoId id = Futures.await(puts.get(i)).id();
                volumes.add(id.volume());
                assertThat(client.get(id)).as("put %d", i).isEqualTo(data.get(i));
            }
            assertThat(volumes.size()).as("about 1 MB on 256 KiB volumes").isGreaterThanOrEqualTo(4);
            // A photo no volume could hold fails at once, naming why, and leaves its volume writable.
            Throwable t = catchThrowable(() -> client.put(bytes(300 * 1024)));
            assertThat(t).isInstanceOf(PartialFailureException.class).hasMessageContaining("NEEDLE_TOO_LARGE")
                    .hasMessageContaining("can never fit volume");
            int refused = ((PartialFailureException) t).volume();
            cluster.heartbeat(); // the stores report their volumes' state now
            assertThat(Futures.await(client.directory().volume(refused)).state()).isEqualTo(VolumeState.WRITABLE);
            byte[] after = bytes(1000);
            assertThat(client.get(client.put(after).id())).isEqualTo(after);
            // A batch larger than a whole volume is written in halves, each on a volume of its own.
            List<byte[]> batch = new ArrayList<>();
            for (int i = 0; i < 120; i++) {
                batch.add(bytes(5000));
            }
            List<PutResult> stored = client.putAll(batch);
            assertThat(stored).hasSize(120);
            assertThat(stored.stream().map(r -> r.id().volume()).distinct().count()).isGreaterThan(1);
            for (int i = 0; i < 120; i++) {
                assertThat(client.get(stored.get(i).id())).as("batched photo %d", i).isEqualTo(batch.get(i));
            }
        }
    }
}
