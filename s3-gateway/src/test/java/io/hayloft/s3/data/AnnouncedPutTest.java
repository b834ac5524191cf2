package io.hayloft.s3.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.hayloft.client.HayloftClient;
import io.hayloft.client.PhotoNotFoundException;
import io.hayloft.client.PutResult;
import io.hayloft.format.s3.Chunk;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.s3.GatewayCluster;
import io.hayloft.store.StoreServer;
import io.hayloft.store.volume.Volume;
import io.hayloft.testkit.Await;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client's announced put ({@link HayloftClient#putAsync(byte[], java.util.function.Function)}),
 * the seam the chunk store stands on, against a real directory and real stores: the id is announced
 * before any replica holds a byte of it, a failed announcement writes nothing, and a put that moves
 * to another volume announces the new id before writing there.
 */
class AnnouncedPutTest {
    @TempDir
    static Path dir;
    static GatewayCluster cluster;
    static HayloftClient client;
    private final Random random = new Random(27);

    @BeforeAll
    static void start() throws Exception {
        cluster = GatewayCluster.startCluster(dir);
        client = HayloftClient.builder().directory(cluster.directoryAddress()).build();
    }

    @AfterAll
    static void stop() {
        if (client != null) {
            client.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    private byte[] bytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    @Test
    void theIdIsAnnouncedBeforeAnyReplicaHoldsTheNeedle() {
        byte[] data = bytes(5000);
        List<PhotoId> announced = new CopyOnWriteArrayList<>();
        List<Integer> replicasAtAnnouncement = new CopyOnWriteArrayList<>();
        PutResult r = client.putAsync(data, id -> {
            announced.add(id);
            replicasAtAnnouncement.add(StoreNeedles.live(cluster.stores()).getOrDefault(name(id), 0));
            return CompletableFuture.supplyAsync(() -> null); // completes later, on another thread
        }).join();
        assertThat(announced).containsExactly(r.id());
        assertThat(replicasAtAnnouncement).containsExactly(0);
        assertThat(StoreNeedles.live(cluster.stores())).containsEntry(name(r.id()), 3);
        assertThat(client.get(r.id())).isEqualTo(data);
    }

    @Test
    void aFailedOrThrowingAnnouncementFailsThePutAndWritesNothing() {
        Map<String, Integer> before = StoreNeedles.live(cluster.stores());
        IllegalStateException refused = new IllegalStateException("the directory said no");
        List<PhotoId> announced = new CopyOnWriteArrayList<>();
        Throwable t = catchThrowable(() -> client.putAsync(bytes(100), id -> {
            announced.add(id);
            return CompletableFuture.failedFuture(refused);
        }).join());
        assertThat(t).hasRootCause(refused);
        Throwable thrown = catchThrowable(() -> client.putAsync(bytes(1), id -> {
            announced.add(id);
            throw refused;
        }).join());
        assertThat(thrown).hasRootCause(refused);
        assertThat(announced).hasSize(2);
        assertThat(StoreNeedles.live(cluster.stores())).isEqualTo(before);
        for (PhotoId id : announced) {
            assertThat(catchThrowable(() -> client.get(id))).isInstanceOf(PhotoNotFoundException.class);
        }
    }

    @Test
    void aPutThatMovesAnnouncesTheNewIdBeforeWritingThere() throws Exception {
        client.put(bytes(10)); // a lease held: the next put goes to its volume
        // Every volume there is now refuses writes on one replica (the directory learns it at the next heartbeat).
        StoreServer store = cluster.stores().get(0);
        for (Volume v : store.store().volumes()) {
            v.seal();
        }
        byte[] data = bytes(3000);
        List<PhotoId> announced = new CopyOnWriteArrayList<>();
        PutResult r = client.putAsync(data, id -> {
            announced.add(id);
            return CompletableFuture.completedFuture(null);
        }).join();
        assertThat(announced).hasSizeGreaterThanOrEqualTo(2);
        assertThat(announced.get(announced.size() - 1)).isEqualTo(r.id());
        assertThat(announced.stream().map(PhotoId::volume).distinct().count()).isGreaterThan(1);
        assertThat(client.get(r.id())).isEqualTo(data);
        // The ids left behind were abandoned (delete log, then the replicas that took them): never readable.
        for (PhotoId id : announced.subList(0, announced.size() - 1)) {
            Await.until("abandoned " + id + " deleted", () -> !StoreNeedles.live(cluster.stores()).containsKey(name(id)));
            assertThat(catchThrowable(() -> client.get(id))).isInstanceOf(PhotoNotFoundException.class);
        }
    }

    private static String name(PhotoId id) {
        return StoreNeedles.name(Chunk.of(id, 1));
    }
}
