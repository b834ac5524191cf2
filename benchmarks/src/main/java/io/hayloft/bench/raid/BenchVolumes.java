package io.hayloft.bench.raid;

import io.hayloft.format.directory.StoreState;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.Wire;
import io.hayloft.directory.Directory;
import io.hayloft.raid.Cluster;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Fills one volume of an embedded cluster fast, for the raid benchmarks: keys are leased from the
 * directory in process (allocator leases, no per-photo record), needles go to every replica in batch requests of at most 32 MiB, and the
 * volume is marked read-only. Not thread-safe; one filler per benchmark thread.
 */
final class BenchVolumes {

    /** A needle written by the filler. */
    record Needle(long key, int volume, int size) {
    }

    private final EmbeddedCluster cluster;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final Random random = new Random(7);

    BenchVolumes(EmbeddedCluster cluster) {
        this.cluster = cluster;
    }

    /** Writes about {@code bytes} of needles of {@code needleBytes} into one new volume; returns its needles. */
    List<Needle> fill(long bytes, int needleBytes) throws Exception {
        Directory d = cluster.directory().directory();
        byte[] data = new byte[needleBytes];
        random.nextBytes(data);
        int perBatch = Math.max(1, Math.min(1000, (32 << 20) / (needleBytes + 64)));
        List<Needle> out = new ArrayList<>();
        int volume = -1;
        long written = 0;
        while (written < bytes) {
            int count = (int) Math.max(1, Math.min(perBatch, (bytes - written) / needleBytes));
            Wire.Lease a = d.hotPath().lease(new Wire.LeaseRequest(count, List.of()));
            if (volume < 0) {
                volume = a.volume();
            } else if (a.volume() != volume) {
                continue; // another writable volume: leave those keys unwritten
            }
            ByteArrayOutputStream buf = new ByteArrayOutputStream(count * (needleBytes + 24));
            DataOutputStream batch = new DataOutputStream(buf);
            for (long key = a.first(); key < a.first() + a.count(); key++) {
                random.nextBytes(data); // incompressible, distinct needles
                batch.writeLong(key);
                batch.writeLong(random.nextLong()); // the writer's cookie: the directory keeps none
                batch.writeInt(0);
                batch.writeInt(needleBytes);
                batch.write(data);
                out.add(new Needle(key, a.volume(), needleBytes));
            }
            byte[] body = buf.toByteArray();
            for (String replica : a.replicas()) {
                HttpRequest r = HttpRequest.newBuilder(URI.create("http://" + replica + "/" + a.volume() + "/batch"))
                        .timeout(Duration.ofMinutes(2)).POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
                HttpResponse<String> resp = http.send(r, HttpResponse.BodyHandlers.ofString());
                if (resp.statusCode() != 201) {
                    throw new IOException("batch to " + replica + " answered " + resp.statusCode() + ": " + resp.body());
                }
            }
            written += (long) count * needleBytes;
        }
        d.markReadOnly(volume, "bench");
        return out;
    }

    /** Deletes every block of a volume's stripes and its index (frees the disk between codecs). */
    static void dropBlocks(Cluster raid, StripeMap m) throws IOException {
        Map<String, Cluster.StoreRef> stores = raid.stores();
        for (StripeMap.Block b : m.allBlocks()) {
            Cluster.StoreRef s = stores.get(b.store());
            if (s != null && s.up()) {
                raid.deleteBlock(s.address(), b.name());
            }
        }
        for (String holder : m.index().holders()) {
            Cluster.StoreRef s = stores.get(holder);
            if (s != null && s.up()) {
                raid.deleteBlock(s.address(), m.index().name());
            }
        }
    }

    /** Waits (bounded) until the directory sees store {@code i} UP again. */
    static void awaitUp(EmbeddedCluster cluster, int i) throws Exception {
        String id = EmbeddedCluster.storeId(i);
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (cluster.directory().directory().stores().stream()
                .noneMatch(s -> s.id().equals(id) && s.state() == StoreState.UP)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("store " + id + " not UP within 60 s");
            }
            cluster.heartbeat();
            Thread.sleep(20); // a benchmark polling the directory, not a test
        }
    }

    /** Stops store {@code i} and waits (bounded) until the directory has marked it FAILED. */
    static void kill(EmbeddedCluster cluster, int i) throws Exception {
        String id = EmbeddedCluster.storeId(i);
        cluster.stopStore(i);
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (cluster.directory().directory().stores().stream()
                .noneMatch(s -> s.id().equals(id) && s.state() == StoreState.FAILED)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("store " + id + " not marked FAILED within 60 s");
            }
            Thread.sleep(20); // a benchmark polling the directory, not a test
        }
    }
}
