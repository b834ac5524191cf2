package io.hayloft.cli.client;

import io.hayloft.client.HayloftException;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.format.directory.VolumeState;
import java.util.concurrent.CopyOnWriteArrayList;
import org.assertj.core.api.ThrowableAssert;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.hayloft.cli.cluster.ClientOnClusterTest;
import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PhotoNotFoundException;
import io.hayloft.client.PhotoStat;
import io.hayloft.client.PutResult;
import io.hayloft.client.RemoteException;
import io.hayloft.client.Upload;
import io.hayloft.client.store.StoreException;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.testkit.Await;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The client's hot path against a real directory and real stores ({@link EmbeddedCluster}): reads
 * from the cached volume map with the directory stopped, the directory calls a get and a put cost
 * (counted on the directory's {@code /metrics}), concurrent writers filling small volumes without a
 * failed put, deletes through the delete log while a replica is down, and wrong cookies answered
 * exactly as missing photos by get, stat and delete.
 */
class HotPathClientTest extends ClientOnClusterTest {
    private static final Pattern COUNT = Pattern.compile(
            "^hayloft_directory_requests_seconds_count\\{([^}]*)}\\s+(\\S+)$", Pattern.MULTILINE);
    private static final Pattern OP = Pattern.compile("op=\"([^\"]*)\"");

    private final Random random = new Random(14);

    private ClusterOptions options() {
        return ClusterOptions.of(dir).withTiming(100, 60_000, 2).withFsync(false);
    }

    private byte[] bytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    /** The directory's request counts by op (every status), heartbeats left out: what clients cost it. */
    private Map<String, Long> directoryCalls() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        String text = http.send(HttpRequest.newBuilder(URI.create("http://" + cluster.directoryAddress() + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        Map<String, Long> out = new TreeMap<>();
        Matcher m = COUNT.matcher(text);
        while (m.find()) {
            Matcher op = OP.matcher(m.group(1));
            String name = op.find() ? op.group(1) : "?";
            if (!name.equals("heartbeat") && !name.equals("metrics")) {
                out.merge(name, (long) Double.parseDouble(m.group(2)), Long::sum);
            }
        }
        return out;
    }

    private static long total(Map<String, Long> calls) {
        return calls.values().stream().mapToLong(Long::longValue).sum();
    }

    private static Map<String, Long> minus(Map<String, Long> after, Map<String, Long> before) {
        Map<String, Long> out = new TreeMap<>();
        after.forEach((k, v) -> {
            long d = v - before.getOrDefault(k, 0L);
            if (d != 0) {
                out.put(k, d);
            }
        });
        return out;
    }

    @Test
    void getsOverAWarmMapAndPutsOnLeasesCostAlmostNoDirectoryCalls() throws Exception {
        start(options());
        byte[] data = bytes(1000);
        PutResult first = client.put(data);
        assertThat(client.get(first.id())).isEqualTo(data); // the map is warm

        Map<String, Long> before = directoryCalls();
        for (int i = 0; i < 1000; i++) {
            assertThat(client.get(first.id())).hasSize(1000);
        }
        Map<String, Long> gets = minus(directoryCalls(), before);
        System.out.println("directory calls for 1,000 gets over a warm map: " + total(gets) + " " + gets);
        assertThat(total(gets)).as("directory calls of 1,000 gets: %s", gets).isLessThan(10);
        assertThat(gets).doesNotContainKeys("lookup", "lease");

        before = directoryCalls();
        ExecutorService writers = Executors.newFixedThreadPool(4);
        Set<PhotoId> ids = ConcurrentHashMap.newKeySet();
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                fs.add(writers.submit(() -> {
                    for (int i = 0; i < 250; i++) {
                        ids.add(client.put(data).id());
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        } finally {
            writers.shutdownNow();
        }
        Map<String, Long> puts = minus(directoryCalls(), before);
        System.out.println("directory calls for 1,000 single puts: " + total(puts) + " " + puts);
        assertThat(ids).hasSize(1000);
        assertThat(total(puts)).as("directory calls of 1,000 puts: %s", puts).isLessThan(20);
        assertThat(puts).doesNotContainKeys("assign", "commit", "lookup");
    }

    @Test
    void aBlockingGetDoesItsIoOnTheCallingThread() throws Exception {
        start(options());
        List<String> gets = new CopyOnWriteArrayList<>();
        String directory = cluster.directoryAddress();
        try (HayloftClient c = HayloftClient.builder().directory(cluster.directoryAddress())
                .requestTimeout(Duration.ofSeconds(5)).listener(new HttpTransport.Listener() {
                    @Override
                    public void onRequest(String target, String method, int status, RemoteException failure,
                                          long nanos) {
                        if (method.equals("GET") && status == 200 && !target.contains(directory)) { // store reads only
                            gets.add(Thread.currentThread().getName());
                        }
                    }
                }).build()) {
            byte[] data = bytes(1500);
            PhotoId id = c.put(data).id();
            assertThat(c.get(id)).isEqualTo(data); // the map is cached from here on
            gets.clear();
            String me = Thread.currentThread().getName();
            for (int i = 0; i < 20; i++) {
                assertThat(c.get(id)).isEqualTo(data);
            }
            assertThat(gets).hasSizeGreaterThanOrEqualTo(20).allMatch(me::equals);
            // the asynchronous API still never runs on the caller's thread
            gets.clear();
            assertThat(c.getAsync(id).get()).isEqualTo(data);
            assertThat(gets).isNotEmpty().noneMatch(me::equals);
        }
    }

    @Test
    void aGetSucceedsWithTheDirectoryStoppedOnceTheMapIsCached() throws Exception {
        start(options());
        Map<PhotoId, byte[]> model = new ConcurrentHashMap<>();
        for (int i = 0; i < 8; i++) { // 8 puts: every lease slot holds a lease
            byte[] b = bytes(500 + i);
            model.put(client.put(b).id(), b);
        }
        model.forEach((id, b) -> assertThat(client.get(id)).isEqualTo(b));

        cluster.stopDirectory();
        model.forEach((id, b) -> assertThat(client.get(id)).isEqualTo(b));
        assertThat(client.stat(model.keySet().iterator().next()).replicas()).hasSize(3);
        // Writes on the leases already held need no directory either.
        byte[] more = bytes(777);
        PhotoId late = client.put(more).id();
        assertThat(client.get(late)).isEqualTo(more);
        // A volume the cached map lacks (created since, for a photo just put) is not a missing photo while the
        // directory cannot say (found by the concurrent chaos checker: a delete answered "no such photo").
        PhotoId unmapped = new PhotoId(late.volume() + 1000, late.key(), late.alt(), late.cookie());
        for (ThrowableAssert.ThrowingCallable call : List.<ThrowableAssert.ThrowingCallable>of(
                () -> client.get(unmapped), () -> client.delete(unmapped), () -> client.stat(unmapped))) {
            assertThat(catchThrowable(call)).isInstanceOf(HayloftException.class)
                    .isNotInstanceOf(PhotoNotFoundException.class).hasMessageContaining("directory cannot be reached");
        }
        // A client that never saw the map cannot read.
        try (HayloftClient fresh = cluster.newClient()) {
            assertThat(catchThrowable(() -> fresh.get(late))).isInstanceOf(RemoteException.class)
                    .isNotInstanceOf(PhotoNotFoundException.class);
        }
    }

    @Test
    void concurrentWritersFillingSmallVolumesNeverFailAPutAndEveryPhotoReadsBack() throws Exception {
        // The failure: 8 writers, 8 MiB volumes, batches of 3 photos of ~100 KiB until several volumes fill.
        start(ClusterOptions.of(dir).withVolumeLimit(8L << 20).withTiming(100, 60_000, 2).withFsync(true));
        Map<PhotoId, byte[]> acknowledged = new ConcurrentHashMap<>();
        ExecutorService writers = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int w = 0; w < 8; w++) {
                Random r = new Random(w);
                fs.add(writers.submit(() -> {
                    for (int i = 0; i < 24; i++) {
                        List<byte[]> batch = new ArrayList<>();
                        for (int p = 0; p < 3; p++) {
                            byte[] b = new byte[100 * 1024 + r.nextInt(1024)];
                            r.nextBytes(b);
                            batch.add(b);
                        }
                        List<PutResult> stored = client.putAll(batch); // must not fail
                        for (int p = 0; p < 3; p++) {
                            assertThat(acknowledged.put(stored.get(p).id(), batch.get(p))).isNull();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        } finally {
            writers.shutdownNow();
        }
        assertThat(acknowledged).hasSize(8 * 24 * 3);
        Set<Integer> volumes = new HashSet<>();
        acknowledged.keySet().forEach(id -> volumes.add(id.volume()));
        long readOnly = Futures.await(client.directory().volumes()).stream()
                .filter(v -> !v.state().writable()).count();
        System.out.println("8 writers, 8 MiB volumes: " + acknowledged.size() + " photos on " + volumes.size()
                + " volumes, " + readOnly + " no longer writable");
        assertThat(volumes.size()).as("volumes used").isGreaterThanOrEqualTo(6);
        try (HayloftClient reader = cluster.newClient()) {
            acknowledged.forEach((id, b) -> assertThat(reader.get(id)).as("photo %s", id).isEqualTo(b));
        }
    }

    @Test
    void aDeleteWhileAReplicaIsDownNeverReadsBackFromIt() throws Exception {
        start(options()); // the cluster's heartbeats make its stores apply their volumes' delete logs
        byte[] data = bytes(3000);
        List<PutResult> stored = client.put(Upload.empty().alt(0, data).alt(-1, bytes(10)));
        PhotoId id = stored.get(0).id();
        PhotoStat st = client.stat(id);
        String victim = st.replicas().get(2);
        int index = cluster.storeIndex(victim);
        cluster.stopStore(index);

        client.delete(id); // the down replica is covered by the volume's delete log
        assertThat(catchThrowable(() -> client.get(id))).isInstanceOf(PhotoNotFoundException.class);

        cluster.startStore(index);
        // Read the store that missed the delete directly: 503 VOLUME_SYNCING until it applied the log, then 404; never 200.
        for (PhotoId needle : List.of(id, id.withAlt(-1))) {
            Await.untilTrue("store " + victim + " answers 404 for " + needle, Duration.ofSeconds(20), () -> {
                Throwable t = catchThrowable(() -> Futures.await(client.stores().read(victim, needle)));
                assertThat(t).as("store %s served deleted needle %s", victim, needle).isInstanceOf(StoreException.class);
                StoreException e = (StoreException) t;
                assertThat(e.httpStatus()).as(e.getMessage()).isIn(404, 503);
                return e.httpStatus() == 404;
            });
        }
        assertThat(catchThrowable(() -> client.get(id))).isInstanceOf(PhotoNotFoundException.class);
        assertThat(catchThrowable(() -> client.delete(id))).isInstanceOf(PhotoNotFoundException.class);
    }

    @Test
    void aWrongCookieIsAMissAsAMissingPhotoIsForGetStatAndDelete() throws Exception {
        start(options());
        byte[] data = bytes(1234);
        PhotoId id = client.put(data).id();
        PhotoId wrong = new PhotoId(id.volume(), id.key(), id.alt(), id.cookie() ^ 0x8000_0000_0000_0001L);
        PhotoId missing = new PhotoId(id.volume(), Long.MAX_VALUE, id.alt(), id.cookie());
        PhotoId missingVolume = new PhotoId(id.volume() + 1000, id.key(), id.alt(), id.cookie());
        for (PhotoId p : List.of(wrong, missing, missingVolume)) {
            String get = notFound(() -> client.get(p), p);
            String stat = notFound(() -> client.stat(p), p);
            String delete = notFound(() -> client.delete(p), p);
            assertThat(get).isEqualTo(notFound(() -> client.get(missing), missing));
            assertThat(stat).isEqualTo(notFound(() -> client.stat(missing), missing));
            assertThat(delete).isEqualTo(notFound(() -> client.delete(missing), missing));
        }
        assertThat(client.get(id)).isEqualTo(data); // the refused delete did nothing
        PhotoStat st = client.stat(id);
        assertThat(st.alts()).containsExactly(new PhotoStat.Alt(0, data.length));
        assertThat(st.volumeState()).isEqualTo(VolumeState.WRITABLE);
        assertThat(st.places()).hasSize(3).allMatch(p -> p.startsWith("http://127.0.0.1:"));
    }

    /** The message of the PhotoNotFoundException {@code call} throws, with the id masked. */
    private static String notFound(Runnable call, PhotoId id) {
        Throwable t = catchThrowable(call::run);
        assertThat(t).as("for %s", id).isInstanceOf(PhotoNotFoundException.class);
        assertThat(t.getMessage()).doesNotContainIgnoringCase("cookie");
        return t.getMessage().replace(id.toString(), "<id>");
    }
}
