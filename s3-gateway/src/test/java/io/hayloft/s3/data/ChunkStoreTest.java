package io.hayloft.s3.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.hayloft.client.DirectoryException;
import io.hayloft.client.DirectoryClient;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.NamespaceClient;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.client.RemoteException;
import io.hayloft.format.s3.Chunk;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.format.s3.Part;
import io.hayloft.format.s3.Pending;
import io.hayloft.format.s3.Replaced;
import io.hayloft.format.s3.Upload;
import io.hayloft.s3.GatewayCluster;
import io.hayloft.store.StoreServer;
import io.hayloft.testkit.Await;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chunk store against a real directory (its namespace) and real stores: bodies of every size
 * around the chunk size written and read back byte-exact, every range whose ends lie around chunk
 * edges, reads that fetch only the chunks they cover, an aborted body that leaves no needle and no
 * record, the sweep of orphaned WRITING records and abandoned uploads, and a commit after the sweep
 * failing PENDING_GONE. After each test no needle is left that no object names.
 */
class ChunkStoreTest {
    static final int C = 64 * 1024;
    static final String BUCKET = "data";
    @TempDir
    static Path dir;
    static GatewayCluster cluster;
    static HayloftClient client;
    static NamespaceClient namespace;
    static ChunkStore chunks;
    static final AtomicInteger storeGets = new AtomicInteger();
    static Set<String> storeAddresses;
    private final Random random = new Random(11);

    @BeforeAll
    static void start() throws Exception {
        cluster = GatewayCluster.startCluster(dir);
        storeAddresses = new TreeSet<>();
        for (StoreServer s : cluster.stores()) {
            storeAddresses.add("127.0.0.1:" + s.port());
        }
        client = HayloftClient.builder().directory(cluster.directoryAddress()).listener(new HttpTransport.Listener() {
            @Override
            public void onRequest(String target, String method, int status, RemoteException failure, long nanos) {
                if (method.equals("GET") && storeAddresses.stream().anyMatch(target::contains)) {
                    storeGets.incrementAndGet();
                }
            }
        }).build();
        namespace = new NamespaceClient(new DirectoryClient(HttpTransport.builder().build(), List.of(cluster.directoryAddress()), null));
        chunks = new ChunkStore(client, namespace, C);
        Futures.await(namespace.createBucket(BUCKET, "us-east-1"));
    }

    @AfterAll
    static void stop() {
        if (chunks != null) {
            chunks.close();
        }
        if (client != null) {
            client.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Every live needle is named by an object; no pending record is left. */
    @AfterEach
    void nothingLeftBehind() throws Exception {
        Await.until("no pending record", () -> pendings().isEmpty());
        Set<String> named = new TreeSet<>();
        String after = null;
        while (true) {
            var page = Futures.await(namespace.list(BUCKET, "", null, after, 1000));
            for (ObjectRecord o : page.objects()) {
                o.chunks().forEach(c -> named.add(StoreNeedles.name(c)));
            }
            if (!page.truncated()) {
                break;
            }
            after = page.next();
        }
        Await.until("only named needles live", () -> StoreNeedles.live(cluster.stores()).keySet().equals(named));
    }

    private static List<Pending> pendings() {
        return Futures.await(namespace.pendings(null, 1000));
    }

    private byte[] bytes(int n) {
        byte[] b = new byte[n];
        random.nextBytes(b);
        return b;
    }

    /** Writes {@code data} in uneven pieces (7,001 bytes, then one byte, then the rest...). */
    private static void feed(ChunkStore.Writer w, byte[] data, int from, int to) {
        int[] steps = {7001, 1, C, 3};
        int i = from;
        for (int s = 0; i < to; s++) {
            int n = Math.min(steps[s % steps.length], to - i);
            w.write(data, i, n);
            i += n;
        }
    }

    private static ObjectRecord commit(String key, byte[] data, ChunkStore.Writer w, List<Chunk> written) {
        ObjectRecord o = new ObjectRecord(BUCKET, key, data.length, "etag", written, List.of(), Map.of(), null,
                "application/octet-stream", Map.of(), Map.of(), 0);
        Replaced r = Futures.await(namespace.putObject(o, w.pending(), NamespaceClient.Condition.NONE));
        chunks.free(r.doomed());
        return r.object();
    }

    private static byte[] read(List<Chunk> cs, long offset, long length) throws IOException {
        try (InputStream in = chunks.read(cs, offset, length)) {
            return in.readAllBytes();
        }
    }

    @Test
    void bodiesOfEverySizeAroundTheChunkSizeReadBackByteExact() throws Exception {
        for (int size : new int[] {0, 1, C - 1, C, C + 1, 3 * C + 5}) {
            byte[] data = bytes(size);
            ChunkStore.Writer w = chunks.writer();
            feed(w, data, 0, size);
            assertThat(w.size()).isEqualTo(size);
            List<Chunk> written = w.finish();
            assertThat(written).as("chunks of %d bytes", size).hasSize((size + C - 1) / C);
            assertThat(written.stream().mapToLong(Chunk::size).sum()).isEqualTo(size);
            assertThat(written.stream().limit(Math.max(0, written.size() - 1))).allMatch(c -> c.size() == C);
            if (size == 0) {
                assertThat(w.pending()).as("no chunk: no pending record").isNull();
            } else {
                assertThat(pendings()).extracting(Pending::id).contains(w.pending());
                assertThat(pendings().stream().filter(p -> p.id().equals(w.pending())).findFirst().orElseThrow().chunks())
                        .containsExactlyElementsOf(written);
            }
            ObjectRecord o = commit("size-" + size, data, w, written);
            assertThat(read(o.chunks(), 0, size)).as("%d bytes", size).isEqualTo(data);
        }
    }

    @Test
    void everyRangeAroundChunkEdgesReadsExactlyItsBytesFromTheChunksItCovers() throws Exception {
        byte[] data = bytes(3 * C + 5);
        ChunkStore.Writer w = chunks.writer();
        feed(w, data, 0, data.length);
        List<Chunk> cs = commit("ranges", data, w, w.finish()).chunks();
        assertThat(cs).hasSize(4);
        TreeSet<Integer> edges = new TreeSet<>();
        for (int e : new int[] {0, C, 2 * C, 3 * C, data.length}) {
            for (int d = -1; d <= 1; d++) {
                if (e + d >= 0 && e + d <= data.length) {
                    edges.add(e + d);
                }
            }
        }
        int ranges = 0;
        for (int from : edges) {
            for (int to : edges.tailSet(from, true)) {
                int before = storeGets.get();
                assertThat(read(cs, from, to - from)).as("[%d, %d)", from, to).isEqualTo(Arrays.copyOfRange(data, from, to));
                int covered = from == to ? 0 : (to - 1) / C - from / C + 1;
                assertThat(storeGets.get() - before).as("chunks fetched for [%d, %d)", from, to).isEqualTo(covered);
                ranges++;
            }
        }
        assertThat(ranges).isEqualTo(edges.size() * (edges.size() + 1) / 2);
        assertThat(catchThrowable(() -> chunks.read(cs, 1, data.length))).isInstanceOf(IllegalArgumentException.class);
        assertThat(catchThrowable(() -> chunks.read(cs, -1, 1))).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aChunkThatCannotBeReadFailsTheStreamWithAnIOException() throws Exception {
        byte[] data = bytes(2 * C);
        ChunkStore.Writer w = chunks.writer();
        feed(w, data, 0, data.length);
        List<Chunk> cs = commit("broken", data, w, w.finish()).chunks();
        Chunk second = cs.get(1);
        List<Chunk> wrong = List.of(cs.get(0), new Chunk(second.volume(), second.key(), second.cookie() ^ 1, second.size()));
        try (InputStream in = chunks.read(wrong, 0, data.length)) {
            byte[] first = in.readNBytes(C);
            assertThat(first).isEqualTo(Arrays.copyOf(data, C));
            assertThat(catchThrowable(in::read)).isInstanceOf(IOException.class).hasMessageContaining(second.photo().volume() + "");
        }
    }

    @Test
    void aWriterAbortedMidwayLeavesNoNeedleAndNoRecord() throws Exception {
        Map<String, Integer> before = StoreNeedles.live(cluster.stores());
        byte[] data = bytes(2 * C + C / 2);
        ChunkStore.Writer w = chunks.writer();
        feed(w, data, 0, data.length); // two chunks written, half a chunk buffered
        String pending = w.pending();
        assertThat(pending).isNotNull();
        Pending p = pendings().stream().filter(x -> x.id().equals(pending)).findFirst().orElseThrow();
        assertThat(p.state()).isEqualTo(Pending.WRITING);
        assertThat(p.chunks()).hasSize(2);
        for (Chunk c : p.chunks()) {
            assertThat(StoreNeedles.live(cluster.stores())).containsEntry(StoreNeedles.name(c), 3);
        }
        w.abort();
        Await.until("the record dropped", () -> pendings().stream().noneMatch(x -> x.id().equals(pending)));
        Await.until("its needles deleted", () -> StoreNeedles.live(cluster.stores()).equals(before));
        assertThat(catchThrowable(() -> w.write(new byte[1], 0, 1))).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void anAbortAfterTheCommitTookTheRecordLeavesTheObjectAlone() throws Exception {
        // A commit whose answer was lost: the gateway aborts the body although the object stands.
        byte[] data = bytes(C + 9);
        try (ChunkStore own = new ChunkStore(client, namespace, C)) {
            ChunkStore.Writer w = own.writer();
            feed(w, data, 0, data.length);
            ObjectRecord o = commit("committed-then-aborted", data, w, w.finish());
            w.abort();
            own.close(); // waits for the background work
            assertThat(read(o.chunks(), 0, data.length)).isEqualTo(data);
            for (Chunk c : o.chunks()) {
                assertThat(StoreNeedles.live(cluster.stores())).containsEntry(StoreNeedles.name(c), 3);
            }
        }
    }

    @Test
    void anOverwriteFreesTheReplacedObjectsNeedles() throws Exception {
        byte[] one = bytes(C + 1);
        ChunkStore.Writer w = chunks.writer();
        feed(w, one, 0, one.length);
        List<Chunk> first = commit("overwritten", one, w, w.finish()).chunks();
        byte[] two = bytes(10);
        ChunkStore.Writer w2 = chunks.writer();
        feed(w2, two, 0, two.length);
        commit("overwritten", two, w2, w2.finish());
        for (Chunk c : first) {
            Await.until("replaced chunk deleted", () -> !StoreNeedles.live(cluster.stores()).containsKey(StoreNeedles.name(c)));
        }
    }

    @Test
    void theSweepDeletesTheNeedlesOfAnOldWritingRecordAndItsCommitThenFailsPendingGone() throws Exception {
        Map<String, Integer> before = StoreNeedles.live(cluster.stores());
        byte[] data = bytes(2 * C);
        ChunkStore.Writer w = chunks.writer(); // a gateway that crashed before its commit
        feed(w, data, 0, data.length);
        List<Chunk> written = w.finish();
        assertThat(written).hasSize(2);
        // A young record is left alone.
        assertThat(chunks.sweep(3_600_000, 3_600_000)).isZero();
        assertThat(pendings()).extracting(Pending::id).contains(w.pending());
        // Once older than the limit it is doomed and its needles deleted.
        long[] deleted = {0};
        Await.untilTrue("the old record swept", java.time.Duration.ofSeconds(20), () -> {
            deleted[0] += chunks.sweep(1, 3_600_000);
            return pendings().stream().noneMatch(p -> p.id().equals(w.pending()));
        });
        assertThat(deleted[0]).isEqualTo(2);
        assertThat(StoreNeedles.live(cluster.stores())).isEqualTo(before);
        ObjectRecord o = new ObjectRecord(BUCKET, "late", data.length, "etag", written, List.of(), Map.of(), null,
                null, Map.of(), Map.of(), 0);
        Throwable t = catchThrowable(() -> Futures.await(namespace.putObject(o, w.pending(), NamespaceClient.Condition.NONE)));
        assertThat(t).isInstanceOf(DirectoryException.class);
        assertThat(((DirectoryException) t).errorName()).isEqualTo("PENDING_GONE");
        assertThat(catchThrowable(() -> Futures.await(namespace.object(BUCKET, "late")))).isInstanceOf(DirectoryException.class);
    }

    @Test
    void theSweepAbortsAnAbandonedUploadAndDeletesItsParts() throws Exception {
        Map<String, Integer> before = StoreNeedles.live(cluster.stores());
        Upload u = Futures.await(namespace.createUpload(new Upload(BUCKET, "multi", null, 0, null, Map.of(), Map.of(), null, null)));
        List<String> written = new ArrayList<>();
        for (int n = 1; n <= 2; n++) {
            byte[] data = bytes(C + 7);
            ChunkStore.Writer w = chunks.writer();
            feed(w, data, 0, data.length);
            List<Chunk> cs = w.finish();
            cs.forEach(c -> written.add(StoreNeedles.name(c)));
            Replaced r = Futures.await(namespace.putPart(BUCKET, "multi", u.uploadId(),
                    new Part(n, data.length, "etag" + n, cs, Map.of(), 0), w.pending()));
            chunks.free(r.doomed());
        }
        assertThat(StoreNeedles.live(cluster.stores()).keySet()).containsAll(written);
        assertThat(chunks.sweep(3_600_000, 3_600_000)).as("a young upload is left alone").isZero();
        long[] deleted = {0};
        Await.untilTrue("the upload aborted", java.time.Duration.ofSeconds(20), () -> {
            deleted[0] += chunks.sweep(3_600_000, 1);
            return Futures.await(namespace.uploadsBefore(Long.MAX_VALUE, 10)).isEmpty();
        });
        assertThat(deleted[0]).isEqualTo(4);
        assertThat(StoreNeedles.live(cluster.stores())).isEqualTo(before);
    }
}
