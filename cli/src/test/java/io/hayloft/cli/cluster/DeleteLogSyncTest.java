package io.hayloft.cli.cluster;

import java.io.IOException;
import java.util.Collections;
import java.util.concurrent.atomic.AtomicInteger;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.client.DirectoryClient;
import io.hayloft.client.Futures;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.serverkit.io.Disk;
import io.hayloft.serverkit.io.SimulatedDisk;
import io.hayloft.format.wire.Wire;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.errors.StoreErrors;
import io.hayloft.store.volume.AppliedDeletes;
import io.hayloft.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stores apply the directory's per-volume delete logs: a replica that was down while a photo
 * was deleted never serves it when it comes back (503 VOLUME_SYNCING until its first sync, then
 * 404), across a clean restart, a {@code kill -9} (the applied sequence kept in {@code N.dseq}) and
 * a power cut during the apply.
 */
class DeleteLogSyncTest {
    private static final long[] ALTS = {0, 150, 0xFFFF_FFFFL};

    @TempDir
    Path dir;

    private EmbeddedCluster cluster;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build(); // generous: a loaded 2-core CI machine
    private final Map<Long, String> cookies = new ConcurrentHashMap<>();

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private record Reply(int status, String body) {
    }

    private Reply send(int store, String method, String path, byte[] body) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://" + cluster.storeAddress(store) + path))
                .timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body))
                .build();
        HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
        return new Reply(r.statusCode(), r.body());
    }

    private DirectoryClient directory() {
        return new DirectoryClient(HttpTransport.builder().build(), List.of(cluster.directoryAddress()), null);
    }

    private int volume() throws Exception {
        VolumeInfo v = cluster.directory().directory().createVolumes(1).get(0);
        assertThat(v.replicas()).hasSize(3);
        // The stores sync from this log: if the directory does not serve it, the test fails here
        // (it never skips, so it cannot pass having tested nothing).
        HttpResponse<String> log = http.send(HttpRequest.newBuilder(URI.create("http://" + cluster.directoryAddress()
                + "/v1/volumes/" + v.id() + "/deletes?after=0")).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(log.statusCode()).as("the directory's delete log of volume %d: %s", v.id(), log.body()).isEqualTo(200);
        return v.id();
    }

    /** Writes photo {@code key} (three alternate keys) on every replica. */
    private void write(int volume, long key) throws Exception {
        String cookie = Long.toHexString(key * 0x9E3779B97F4A7C15L | 1);
        cookies.put(key, cookie);
        for (int s = 0; s < 3; s++) {
            for (long alt : ALTS) {
                assertThat(send(s, "PUT", path(volume, key, alt), new byte[(int) (alt % 100) + 1]).status()).isEqualTo(201);
            }
        }
    }

    private String path(int volume, long key, long alt) {
        return "/" + volume + "/" + Long.toUnsignedString(key) + "/" + alt + "?cookie=" + cookies.get(key);
    }

    private String keyPath(int volume, long key) {
        return "/" + volume + "/" + Long.toUnsignedString(key) + "?cookie=" + cookies.get(key);
    }

    /** As a client deletes: the log entry first, then the needles on the replicas that are up. */
    private long delete(int volume, long key, int... up) throws Exception {
        Wire.DeleteLog log = Futures.await(directory().logDeletes(volume,
                List.of(new Wire.DeleteEntry(0, key, cookies.get(key), ALTS.length))));
        for (int s : up) {
            // 404 when the replica's own sync (a heartbeat every 200 ms) applied the log entry first
            assertThat(send(s, "DELETE", keyPath(volume, key), null).status()).isIn(200, 404);
            assertGone(s, volume, key);
        }
        return log.head();
    }

    private void assertGone(int store, int volume, long key) throws Exception {
        for (long alt : ALTS) {
            assertThat(send(store, "GET", path(volume, key, alt), null).status()).as("alt %d of %s", alt, key).isEqualTo(404);
        }
        assertThat(send(store, "GET", keyPath(volume, key), null).status()).isEqualTo(404);
    }

    private void assertThere(int store, int volume, long key) throws Exception {
        for (long alt : ALTS) {
            assertThat(send(store, "GET", path(volume, key, alt), null).status()).as("alt %d of %s", alt, key).isEqualTo(200);
        }
    }

    private long applied(int store, int volume) throws Exception {
        return AppliedDeletes.read(cluster.disk(store), cluster.storeDir(store), volume);
    }

    @Test
    void aReplicaThatWasDownNeverServesAPhotoDeletedMeanwhile() throws Exception {
        cluster = EmbeddedCluster.start(ClusterOptions.of(dir.resolve("c")).withTiming(200, 60_000, 3));
        int vol = volume();
        long gone = Long.MAX_VALUE; // photo keys are what the directory's allocator gives: 0..2^63-1
        long kept = 1L << 62;
        long later = 150;
        long survivor = 0;
        for (long k : new long[] {gone, kept, later, survivor}) {
            write(vol, k);
        }

        // Down while the photo is deleted; back while the directory is unreachable: it serves none of the volume.
        cluster.stopStore(0);
        long head = delete(vol, gone, 1, 2);
        cluster.stopDirectory();
        cluster.startStore(0);
        Reply syncing = send(0, "GET", path(vol, gone, 0), null);
        assertThat(syncing.status()).isEqualTo(503);
        assertThat(syncing.body()).contains("VOLUME_SYNCING").contains(String.valueOf(StoreErrors.VOLUME_SYNCING.code()));
        assertThat(send(0, "GET", keyPath(vol, gone), null).status()).isEqualTo(503);
        assertThat(send(0, "HEAD", path(vol, kept, 0), null).status()).isEqualTo(503);
        assertThat(send(0, "PUT", "/" + vol + "/77/0?cookie=1", new byte[3]).status()).as("writes are fine").isEqualTo(201);
        cluster.startDirectory();
        cluster.heartbeat();
        assertGone(0, vol, gone);
        assertThere(0, vol, kept);
        assertThat(applied(0, vol)).isEqualTo(head);

        // Again, the directory up, a reader hammering the replica through its restart: never a 200.
        cluster.stopStore(0);
        head = delete(vol, kept, 1, 2);
        AtomicBoolean stop = new AtomicBoolean();
        List<Integer> seen = Collections.synchronizedList(new ArrayList<>());
        Thread reader = new Thread(() -> {
            while (!stop.get()) {
                try {
                    seen.add(send(0, "GET", path(vol, kept, 150), null).status());
                } catch (Exception e) {
                    // not listening yet
                }
            }
        });
        reader.start();
        try {
            cluster.startStore(0);
            Await.until("the reader sees the restarted store", () -> seen.contains(404));
        } finally {
            stop.set(true);
            reader.join();
        }
        assertThat(seen).doesNotContain(200).isSubsetOf(404, 503);
        assertGone(0, vol, kept);
        assertThat(applied(0, vol)).isEqualTo(head);

        // kill -9 right after the apply, then down while another photo is deleted: the applied
        // sequence comes back from N.dseq and the sync fetches only what follows it.
        cluster.crashStore(0);
        assertThat(applied(0, vol)).isEqualTo(head);
        head = delete(vol, later, 1, 2);
        cluster.startStore(0);
        assertGone(0, vol, later);
        assertGone(0, vol, kept);
        assertGone(0, vol, gone);
        assertThere(0, vol, survivor);
        assertThat(cluster.store(0).store().appliedDeletes(vol)).isEqualTo(head);
        assertThat(applied(0, vol)).isEqualTo(head);
        for (int s = 1; s < 3; s++) {
            assertGone(s, vol, gone);
            assertThere(s, vol, survivor);
        }
    }

    @Test
    void aPowerCutDuringTheApplyNeverLeavesTheAppliedSequenceAheadOfTheDeletes() throws Exception {
        for (int cutAt = 1; cutAt <= 4; cutAt++) {
            SimulatedDisk disk = new SimulatedDisk(cutAt);
            cluster = EmbeddedCluster.start(ClusterOptions.of(dir.resolve("p" + cutAt)).withTiming(200, 60_000, 3),
                    i -> i == 0 ? disk : Disk.REAL);
            int vol = volume();
            long[] keys = {Long.MAX_VALUE - 1, 3, 1L << 40};
            for (long k : keys) {
                write(vol, k);
            }
            cluster.stopStore(0);
            long head = 0;
            for (int i = 0; i < 2; i++) {
                head = delete(vol, keys[i], 1, 2);
            }
            // The sync at restart forces the deleted needles, the N.dseq.tmp, then the directory: cut at one of them.
            int at = cutAt;
            AtomicInteger forces = new AtomicInteger();
            AtomicBoolean armed = new AtomicBoolean(true);
            disk.beforeForce(p -> {
                if (armed.get() && forces.incrementAndGet() == at) {
                    armed.set(false);
                    disk.powerCut();
                }
            });
            try {
                cluster.startStore(0);
            } catch (RuntimeException | IOException e) {
                assertThat(disk.powerCuts()).as("only the cut may fail the start: %s", e).isEqualTo(1); // cut while opening
            }
            disk.beforeForce(null);
            if (armed.get()) {
                disk.powerCut(); // the apply needed fewer forces than that: cut after it
            }
            long afterCut = applied(0, vol);
            cluster.crashStore(0);
            assertThat(afterCut).isIn(0L, head);
            cluster.stopDirectory();
            cluster.startStore(0); // no directory: nothing applied since, so N.dseq is what the cut left
            long recorded = cluster.store(0).store().appliedDeletes(vol);
            assertThat(recorded).as("cut at force %d", cutAt).isIn(0L, head);
            if (recorded == head) {
                cluster.store(0).store().markSynced(vol); // read what is on the disk
                for (int i = 0; i < 2; i++) {
                    assertGone(0, vol, keys[i]);
                }
            }
            cluster.startDirectory();
            cluster.heartbeat();
            for (int i = 0; i < 2; i++) {
                assertGone(0, vol, keys[i]);
            }
            assertThere(0, vol, keys[2]);
            assertThat(applied(0, vol)).isEqualTo(head);
            cluster.close();
            cluster = null;
        }
    }
}
