package io.hayloft.raid;

import io.hayloft.client.store.NeedleData;
import io.hayloft.cold.ColdReader;
import io.hayloft.format.directory.StoreState;
import io.hayloft.format.wire.BatchBody;
import java.time.Clock;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.VolumeIndex;
import io.hayloft.serverkit.io.Disk;
import io.hayloft.format.wire.Wire;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import io.hayloft.store.cluster.ClusterAuthorizer;
import io.hayloft.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A real directory and N real store servers on loopback, one rack per store, and a photo model.
 * Published in raid-node's test-jar for raid-spark's tests. Not thread-safe.
 */
public final class TestCluster implements AutoCloseable {

    /** A photo the test wrote: the source of truth reads are compared against. */
    public record Photo(long key, int volume, String cookie, byte[] data) {
    }

    final Path dir;
    public final DirectoryServer directory;
    final Map<String, StoreServer> stores = new LinkedHashMap<>();
    public final Map<Long, Photo> photos = new LinkedHashMap<>();
    /** Photos the test deleted (through the volume's delete log), by key. */
    public final Map<Long, Photo> deleted = new LinkedHashMap<>();
    final Set<String> stopped = new HashSet<>();
    /** Writes to a volume's replicas at once (daemon threads, shared by every cluster: nothing to close). */
    private static final ExecutorService WRITERS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "test-cluster-writer");
        t.setDaemon(true);
        return t;
    });

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private final Random random = new Random(42);
    private final Function<String, Disk> disks;

    public TestCluster(Path dir, int n) throws Exception {
        this(dir, n, d -> { });
    }

    /** As {@link #TestCluster(Path, int)}, with {@code tune} adjusting the directory's config before it starts. */
    public TestCluster(Path dir, int n, Consumer<DirectoryConfig> tune) throws Exception {
        this(dir, n, tune, id -> Disk.REAL);
    }

    /**
     * As {@link #TestCluster(Path, int, java.util.function.Consumer)}, each store's files on the disk
     * {@code disks} gives for its id (a wrapper of {@link Disk#REAL} that holds some writes back, say).
     */
    public TestCluster(Path dir, int n, Consumer<DirectoryConfig> tune,
                       Function<String, Disk> disks) throws Exception {
        this.dir = dir;
        this.disks = disks;
        DirectoryConfig d = new DirectoryConfig();
        d.dataDir = dir.resolve("directory").toString();
        d.port = 0;
        d.init = true;
        d.probeIntervalMillis = 200;
        d.probeTimeoutMillis = 2000;
        d.failureThreshold = 2;
        d.minWritableVolumes = 1;
        d.volumeLimitBytes = 1L << 30;
        tune.accept(d);
        directory = DirectoryServer.start(d);
        for (int i = 0; i < n; i++) {
            startStore("s" + (i < 10 ? "0" : "") + i);
        }
        Await.until(n + " stores registered", () -> directory.directory().stores().size() == n);
    }

    StoreServer startStore(String id) throws Exception {
        return startStore(id, 0, dir.resolve(id));
    }

    /**
     * Starts an empty store in place of the stopped store {@code id}, as an operator replacing a dead
     * disk would: same id, rack and port, a fresh data directory; then restores it in the directory (UP).
     */
    StoreServer replaceStore(String id) throws Exception {
        if (!stopped.contains(id)) {
            throw new IllegalStateException("store " + id + " is running; stop it first");
        }
        int port = stores.get(id).port();
        StoreServer s = startStore(id, port, dir.resolve(id + "-replacement-" + System.nanoTime()));
        stopped.remove(id);
        directory.directory().restore(id); // the operator brings the replacement in (the directory does not auto-restore)
        return s;
    }

    /**
     * Stops store {@code id} and starts it again on the same port and data, its configuration changed by
     * {@code change} (e.g. a store of an older version, without an endpoint).
     */
    StoreServer restartStore(String id, Consumer<StoreConfig> change) throws Exception {
        StoreServer old = stores.get(id);
        int port = old.port();
        old.close();
        return startStore(id, port, dir.resolve(id), change);
    }

    private StoreServer startStore(String id, int port, Path data) throws Exception {
        return startStore(id, port, data, c -> { });
    }

    private StoreServer startStore(String id, int port, Path data, Consumer<StoreConfig> change) throws Exception {
        StoreConfig c = new StoreConfig();
        c.dataDirs = List.of(data.toString());
        c.host = "127.0.0.1";
        c.port = port;
        c.directory = directory.address();
        c.storeId = id;
        c.rack = "rack-" + id;
        c.heartbeatMillis = 1000;
        c.idxFlushMillis = 50;
        change.accept(c);
        StoreServer s = StoreServer.start(c, new ClusterAuthorizer(c.clusterSecret, c.adminToken, Clock.systemUTC()),
                disks.apply(id));
        stores.put(id, s);
        return s;
    }

    /**
     * Stops store {@code id} and waits until the directory's own health checker marks it FAILED. Unlike
     * {@link #stopStores} it forces no probe round: it is called from inside a repair's checkpoint, mid-stream,
     * where a forced round left the cut stream to a 20 s read timeout (StreamRepairTest, 23 s instead of 3).
     */
    public void stopStore(String id) throws Exception {
        stores.get(id).close();
        stopped.add(id);
        Await.until("store " + id + " FAILED", () -> directory.directory().stores().stream()
                .anyMatch(s -> s.id().equals(id) && s.state() == StoreState.FAILED));
    }

    /**
     * Stops the stores {@code ids}, then waits until the directory's health checker has marked every
     * one FAILED (failureThreshold probes in a row failed). The waiting forces rounds of probes
     * ({@link io.hayloft.directory.HealthChecker#round()}) instead of sitting out the checker's period
     * between them: the same real probes and verdicts, at once.
     */
    public void stopStores(Collection<String> ids) throws Exception {
        Set<String> distinct = new LinkedHashSet<>(ids);
        for (String id : distinct) {
            stores.get(id).close();
            stopped.add(id);
        }
        Await.until("stores " + distinct + " FAILED", () -> {
            directory.healthChecker().round();
            return directory.directory().stores().stream().filter(s -> distinct.contains(s.id()))
                    .filter(s -> s.state() == StoreState.FAILED).count() == distinct.size();
        });
    }

    public RaidConfig raidConfig(String codec, long blockSize) {
        RaidConfig c = new RaidConfig();
        c.directory = directory.address();
        c.codec = codec;
        c.blockSize = blockSize;
        c.transferBytes = 16 << 10;
        c.requestTimeoutMillis = 5000;
        c.spoolDir = dir.toString();
        return c;
    }

    /**
     * The local-encode tests' raid-node: ({@code k}, {@code r}) stripes of {@code block} bytes encoded
     * at {@code encodeAt}, 4 KiB transfers, two index replicas; validated.
     */
    public RaidConfig localEncodeConfig(String codec, long block, int k, int r, String encodeAt) {
        RaidConfig c = raidConfig(codec, block);
        c.k = k;
        c.r = r;
        c.transferBytes = 4096;
        c.encodeAt = encodeAt;
        c.indexReplicas = 2;
        return c.validate();
    }

    /** Keys leased for a test: the volume, its replicas' addresses, each key with the cookie the test chose. */
    public record Leased(int volume, List<String> replicas, List<Key> photos) {
    }

    /** A leased key and its cookie (16 hex digits). */
    public record Key(long key, String cookie) {
    }

    /**
     * An allocator lease of {@code count} keys ({@code POST /v1/leases}, in process), each key given a
     * random cookie of the test's choosing: the directory keeps no per-photo state.
     */
    public Leased lease(int count) {
        Wire.Lease l = directory.directory().hotPath().lease(new Wire.LeaseRequest(count, List.of()));
        List<Key> keys = new ArrayList<>();
        for (long k = l.first(); k < l.first() + l.count(); k++) {
            keys.add(new Key(k, String.format(Locale.ROOT, "%016x", random.nextLong())));
        }
        return new Leased(l.volume(), l.replicas(), keys);
    }

    /** The address of the first replica of {@code volume} on an UP store, from the volume map. */
    public String firstReplica(int volume) {
        return directory.directory().hotPath().volumeMap().map().volumes().stream().filter(v -> v.id() == volume)
                .findFirst().orElseThrow(() -> new AssertionError("volume " + volume + " not in the volume map"))
                .replicas().get(0);
    }

    /**
     * Writes {@code count} photos of 0 to {@code maxSize} bytes into one new volume, each replica
     * receiving them in its own random order and batching (as writers that run at once leave them),
     * and marks the volume read-only. Returns the volume.
     */
    public int writeVolumeInReplicaOrders(int count, int maxSize) throws Exception {
        Leased a = lease(count);
        List<NeedleData> needles = new ArrayList<>();
        for (Key p : a.photos()) {
            byte[] data = new byte[random.nextInt(maxSize + 1)];
            random.nextBytes(data);
            needles.add(new NeedleData(p.key(), 0, Long.parseUnsignedLong(p.cookie(), 16), data));
            photos.put(p.key(), new Photo(p.key(), a.volume(), p.cookie(), data));
        }
        List<Callable<Void>> writers = new ArrayList<>();
        for (String replica : a.replicas()) {
            List<NeedleData> order = new ArrayList<>(needles);
            Collections.shuffle(order, random);
            List<byte[]> batches = new ArrayList<>();
            for (int i = 0; i < order.size(); ) {
                int n = Math.min(order.size() - i, 1 + random.nextInt(4));
                batches.add(BatchBody.encode(order.subList(i, i + n)));
                i += n;
            }
            writers.add(() -> { // each replica's batches in its order, the replicas at once
                for (byte[] batch : batches) {
                    int code = send("POST", "http://" + replica + "/" + a.volume() + "/batch", batch);
                    if (code != 201) {
                        throw new AssertionError("batch PUT to " + replica + " answered " + code);
                    }
                }
                return null;
            });
        }
        atOnce(writers);
        directory.directory().markReadOnly(a.volume(), "test");
        return a.volume();
    }

    /** Runs {@code tasks} at once and waits for all; the first failure is thrown. */
    private static void atOnce(List<Callable<Void>> tasks) throws Exception {
        for (Future<Void> f : WRITERS.invokeAll(tasks)) {
            try {
                f.get();
            } catch (ExecutionException e) {
                if (e.getCause() instanceof Exception x) {
                    throw x;
                }
                throw new AssertionError(e.getCause());
            }
        }
    }

    /** Writes {@code count} photos of random sizes into one new volume and marks it read-only. */
    public int writeVolume(int count, int maxSize) throws Exception {
        Leased a = lease(count);
        List<NeedleData> needles = new ArrayList<>();
        for (Key p : a.photos()) {
            byte[] data = new byte[1 + random.nextInt(maxSize)];
            random.nextBytes(data);
            needles.add(new NeedleData(p.key(), 0, Long.parseUnsignedLong(p.cookie(), 16), data));
            photos.put(p.key(), new Photo(p.key(), a.volume(), p.cookie(), data));
        }
        byte[] body = BatchBody.encode(needles);
        List<Callable<Void>> writers = new ArrayList<>();
        for (String replica : a.replicas()) {
            writers.add(() -> {
                int code = send("POST", "http://" + replica + "/" + a.volume() + "/batch", body);
                if (code != 201) {
                    throw new AssertionError("batch PUT to " + replica + " answered " + code);
                }
                return null;
            });
        }
        atOnce(writers); // to every replica at once, as a client writes
        directory.directory().markReadOnly(a.volume(), "test");
        return a.volume();
    }

    int send(String method, String url, byte[] body) throws Exception {
        HttpRequest r = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body))
                .build();
        return http.send(r, HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    /**
     * Every photo written reads back through {@code reader} with the bytes written, and every key
     * in {@code deleted} reads as missing.
     */
    public void assertColdReads(ColdReader reader, Collection<Long> deleted, String when) throws Exception {
        for (Photo p : photos.values()) {
            assertThat(reader.get(p.volume(), p.key(), 0)).as("photo %d %s", p.key(), when).isEqualTo(p.data());
        }
        for (long k : deleted) {
            assertThat(reader.get(volumeOf(k), k, 0)).as("deleted photo %d %s", k, when).isNull();
        }
    }

    /**
     * Reads every photo the test wrote through {@code reader} once five of a stripe's 14 blocks are
     * unavailable: each reads back exact, or fails as a lost stripe ("5 of 14 blocks unavailable",
     * "more than the 4"). Returns how many failed.
     */
    public int readEveryPhotoOrStripeLost(ColdReader reader) throws Exception {
        int failed = 0;
        for (Photo p : photos.values()) {
            try {
                assertThat(reader.get(p.volume(), p.key(), 0)).isEqualTo(p.data());
            } catch (ColdReader.StripeLostException e) {
                assertThat(e).hasMessageContaining("5 of 14 blocks unavailable").hasMessageContaining("more than the 4");
                failed++;
            }
        }
        return failed;
    }

    /** The volume of a photo the test wrote, deleted or not. */
    public int volumeOf(long key) {
        Photo p = photos.containsKey(key) ? photos.get(key) : deleted.get(key);
        if (p == null) {
            throw new IllegalArgumentException("no photo " + key + " was written");
        }
        return p.volume();
    }

    /**
     * Logs {@code n} live photos of {@code volume} in its delete log with a WRONG cookie (the real one
     * with its last bit flipped), as anyone who can reach the directory may: they must stay live.
     */
    public List<Long> logWrongCookieDeletes(int volume, int n) throws Exception {
        List<Long> out = new ArrayList<>();
        for (Photo p : photos.values()) {
            if (p.volume() != volume || out.size() == n) {
                continue;
            }
            logWrongCookieDelete(p);
            out.add(p.key());
        }
        return out;
    }

    /** Logs photo {@code p} in its volume's delete log with a WRONG cookie (its last bit flipped); it stays live. */
    public void logWrongCookieDelete(Photo p) throws Exception {
        postDelete(p, String.format(Locale.ROOT, "%016x", Long.parseUnsignedLong(p.cookie(), 16) ^ 1));
    }

    /**
     * Deletes photo {@code p} as a client does: one entry {key, cookie} in its volume's delete log
     * ({@code POST /v1/volumes/{id}/deletes}); it moves from {@link #photos} to {@link #deleted}.
     */
    public void logDelete(Photo p) throws Exception {
        postDelete(p, p.cookie());
        photos.remove(p.key());
        deleted.put(p.key(), p);
    }

    private void postDelete(Photo p, String cookie) throws Exception {
        String body = "{\"deletes\":[{\"seq\":0,\"key\":" + Long.toUnsignedString(p.key()) + ",\"cookie\":\"" + cookie
                + "\",\"needles\":1}]}";
        HttpRequest r = HttpRequest.newBuilder(URI.create("http://" + directory.address() + "/v1/volumes/" + p.volume() + "/deletes"))
                .timeout(Duration.ofSeconds(10)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        HttpResponse<String> answer = http.send(r, HttpResponse.BodyHandlers.ofString());
        if (answer.statusCode() != 200) {
            throw new AssertionError("POST /v1/volumes/" + p.volume() + "/deletes answered " + answer.statusCode() + ": " + answer.body());
        }
    }

    /** Deletes photos of {@code volume} (in its delete log, as a client would) until {@code share} of its needle bytes are gone. */
    public List<Long> deletePhotos(int volume, double share) throws Exception {
        long total = 0;
        for (Photo p : photos.values()) {
            if (p.volume() == volume) {
                total += VolumeIndex.needleLength(p.data().length);
            }
        }
        long gone = 0;
        List<Long> out = new ArrayList<>();
        for (Photo p : new ArrayList<>(photos.values())) {
            if (p.volume() == volume && gone < share * total) {
                logDelete(p);
                gone += VolumeIndex.needleLength(p.data().length);
                out.add(p.key());
            }
        }
        return out;
    }

    /** The running stores hold exactly the blocks the directory's stripe maps name: no orphan, none missing. */
    public void assertOnlyMappedBlocks(Cluster raid, String when) throws Exception {
        Set<String> expected = new HashSet<>();
        for (StripeMap m : raid.stripeMaps()) {
            m.allBlocks().forEach(b -> expected.add(b.store() + "/" + b.name()));
        }
        assertThat(allBlocks()).as("blocks %s", when).containsExactlyInAnyOrderElementsOf(expected);
    }

    /** Every block on every running store, as store/name. */
    public List<String> allBlocks() throws Exception {
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, StoreServer> e : stores.entrySet()) {
            if (!stopped.contains(e.getKey())) {
                for (var b : e.getValue().store().blocks().list()) {
                    out.add(e.getKey() + "/" + b.name());
                }
            }
        }
        return out;
    }

    @Override
    public void close() throws Exception {
        for (Map.Entry<String, StoreServer> e : stores.entrySet()) {
            if (!stopped.contains(e.getKey())) {
                e.getValue().close();
            }
        }
        directory.close();
    }
}
