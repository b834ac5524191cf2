package io.hayloft.cli.cluster;

import io.hayloft.client.PhotoStat;
import io.hayloft.client.store.NotFoundException;
import io.hayloft.format.directory.StoreState;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.hayloft.client.DirectoryException;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PartialFailureException;
import io.hayloft.client.PhotoNotFoundException;
import io.hayloft.client.PutResult;
import io.hayloft.client.RemoteException;
import io.hayloft.client.Upload;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.format.wire.Wire;
import io.hayloft.testkit.Await;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The hot path end to end: a real directory and real stores in one process ({@link EmbeddedCluster}),
 * driven through {@link HayloftClient}. Stores are stopped and restarted for real; the model of what
 * must be readable is a map from id to the bytes that were acknowledged.
 */
class ClusterEndToEndTest extends ClientOnClusterTest {
    private final Random random = new Random(42);
    private final Map<PhotoId, byte[]> model = new HashMap<>();

    private ClusterOptions options(int stores) {
        // Probes rarely, so that a test decides when a stopped store is noticed.
        return ClusterOptions.of(dir).withStores(stores, stores).withTiming(100, 60_000, 2).withFsync(false);
    }

    private byte[] bytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    private void checkAll() {
        for (Map.Entry<PhotoId, byte[]> e : model.entrySet()) {
            assertThat(client.get(e.getKey())).as("photo %s", e.getKey()).isEqualTo(e.getValue());
        }
    }

    @Test
    void putGetDeleteSingleBatchedAndAlternates() throws Exception {
        start(options(3));
        byte[] one = bytes(3000);
        PutResult r = client.put(one);
        model.put(r.id(), one);
        assertThat(r.url()).startsWith("http://127.0.0.1:").endsWith(r.id().needlePath());
        assertThat(client.get(r.url())).isEqualTo(one);

        List<byte[]> batch = new ArrayList<>();
        for (int i = 0; i < 150; i++) {
            batch.add(bytes(random.nextInt(5000)));
        }
        List<PutResult> many = client.putAll(batch);
        assertThat(many).hasSize(150);
        for (int i = 0; i < many.size(); i++) {
            model.put(many.get(i).id(), batch.get(i));
            if (i > 0) {
                assertThat(many.get(i).id().key()).isEqualTo(many.get(i - 1).id().key() + 1);
            }
        }
        byte[] big = bytes(200_000);
        byte[] thumb = bytes(2_000);
        List<PutResult> alts = client.put(Upload.empty().alt(0, big).alt(7, thumb));
        assertThat(alts.get(0).id().key()).isEqualTo(alts.get(1).id().key());
        assertThat(alts.get(1).id().alt()).isEqualTo(7);
        model.put(alts.get(0).id(), big);
        model.put(alts.get(1).id(), thumb);

        List<CompletableFuture<byte[]>> reads = new ArrayList<>();
        List<PhotoId> ids = new ArrayList<>(model.keySet());
        for (PhotoId id : ids) {
            reads.add(client.getAsync(id));
        }
        for (int i = 0; i < ids.size(); i++) {
            assertThat(Futures.await(reads.get(i))).isEqualTo(model.get(ids.get(i)));
        }
        // Every replica holds every needle.
        PhotoStat l = client.stat(alts.get(1).id());
        assertThat(l.replicas()).hasSize(3);
        assertThat(l.alts()).containsExactlyInAnyOrder(new PhotoStat.Alt(0, big.length),
                new PhotoStat.Alt(7, thumb.length));
        for (String replica : l.replicas()) {
            assertThat(Futures.await(client.stores().read(replica, alts.get(1).id()))).isEqualTo(thumb);
        }

        client.delete(alts.get(0).id());
        model.remove(alts.get(0).id());
        model.remove(alts.get(1).id());
        assertThatThrownBy(() -> client.get(alts.get(1).id())).isInstanceOf(PhotoNotFoundException.class).hasMessageEndingWith("not found: no such photo");
        for (String replica : l.replicas()) {
            assertThat(catchThrowable(() -> Futures.await(client.stores().read(replica, alts.get(0).id()))))
                    .isInstanceOf(NotFoundException.class);
        }
        // Deleting again: the stores no longer hold it, so it is not found (and nothing changes).
        assertThatThrownBy(() -> client.delete(alts.get(1).id())).isInstanceOf(PhotoNotFoundException.class);
        checkAll();
    }

    @Test
    void wrongCookiesUnknownKeysAndBadIdsAreClearErrors() throws Exception {
        start(options(3));
        PutResult r = client.put(bytes(100));
        PhotoId id = r.id();
        assertThatThrownBy(() -> client.get(new PhotoId(id.volume(), id.key(), id.alt(), id.cookie() ^ 1)))
                .isInstanceOf(PhotoNotFoundException.class).hasMessageEndingWith("not found: no such photo");
        assertThatThrownBy(() -> client.get(new PhotoId(id.volume() + 50, id.key(), id.alt(), id.cookie())))
                .isInstanceOf(PhotoNotFoundException.class).hasMessageEndingWith("not found: no such photo");
        assertThatThrownBy(() -> client.get(new PhotoId(id.volume(), 987_654_321L, 0, 5)))
                .isInstanceOf(PhotoNotFoundException.class).hasMessageEndingWith("not found: no such photo");
        assertThatThrownBy(() -> client.get(id.withAlt(3))).isInstanceOf(PhotoNotFoundException.class)
                .hasMessageEndingWith("not found: no such photo");
        assertThatThrownBy(() -> client.delete(new PhotoId(id.volume(), id.key(), 0, id.cookie() + 1)))
                .isInstanceOf(PhotoNotFoundException.class);
        assertThat(client.get(id)).hasSize(100); // the refused delete did nothing
        assertThatThrownBy(() -> PhotoId.parse("1,2,x,ff")).hasMessageContaining("malformed photo id '1,2,x,ff'");
        assertThatThrownBy(() -> client.get("http://127.0.0.1:1/nothing")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("malformed photo URL");
        RemoteException unknownVolume = (RemoteException) catchThrowable(() -> Futures.await(client.directory().volume(999)));
        assertThat(unknownVolume).isInstanceOf(DirectoryException.class);
        assertThat(unknownVolume.code()).isEqualTo(DirectoryException.UNKNOWN_VOLUME);
        assertThat(unknownVolume.httpStatus()).isEqualTo(404);
    }

    @Test
    void oversizedInputIsRefusedBeforeAnythingIsSentAndLargeBatchesAreSplit() throws Exception {
        start(options(3));
        try (HayloftClient small = HayloftClient.builder().directory(cluster.directoryAddress())
                .maxObjectBytes(10_000).maxBatchBytes(64 * 1024).build()) {
            assertThatThrownBy(() -> small.put(new byte[10_001])).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("10001 bytes").hasMessageContaining("10000");
            assertThatThrownBy(() -> small.putAll(List.of(new byte[10], new byte[20_000])))
                    .hasMessageContaining("photo 1 alternate 0 is 20000 bytes");
            // 1,200 photos: more than one lease holds (1,000 keys) and more than one body may carry.
            List<byte[]> batch = new ArrayList<>();
            for (int i = 0; i < 1200; i++) {
                batch.add(bytes(100));
            }
            List<PutResult> stored = small.putAll(batch);
            assertThat(stored).hasSize(1200);
            assertThat(stored.stream().map(p -> p.id().key()).distinct()).hasSize(1200);
            assertThat(stored.stream().map(p -> p.id().volume()).distinct().count()).isGreaterThan(1);
            for (int i = 0; i < 1200; i += 101) {
                assertThat(small.get(stored.get(i).id())).isEqualTo(batch.get(i));
            }
        }
    }

    @Test
    void readsFailOverWhenAReplicaIsStopped() throws Exception {
        start(options(3));
        for (int i = 0; i < 8; i++) {
            byte[] b = bytes(1000 + i);
            model.put(client.put(b).id(), b);
        }
        checkAll(); // loads the volume map while every store is healthy
        for (int s = 0; s < 3; s++) {
            cluster.stopStore(s);
            checkAll();
            cluster.startStore(s);
        }
    }

    @Test
    void aPutThatMissesAReplicaNamesItAndItsRetryCompletesTheWrite() throws Exception {
        start(options(3));
        client.put(bytes(10)); // the directory creates the volumes while every store is up
        cluster.stopStore(2);
        byte[] data = bytes(4000);
        PartialFailureException e = (PartialFailureException) catchThrowable(() -> client.put(data));
        assertThat(e).isInstanceOf(PartialFailureException.class);
        assertThat(e.operation()).isEqualTo("put");
        assertThat(e.failures().keySet()).containsExactly(cluster.storeAddress(2));
        assertThat(e.failures().get(cluster.storeAddress(2)).kind()).isEqualTo(RemoteException.Kind.UNREACHABLE);
        assertThat(e.succeeded()).containsExactlyInAnyOrder(cluster.storeAddress(0), cluster.storeAddress(1));
        assertThat(e.getMessage()).contains("failed on 1 of 3 replicas").contains(cluster.storeAddress(2));
        PhotoId id = e.ids().get(0);
        // No commit any more: the replicas that acknowledged serve it; retry() completes the third.
        assertThat(client.get(id)).isEqualTo(data);

        cluster.startStore(2);
        assertThat(Futures.await(e.retry())).containsExactly(id);
        assertThat(client.get(id)).isEqualTo(data);
        assertThat(Futures.await(client.stores().read(cluster.storeAddress(2), id))).isEqualTo(data);
    }

    @Test
    void aPutGoesToAnotherVolumeWhenOneHasAStoppedReplica() throws Exception {
        // Volumes span 3 of 4 stores: with one store down, a write that hits it moves to another volume
        // (the health checker soon marks the store's volumes read-only, so leases avoid them).
        start(options(4).withReplication(3).withTiming(100, 100, 2));
        Futures.await(client.directory().createVolumes(4));
        cluster.stopStore(0);
        for (int i = 0; i < 10; i++) {
            byte[] b = bytes(500);
            PutResult r = client.put(b);
            model.put(r.id(), b);
            assertThat(client.stat(r.id()).replicas()).doesNotContain(cluster.storeAddress(0));
        }
        checkAll();
    }

    @Test
    void aFullVolumeBecomesReadOnlyAndWritesMoveOn() throws Exception {
        start(options(3).withVolumeLimit(64 * 1024));
        for (int i = 0; i < 15; i++) {
            List<byte[]> batch = List.of(bytes(4096), bytes(4096), bytes(4096), bytes(4096));
            List<PutResult> stored = client.putAll(batch);
            for (int j = 0; j < 4; j++) {
                model.put(stored.get(j).id(), batch.get(j));
            }
        }
        cluster.heartbeat();
        List<VolumeInfo> volumes = Futures.await(client.directory().volumes());
        assertThat(volumes.stream().filter(v -> v.state() == VolumeState.READ_ONLY)
                .map(VolumeInfo::reason).toList()).isNotEmpty();
        assertThat(model.keySet().stream().map(PhotoId::volume).distinct().count()).isGreaterThan(2);
        checkAll();
    }

    @Test
    void theHealthCheckerMarksAStoppedStoreFailedAndItsVolumesReadOnly() throws Exception {
        start(ClusterOptions.of(dir).withStores(4, 2).withTiming(50, 50, 2).withFsync(false));
        byte[] b = bytes(100);
        model.put(client.put(b).id(), b);
        cluster.stopStore(1);
        String id = EmbeddedCluster.storeId(1);
        Await.until("store-1 FAILED", () -> Futures.await(client.directory().stores()).stream()
                .anyMatch(s -> s.id().equals(id) && s.state() == StoreState.FAILED));
        Await.until("volumes of store-1 read-only", () -> Futures.await(client.directory().volumes()).stream()
                .filter(v -> v.replicas().contains(id))
                .allMatch(v -> v.state() == VolumeState.READ_ONLY));
        for (VolumeInfo v : Futures.await(client.directory().volumes())) {
            List<String> replicas = v.replicas();
            if (replicas.contains(id)) {
                assertThat(v.state()).as("volume %s", v).isEqualTo(VolumeState.READ_ONLY);
                assertThat(v.reason()).startsWith("store ").contains("failed");
            }
        }
        checkAll();
        for (int i = 0; i < 5; i++) {
            assertThat(client.stat(client.put(bytes(10)).id()).replicas()).doesNotContain(cluster.storeAddress(1));
        }
    }

    @Test
    void aDirectoryRestartLosesNothingAndNeverReusesAKey() throws Exception {
        start(options(3));
        List<byte[]> batch = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            batch.add(bytes(300));
        }
        List<PutResult> stored = client.putAll(batch);
        for (int i = 0; i < stored.size(); i++) {
            model.put(stored.get(i).id(), batch.get(i));
        }
        long maxKey = stored.stream().mapToLong(p -> p.id().key()).max().orElseThrow();
        cluster.restartDirectory();
        checkAll();
        PutResult next = client.put(bytes(5));
        assertThat(next.id().key()).isGreaterThan(maxKey);

        cluster.close();
        cluster = EmbeddedCluster.start(options(3));
        client.close();
        client = cluster.newClient();
        checkAll();
    }
}
