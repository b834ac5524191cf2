package io.hayloft.directory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.client.DirectoryClient;
import io.hayloft.client.DirectoryException;
import io.hayloft.client.NamespaceClient;
import io.hayloft.client.NamespaceClient.Condition;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.format.s3.Bucket;
import io.hayloft.format.s3.Chunk;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.format.s3.Part;
import io.hayloft.format.s3.Pending;
import io.hayloft.format.s3.Replaced;
import io.hayloft.format.s3.Upload;
import io.hayloft.format.s3.UploadListing;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The S3 namespace on a real directory (HTTP, RocksDB) through {@link NamespaceClient}: buckets and
 * their counters, conditional puts raced by 16 writers, multipart completion and its checks, pending
 * records and PENDING_GONE, upload listings, the admin token, and a restart.
 */
class NamespaceTest {
    static final long MIB = 1L << 20;

    @TempDir
    Path dir;

    private DirectoryServer server;
    private HttpTransport http;
    private NamespaceClient ns;
    private final AtomicLong keys = new AtomicLong(1000);

    @BeforeEach
    void start() throws Exception {
        server = DirectoryServer.start(config(true));
        http = HttpTransport.create();
        ns = new NamespaceClient(new DirectoryClient(http, List.of(server.address()), "admin"));
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.close();
        }
    }

    private DirectoryConfig config(boolean init) {
        DirectoryConfig c = new DirectoryConfig();
        c.dataDir = dir.resolve("directory").toString();
        c.port = 0;
        c.init = init;
        c.probeIntervalMillis = 60_000;
        c.adminToken = "admin";
        return c;
    }

    /** A chunk of {@code size} bytes on a needle no other chunk of the test uses. */
    Chunk chunk(long size) {
        return new Chunk(1, keys.incrementAndGet(), 7, size);
    }

    static ObjectRecord object(String bucket, String key, String etag, List<Chunk> chunks) {
        long size = chunks.stream().mapToLong(Chunk::size).sum();
        return new ObjectRecord(bucket, key, size, etag, chunks, null, null, null, "text/plain", null, Map.of("a", "b"), 0);
    }

    static String errorOf(ThrowingCallable call) {
        try {
            call.call();
        } catch (Throwable t) {
            Throwable c = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
            assertThat(c).isInstanceOf(DirectoryException.class);
            return ((DirectoryException) c).errorName();
        }
        throw new AssertionError("no error");
    }

    @Test
    void bucketsKeepTheirCountersAndRefuseToGoWhileNotEmpty() {
        Bucket b = ns.createBucket("photos", "us-east-1").join();
        assertThat(b.name()).isEqualTo("photos");
        assertThat(b.created()).isPositive();
        assertThat(errorOf(() -> ns.createBucket("photos", "x").join())).isEqualTo("BUCKET_EXISTS");
        assertThat(errorOf(() -> ns.createBucket("No_Such", "x").join())).isEqualTo("BAD_REQUEST");
        assertThat(errorOf(() -> ns.bucket("nope").join())).isEqualTo("NO_SUCH_BUCKET");
        assertThat(errorOf(() -> ns.putObject(object("nope", "k", "e", List.of()), null, Condition.NONE).join()))
                .isEqualTo("NO_SUCH_BUCKET");

        ns.putObject(object("photos", "a", "e1", List.of(chunk(10), chunk(5))), null, Condition.NONE).join();
        ns.putObject(object("photos", "b", "e2", List.of()), null, Condition.NONE).join();
        assertThat(ns.bucket("photos").join()).extracting(Bucket::objects, Bucket::bytes).containsExactly(2L, 15L);
        Replaced over = ns.putObject(object("photos", "a", "e3", List.of(chunk(3))), null, Condition.NONE).join();
        assertThat(over.doomed()).isNotNull();
        assertThat(over.object().modified()).isPositive();
        assertThat(ns.bucket("photos").join()).extracting(Bucket::objects, Bucket::bytes).containsExactly(2L, 3L);
        assertThat(ns.object("photos", "a").join().etag()).isEqualTo("e3");
        assertThat(errorOf(() -> ns.object("photos", "zz").join())).isEqualTo("NO_SUCH_KEY");

        Upload u = ns.createUpload(new Upload("photos", "big", null, 0, "x/y", null, null, null, null)).join();
        assertThat(ns.bucket("photos").join().uploads()).isEqualTo(1);
        assertThat(errorOf(() -> ns.deleteBucket("photos").join())).isEqualTo("BUCKET_NOT_EMPTY");
        ns.abort("photos", "big", u.uploadId()).join();
        assertThat(ns.bucket("photos").join().uploads()).isZero();

        assertThat(ns.deleteObject("photos", "a", null).join().doomed()).isNotNull();
        assertThat(ns.deleteObject("photos", "a", null).join()).isEqualTo(new Replaced(null, null));
        assertThat(errorOf(() -> ns.deleteBucket("photos").join())).isEqualTo("BUCKET_NOT_EMPTY");
        assertThat(errorOf(() -> ns.deleteObject("photos", "b", "\"wrong\"").join())).isEqualTo("PRECONDITION_FAILED");
        assertThat(ns.deleteObject("photos", "b", "\"e2\"").join().object().etag()).isEqualTo("e2");
        assertThat(ns.bucket("photos").join()).extracting(Bucket::objects, Bucket::bytes).containsExactly(0L, 0L);
        ns.createBucket("zebra", null).join();
        assertThat(ns.buckets().join()).extracting(Bucket::name).containsExactly("photos", "zebra");
        ns.deleteBucket("photos").join();
        assertThat(errorOf(() -> ns.deleteBucket("photos").join())).isEqualTo("NO_SUCH_BUCKET");
        assertThat(ns.buckets().join()).extracting(Bucket::name).containsExactly("zebra");
    }

    static ObjectRecord inline(String bucket, String key, byte[] data) {
        return new ObjectRecord(bucket, key, data.length, "i" + data.length, null, null, null, null, "text/plain", null, null, 0, data);
    }

    @Test
    void smallObjectsAreKeptInlineAndReplacedCleanly() {
        ns.createBucket("tiny", null).join();
        byte[] data = new byte[Namespace.MAX_INLINE];
        new java.util.Random(7).nextBytes(data);
        Replaced first = ns.putObject(inline("tiny", "k", data), null, Condition.NONE).join();
        assertThat(first.doomed()).isNull();
        assertThat(first.object().inline()).as("the answer does not echo the data").isNull();
        assertThat(ns.object("tiny", "k").join().inline()).isEqualTo(data);
        assertThat(ns.list("tiny", null, null, null, 10).join().objects()).singleElement()
                .satisfies(o -> assertThat(o.inline()).as("listings carry no data").isNull());
        assertThat(ns.bucket("tiny").join()).extracting(Bucket::objects, Bucket::bytes).containsExactly(1L, (long) data.length);

        Chunk c = chunk(3);
        assertThat(ns.putObject(object("tiny", "k", "e", List.of(c)), null, Condition.NONE).join().doomed())
                .as("inline data has no needle to free").isNull();
        assertThat(ns.object("tiny", "k").join()).satisfies(o -> {
            assertThat(o.inline()).isNull();
            assertThat(o.chunks()).containsExactly(c);
        });
        Replaced back = ns.putObject(inline("tiny", "k", new byte[] {0}), null, Condition.NONE).join();
        assertThat(ns.pending(back.doomed()).join().chunks()).as("the chunk object's needle is freed").containsExactly(c);
        assertThat(ns.object("tiny", "k").join().inline()).containsExactly(0);
        assertThat(ns.deleteObject("tiny", "k", null).join().doomed()).isNull();
        assertThat(errorOf(() -> ns.object("tiny", "k").join())).isEqualTo("NO_SUCH_KEY");
        assertThat(ns.bucket("tiny").join()).extracting(Bucket::objects, Bucket::bytes).containsExactly(0L, 0L);

        byte[] over = new byte[Namespace.MAX_INLINE + 1];
        assertThat(errorOf(() -> ns.putObject(inline("tiny", "big", over), null, Condition.NONE).join())).isEqualTo("BAD_REQUEST");
        ObjectRecord both = new ObjectRecord("tiny", "both", 2, "e", List.of(chunk(1)), null, null, null, null, null, null, 0, new byte[] {1});
        assertThat(errorOf(() -> ns.putObject(both, null, Condition.NONE).join())).isEqualTo("BAD_REQUEST");
        ObjectRecord shortData = new ObjectRecord("tiny", "short", 5, "e", null, null, null, null, null, null, null, 0, new byte[4]);
        assertThat(errorOf(() -> ns.putObject(shortData, null, Condition.NONE).join())).isEqualTo("BAD_REQUEST");
        assertThat(ns.bucket("tiny").join()).extracting(Bucket::objects, Bucket::bytes).containsExactly(0L, 0L);
    }

    /**
     * 16 writers put, overwrite and delete keys of one bucket at once (inline and chunked, a few keys
     * so they collide): the bucket's counters, moved by each change's amounts, end equal to what its
     * keys hold, and every key holds what its last acknowledged writer wrote.
     */
    @Test
    void concurrentChangesToOneBucketKeepItsCountersExact() throws Exception {
        ns.createBucket("busy", null).join();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        Map<String, String> last = new java.util.concurrent.ConcurrentHashMap<>();
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                int writer = t;
                done.add(pool.submit(() -> {
                    java.util.Random r = new java.util.Random(writer);
                    for (int i = 0; i < 40; i++) {
                        String key = "k" + r.nextInt(6) + "-" + writer % 4; // writers w and w+4k share keys
                        synchronized (("busy/" + key).intern()) { // the model: one writer of a key at a time
                            if (r.nextInt(5) == 0) {
                                ns.deleteObject("busy", key, null).join();
                                last.remove(key);
                            } else {
                                String etag = writer + "-" + i;
                                ObjectRecord o = r.nextBoolean() ? inline("busy", key, new byte[1 + r.nextInt(100)])
                                        : object("busy", key, etag, List.of(chunk(1 + r.nextInt(1000))));
                                o = new ObjectRecord(o.bucket(), o.key(), o.size(), etag, o.chunks(), null, null, null, null, null, null, 0,
                                        o.inline());
                                ns.putObject(o, null, Condition.NONE).join();
                                last.put(key, etag);
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        List<ObjectRecord> held = ns.list("busy", null, null, null, 1000).join().objects();
        assertThat(held).extracting(ObjectRecord::key).containsExactlyInAnyOrderElementsOf(last.keySet());
        held.forEach(o -> assertThat(o.etag()).as(o.key()).isEqualTo(last.get(o.key())));
        assertThat(ns.bucket("busy").join()).extracting(Bucket::objects, Bucket::bytes)
                .containsExactly((long) held.size(), held.stream().mapToLong(ObjectRecord::size).sum());
    }

    @Test
    void sixteenRacingConditionalPutsHaveExactlyOneWinner() throws Exception {
        ns.createBucket("race", null).join();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<String>> outcomes = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                String etag = "etag-" + i;
                outcomes.add(pool.submit(() -> {
                    go.await();
                    try {
                        ns.putObject(object("race", "k", etag, List.of(chunk(1))), null, new Condition(null, true)).join();
                        return "won";
                    } catch (CompletionException e) {
                        return ((DirectoryException) e.getCause()).errorName();
                    }
                }));
            }
            go.countDown();
            List<String> results = new ArrayList<>();
            for (Future<String> f : outcomes) {
                results.add(f.get());
            }
            assertThat(results).filteredOn("won"::equals).hasSize(1);
            assertThat(results).filteredOn("PRECONDITION_FAILED"::equals).hasSize(15);
            String winner = ns.object("race", "k").join().etag();

            // If-Match races: only writers that name the current ETag win, one after the other.
            outcomes.clear();
            CountDownLatch go2 = new CountDownLatch(1);
            for (int i = 0; i < 16; i++) {
                String etag = "second-" + i;
                outcomes.add(pool.submit(() -> {
                    go2.await();
                    try {
                        ns.putObject(object("race", "k", etag, List.of()), null, new Condition("\"" + winner + "\"", false)).join();
                        return "won";
                    } catch (CompletionException e) {
                        return ((DirectoryException) e.getCause()).errorName();
                    }
                }));
            }
            go2.countDown();
            results.clear();
            for (Future<String> f : outcomes) {
                results.add(f.get());
            }
            assertThat(results).filteredOn("won"::equals).hasSize(1);
            assertThat(ns.bucket("race").join()).extracting(Bucket::objects, Bucket::bytes).containsExactly(1L, 0L);
        } finally {
            pool.shutdownNow();
        }
        assertThat(errorOf(() -> ns.putObject(object("race", "absent", "e", List.of()), null, new Condition("*", false)).join()))
                .isEqualTo("NO_SUCH_KEY");
    }

    @Test
    void multipartCompletionChecksPartsSizesAndConditions() {
        ns.createBucket("multi", null).join();
        Upload u = ns.createUpload(new Upload("multi", "movie", null, 0, "video/mp4", Map.of("Cache-Control", "no-cache"),
                Map.of("who", "me"), "CRC32", "COMPOSITE")).join();
        assertThat(u.uploadId()).matches("[A-Za-z0-9_-]{22}");
        assertThat(ns.upload("multi", "movie", u.uploadId()).join()).isEqualTo(u);
        assertThat(errorOf(() -> ns.upload("multi", "other", u.uploadId()).join())).isEqualTo("NO_SUCH_UPLOAD");

        Chunk first = chunk(5 * MIB);
        String pending = ns.pend(null, List.of(first)).join();
        assertThat(ns.putPart("multi", "movie", u.uploadId(), part(1, "p1", first), pending).join().doomed()).isNull();
        assertThat(ns.pendings(null, 100).join()).extracting(Pending::id).doesNotContain(pending);
        // Part 2 uploaded twice: the first upload's chunk is doomed.
        ns.putPart("multi", "movie", u.uploadId(), part(2, "p2-old", chunk(MIB)), null).join();
        Chunk second = chunk(MIB);
        Replaced again = ns.putPart("multi", "movie", u.uploadId(), part(2, "p2", second), null).join();
        assertThat(again.doomed()).isNotNull();
        Chunk third = chunk(7);
        ns.putPart("multi", "movie", u.uploadId(), part(3, "p3", third), null).join();
        Chunk fourth = chunk(9);
        ns.putPart("multi", "movie", u.uploadId(), part(4, "p4", fourth), null).join();
        assertThat(ns.parts("multi", "movie", u.uploadId(), 0, 100).join()).extracting(Part::number).containsExactly(1, 2, 3, 4);
        assertThat(ns.parts("multi", "movie", u.uploadId(), 1, 2).join()).extracting(Part::etag).containsExactly("p2", "p3");

        ObjectRecord target = new ObjectRecord("multi", "movie", 0, "abc-3", List.of(), null, Map.of("CRC32", "AAAA-3"), "COMPOSITE",
                null, null, null, 0);
        assertThat(errorOf(() -> ns.complete(u.uploadId(), target, List.of(ref(1, "p1"), ref(2, "p2-old")), Condition.NONE).join()))
                .isEqualTo("INVALID_PART");
        assertThat(errorOf(() -> ns.complete(u.uploadId(), target, List.of(ref(1, "p1"), ref(5, "p5")), Condition.NONE).join()))
                .isEqualTo("INVALID_PART");
        assertThat(errorOf(() -> ns.complete(u.uploadId(), target, List.of(ref(1, "p1"), ref(2, "p2"), ref(3, "p3")),
                Condition.NONE).join())).isEqualTo("ENTITY_TOO_SMALL");
        ns.putObject(object("multi", "movie", "before", List.of(chunk(4))), null, Condition.NONE).join();
        assertThat(errorOf(() -> ns.complete(u.uploadId(), target, List.of(ref(1, "p1"), ref(3, "p3")),
                new Condition(null, true)).join())).isEqualTo("PRECONDITION_FAILED");

        // Parts 1 and 3 chosen (part 1 is 5 MiB, part 3 the last): part 2, part 4 and the old object are doomed.
        Replaced done = ns.complete(u.uploadId(), target, List.of(ref(1, "\"p1\""), ref(3, "p3")), new Condition("before", false)).join();
        assertThat(done.object().chunks()).containsExactly(first, third);
        assertThat(done.object().size()).isEqualTo(5 * MIB + 7);
        assertThat(done.object().partSizes()).containsExactly(5 * MIB, 7L);
        assertThat(done.object().contentType()).isEqualTo("video/mp4");
        assertThat(done.object().metadata()).containsEntry("who", "me");
        Pending doomed = ns.pendings(null, 1000).join().stream().filter(p -> p.id().equals(done.doomed())).findFirst().orElseThrow();
        assertThat(doomed.state()).isEqualTo(Pending.DOOMED);
        assertThat(doomed.chunks()).contains(second, fourth).doesNotContain(first, third).hasSize(3);
        assertThat(ns.object("multi", "movie").join()).isEqualTo(done.object());
        assertThat(errorOf(() -> ns.complete(u.uploadId(), target, List.of(ref(1, "p1"), ref(3, "p3")), Condition.NONE).join()))
                .isEqualTo("NO_SUCH_UPLOAD");
        assertThat(errorOf(() -> ns.parts("multi", "movie", u.uploadId(), 0, 10).join())).isEqualTo("NO_SUCH_UPLOAD");
        assertThat(ns.bucket("multi").join()).extracting(Bucket::objects, Bucket::bytes, Bucket::uploads)
                .containsExactly(1L, 5 * MIB + 7, 0L);
    }

    static Part part(int n, String etag, Chunk c) {
        return new Part(n, c.size(), etag, List.of(c), null, 0);
    }

    static Part ref(int n, String etag) {
        return new Part(n, 0, etag, null, null, 0);
    }

    @Test
    void aDoomedPendingRecordFailsItsCommit() {
        ns.createBucket("pend", null).join();
        Chunk a = chunk(8);
        Chunk b = chunk(8);
        String id = ns.pend(null, List.of(a)).join();
        assertThat(ns.pend(id, List.of(b)).join()).isEqualTo(id);
        Pending p = ns.pendings(null, 10).join().get(0);
        assertThat(p).extracting(Pending::id, Pending::state, Pending::chunks).containsExactly(id, Pending.WRITING, List.of(a, b));
        assertThat(errorOf(() -> ns.drop(id).join())).isEqualTo("WRONG_STATE");
        ns.doom(id).join();
        ns.doom(id).join(); // idempotent
        assertThat(errorOf(() -> ns.pend(id, List.of(chunk(1))).join())).isEqualTo("PENDING_GONE");
        assertThat(errorOf(() -> ns.putObject(object("pend", "k", "e", List.of(a, b)), id, Condition.NONE).join()))
                .isEqualTo("PENDING_GONE");
        assertThat(errorOf(() -> ns.object("pend", "k").join())).isEqualTo("NO_SUCH_KEY");
        assertThat(ns.pendings(null, 10).join().get(0).state()).isEqualTo(Pending.DOOMED);
        ns.drop(id).join();
        ns.drop(id).join(); // idempotent
        assertThat(ns.pendings(null, 10).join()).isEmpty();
        assertThat(errorOf(() -> ns.putObject(object("pend", "k", "e", List.of(a)), id, Condition.NONE).join()))
                .isEqualTo("PENDING_GONE");

        // A commit takes the record; chunks it recorded that the object does not hold are doomed, not lost.
        Chunk c = chunk(3);
        Chunk stray = chunk(4);
        String id2 = ns.pend(null, List.of(c, stray)).join();
        Replaced r = ns.putObject(object("pend", "k", "e", List.of(c)), id2, Condition.NONE).join();
        // The same commit again (its answer lost): the first one's success, nothing changed, not PENDING_GONE.
        assertThat(ns.putObject(object("pend", "k", "e", List.of(c)), id2, new Condition(null, true)).join())
                .isEqualTo(new Replaced(r.object(), null));
        List<Pending> left = ns.pendings(null, 10).join();
        assertThat(left).extracting(Pending::id).containsExactly(r.doomed());
        assertThat(left.get(0).chunks()).containsExactly(stray);

        // Paging by id.
        for (int i = 0; i < 5; i++) {
            ns.pend(null, List.of()).join();
        }
        List<String> all = ns.pendings(null, 100).join().stream().map(Pending::id).toList();
        assertThat(all).hasSize(6).isSorted();
        assertThat(ns.pendings(all.get(2), 2).join()).extracting(Pending::id).containsExactly(all.get(3), all.get(4));
    }

    @Test
    void inputAtItsLimits() {
        ns.createBucket("abc", null).join(); // 3 characters: the shortest name
        ns.createBucket("a".repeat(63), null).join();
        assertThat(errorOf(() -> ns.createBucket("ab", null).join())).isEqualTo("BAD_REQUEST");
        assertThat(errorOf(() -> ns.createBucket("a".repeat(64), null).join())).isEqualTo("BAD_REQUEST");
        assertThat(errorOf(() -> ns.createBucket("a..b", null).join())).isEqualTo("BAD_REQUEST");
        String longest = "é".repeat(512); // 1024 bytes of UTF-8
        ns.putObject(object("abc", longest, "e", List.of(chunk(1))), null, Condition.NONE).join();
        assertThat(ns.object("abc", longest).join().size()).isEqualTo(1);
        assertThat(errorOf(() -> ns.putObject(object("abc", longest + "x", "e", List.of()), null, Condition.NONE).join()))
                .isEqualTo("BAD_REQUEST");
        assertThat(errorOf(() -> ns.putObject(object("abc", "nul\0", "e", List.of()), null, Condition.NONE).join()))
                .isEqualTo("BAD_REQUEST");
        assertThat(errorOf(() -> ns.putObject(object("abc", "", "e", List.of()), null, Condition.NONE).join())).isEqualTo("BAD_REQUEST");
        ObjectRecord lying = new ObjectRecord("abc", "k", 2, "e", List.of(chunk(1)), null, null, null, null, null, null, 0);
        assertThat(errorOf(() -> ns.putObject(lying, null, Condition.NONE).join())).isEqualTo("BAD_REQUEST");
        assertThat(errorOf(() -> ns.putObject(object("abc", "k", "e", List.of(chunk(0))), null, Condition.NONE).join()))
                .isEqualTo("BAD_REQUEST");
        ns.putObject(object("abc", "empty", "e", List.of()), null, Condition.NONE).join(); // 0 bytes: no chunk
        assertThat(ns.bucket("abc").join()).extracting(Bucket::objects, Bucket::bytes).containsExactly(2L, 1L);

        Upload u = ns.createUpload(new Upload("abc", "parts", null, 0, null, null, null, null, null)).join();
        assertThat(errorOf(() -> ns.putPart("abc", "parts", u.uploadId(), part(0, "p", chunk(1)), null).join())).isEqualTo("BAD_REQUEST");
        assertThat(errorOf(() -> ns.putPart("abc", "parts", u.uploadId(), part(10_001, "p", chunk(1)), null).join()))
                .isEqualTo("BAD_REQUEST");
        ns.putPart("abc", "parts", u.uploadId(), part(10_000, "last", chunk(1)), null).join();
        ns.putPart("abc", "parts", u.uploadId(), part(1, "first", chunk(5 * MIB)), null).join();
        assertThat(ns.parts("abc", "parts", u.uploadId(), 0, 0).join()).isEmpty();
        assertThat(ns.parts("abc", "parts", u.uploadId(), 1, 10).join()).extracting(Part::number).containsExactly(10_000);
        ObjectRecord target = new ObjectRecord("abc", "parts", 0, "m-2", null, null, null, null, null, null, null, 0);
        // A first part of exactly 5 MiB is big enough; the last may be 1 byte.
        Replaced done = ns.complete(u.uploadId(), target, List.of(ref(1, "first"), ref(10_000, "last")), Condition.NONE).join();
        assertThat(done.object().size()).isEqualTo(5 * MIB + 1);
        assertThat(done.doomed()).isNull();
        assertThat(ns.list("abc", null, null, null, 0).join().truncated()).isFalse();
        assertThat(ns.list("abc", null, null, null, 1).join().truncated()).isTrue();
    }

    @Test
    void uploadsAreListedByKeyThenIdWithMarkersAndPrefixes() {
        ns.createBucket("ups", null).join();
        List<Upload> made = new ArrayList<>();
        for (String key : List.of("a", "a", "b/1", "b/2", "c")) {
            made.add(ns.createUpload(new Upload("ups", key, null, 0, null, null, null, null, null)).join());
        }
        UploadListing all = ns.uploads("ups", null, null, null, null, 100).join();
        assertThat(all.uploads()).extracting(Upload::key).containsExactly("a", "a", "b/1", "b/2", "c");
        assertThat(all.truncated()).isFalse();
        UploadListing rolled = ns.uploads("ups", null, "/", null, null, 100).join();
        assertThat(rolled.uploads()).extracting(Upload::key).containsExactly("a", "a", "c");
        assertThat(rolled.commonPrefixes()).containsExactly("b/");
        UploadListing first = ns.uploads("ups", null, "/", null, null, 1).join();
        assertThat(first.truncated()).isTrue();
        UploadListing second = ns.uploads("ups", null, "/", first.nextKey(), first.nextUploadId(), 2).join();
        assertThat(second.uploads()).extracting(Upload::key).containsExactly("a");
        assertThat(second.commonPrefixes()).containsExactly("b/");
        assertThat(second.nextKey()).isEqualTo("b/");
        assertThat(second.nextUploadId()).isNull();
        UploadListing third = ns.uploads("ups", null, "/", second.nextKey(), null, 2).join();
        assertThat(third.uploads()).extracting(Upload::key).containsExactly("c");
        assertThat(third.truncated()).isFalse();
        assertThat(ns.uploads("ups", "b/", null, null, null, 100).join().uploads()).extracting(Upload::key).containsExactly("b/1", "b/2");
        assertThat(ns.uploadsBefore(Long.MAX_VALUE, 100).join()).hasSize(5);
        assertThat(ns.uploadsBefore(0, 100).join()).isEmpty();
    }

    @Test
    void everyRouteNeedsTheAdminTokenAndTheNamespaceSurvivesARestart() throws Exception {
        ns.createBucket("keep", "eu-west-1").join();
        String key = "dir/ünï cødé + 100%//x";
        ns.putObject(object("keep", key, "e1", List.of(chunk(42))), null, Condition.NONE).join();
        String pending = ns.pend(null, List.of(chunk(1))).join();
        Upload u = ns.createUpload(new Upload("keep", key, null, 0, null, null, null, null, null)).join();

        HttpClient raw = HttpClient.newHttpClient();
        for (String path : List.of("/v1/s3/buckets", "/v1/s3/buckets/keep", "/v1/s3/objects/keep", "/v1/s3/pending")) {
            HttpResponse<String> r = raw.send(HttpRequest.newBuilder(URI.create("http://" + server.address() + path)).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(path).isEqualTo(401);
        }
        NamespaceClient noToken = new NamespaceClient(new DirectoryClient(http, List.of(server.address()), null));
        assertThat(errorOf(() -> noToken.createBucket("other", null).join())).isEqualTo("UNAUTHORIZED");

        server.close();
        server = DirectoryServer.start(config(false));
        ns = new NamespaceClient(new DirectoryClient(http, List.of(server.address()), "admin"));
        assertThat(ns.bucket("keep").join()).extracting(Bucket::region, Bucket::objects, Bucket::bytes, Bucket::uploads)
                .containsExactly("eu-west-1", 1L, 42L, 1L);
        assertThat(ns.object("keep", key).join().etag()).isEqualTo("e1");
        assertThat(ns.list("keep", "dir/", "/", null, 10).join().commonPrefixes()).containsExactly("dir/ünï cødé + 100%/");
        assertThat(ns.pendings(null, 10).join()).extracting(Pending::id).containsExactly(pending);
        assertThat(ns.upload("keep", key, u.uploadId()).join().uploadId()).isEqualTo(u.uploadId());
        assertThatThrownBy(() -> ns.bucket("gone").join()).hasCauseInstanceOf(DirectoryException.class);
    }
}
