package io.hayloft.s3.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.s3.GatewayCluster;
import io.hayloft.s3.S3Server;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import software.amazon.awssdk.core.ResponseBytes;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.HeadObjectResponse;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * Strong read-after-write consistency through two gateways on one cluster: 16 writers PUT and DELETE
 * 24 keys (so they collide) through either gateway at random, while 8 readers GET and HEAD them through
 * either gateway; then every key is read once more through each. The history, timed in this JVM, must
 * pass {@link History#check}: no read returns a state (an object, or its absence) older than one
 * acknowledged before the read started, whichever gateway took the write and which the read. Every
 * object read must be byte for byte the write its metadata names, with that write's ETag and length
 * (no torn or mixed objects). Bodies are 0 B to three chunks and a bit (the gateway cuts at 64 KiB and
 * keeps objects of at most 4 KiB inline in the directory: sizes on both sides of both edges), each
 * beginning with the name of its write ({@code w<writer>-<seq>|}) when long enough.
 *
 * <p>Run over a single directory and over a directory group of three Raft replicas. Every request must
 * succeed (but 404 on a read); a failed write is still checked, as one that may or may not have happened.
 */
class ReadAfterWriteTest {
    private static final int WRITERS = 16;
    private static final int READERS = 8;
    private static final int KEYS = 24;
    /** 960 writes, 40 a key: enough collisions, and both runs within about 40 s on 2 cores. */
    private static final int OPS_PER_WRITER = 60;
    private static final int CHUNK = 64 * 1024;
    private static final int INLINE = 4096;
    /** Body sizes: empty, tiny, small, the inline limit +- 1, 16 KiB; */
    private static final int[] SIZES = {0, 1, 300, INLINE - 1, INLINE, INLINE + 1, 16384};
    /** and for one PUT in 12: a chunk, a chunk + 1 (two chunks), three chunks and a bit. */
    private static final int[] BIG_SIZES = {CHUNK, CHUNK + 1, 3 * CHUNK + 7};
    /** The user metadata naming the write of an object ({@code x-amz-meta-write}). */
    private static final String WRITE = "write";

    /** What a PUT stored, by the name of the write: enough to recognise its bytes. */
    private record Body(int size, String etag) {
    }

    private final History history = new History();
    private final Map<String, Body> bodies = new ConcurrentHashMap<>();
    /** Every failed request and every object that is not exactly the write it names. */
    private final Queue<String> failures = new ConcurrentLinkedQueue<>();
    private final List<S3Client> gateways = new ArrayList<>();
    private String bucket;

    @TempDir
    Path dir;

    @ParameterizedTest(name = "directory replicas: {0}")
    @ValueSource(ints = {1, 3})
    void noReadReturnsAStateOlderThanAWriteAcknowledgedBeforeItStarted(int directoryReplicas) throws Exception {
        Map<String, String> overrides = Map.of("chunkBytes", Integer.toString(CHUNK), "inlineBytes", Integer.toString(INLINE));
        try (GatewayCluster cluster = GatewayCluster.startCluster(dir, directoryReplicas)) {
            gateways.add(client(cluster.startGateway(overrides)));
            gateways.add(client(cluster.addGateway(overrides)));
            try {
                bucket = "raw-" + directoryReplicas;
                gateways.get(0).createBucket(b -> b.bucket(bucket));
                gateways.get(1).headBucket(b -> b.bucket(bucket));
                runConcurrently();
                for (int k = 0; k < KEYS; k++) {
                    for (int g = 0; g < gateways.size(); g++) {
                        read(g, key(k), false); // all writes acknowledged: each read must see one of the last ones
                    }
                }
            } finally {
                gateways.forEach(S3Client::close);
            }
        }
        List<String> violations = history.check();
        assertThat(violations).as("reads older than an acknowledged write (%d of %d reads; %d writes)",
                violations.size(), history.reads().size(), history.writes().size()).isEmpty();
        assertThat(failures).as("failed requests and objects unlike the write they name").isEmpty();
        // Not vacuous: both kinds of answer were read, many times, while the keys were being written.
        List<History.Read> reads = history.reads();
        assertThat(history.writes()).hasSize(WRITERS * OPS_PER_WRITER);
        assertThat(reads.stream().filter(r -> r.value() != null).count()).as("reads that found an object").isGreaterThan(200);
        assertThat(reads.stream().filter(r -> r.value() == null).count()).as("reads that found none").isGreaterThan(10);
        assertThat(reads.stream().filter(r -> r.op().startsWith("HEAD")).count()).as("HEADs").isGreaterThan(10);
    }

    private static S3Client client(S3Server gateway) {
        return SdkCluster.builder(URI.create("http://127.0.0.1:" + gateway.port()), GatewayCluster.ACCESS_KEY,
                GatewayCluster.SECRET_KEY).build();
    }

    private static String key(int k) {
        return "key-" + k;
    }

    /** Runs the writers, and the readers until the writers are done; rethrows what a thread threw. */
    private void runConcurrently() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(WRITERS + READERS);
        try {
            CountDownLatch writing = new CountDownLatch(WRITERS);
            List<Future<?>> futures = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                int writer = w;
                futures.add(pool.submit(() -> {
                    try {
                        for (int seq = 0; seq < OPS_PER_WRITER; seq++) {
                            write(writer, seq);
                        }
                    } finally {
                        writing.countDown();
                    }
                }));
            }
            for (int r = 0; r < READERS; r++) {
                futures.add(pool.submit(() -> {
                    ThreadLocalRandom rnd = ThreadLocalRandom.current();
                    while (writing.getCount() > 0) {
                        read(rnd.nextInt(gateways.size()), key(rnd.nextInt(KEYS)), rnd.nextInt(5) == 0);
                    }
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** One PUT (3 in 4) or DELETE of a random key through a random gateway, recorded. */
    private void write(int writer, int seq) {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        int g = rnd.nextInt(gateways.size());
        String key = key(rnd.nextInt(KEYS));
        String name = rnd.nextInt(4) == 0 ? null : "w" + writer + "-" + seq;
        int[] sizes = rnd.nextInt(12) == 0 ? BIG_SIZES : SIZES;
        byte[] body = name == null ? null : body(name, sizes[rnd.nextInt(sizes.length)], rnd);
        if (name != null) {
            bodies.put(name, new Body(body.length, Digests.etag(body))); // before the PUT: a read may see it at once
        }
        long invoked = System.nanoTime();
        long acknowledged = History.NOT_ACKNOWLEDGED;
        try {
            if (name == null) {
                gateways.get(g).deleteObject(b -> b.bucket(bucket).key(key));
                acknowledged = System.nanoTime();
            } else {
                String etag = gateways.get(g).putObject(b -> b.bucket(bucket).key(key).metadata(Map.of(WRITE, name)),
                        RequestBody.fromBytes(body)).eTag();
                acknowledged = System.nanoTime();
                if (!bodies.get(name).etag().equals(etag)) {
                    failures.add("PUT " + key + " " + name + " via gateway " + g + " answered ETag " + etag + ", not "
                            + bodies.get(name).etag());
                }
            }
        } catch (SdkException e) {
            failures.add((name == null ? "DELETE " : "PUT " + name + " of ") + key + " via gateway " + g + " invoked at "
                    + history.micros(invoked) + " us failed: " + e);
        } finally {
            history.add(new History.Write(key, name, invoked, acknowledged));
        }
    }

    /** {@code size} random bytes beginning with {@code name|} (as much of it as fits). */
    private static byte[] body(String name, int size, ThreadLocalRandom rnd) {
        byte[] b = new byte[size];
        rnd.nextBytes(b);
        byte[] tag = (name + "|").getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(tag, 0, b, 0, Math.min(size, tag.length));
        return b;
    }

    /** A GET (or HEAD) of {@code key} through gateway {@code g}, recorded, and its object compared with the write it names. */
    private void read(int g, String key, boolean head) {
        String op = (head ? "HEAD" : "GET") + " via gateway " + g;
        long started = System.nanoTime();
        try {
            String name;
            long length;
            String etag;
            String content = null; // GET: the MD5 ETag of the body read, its length and its first bytes
            if (head) {
                HeadObjectResponse r = gateways.get(g).headObject(b -> b.bucket(bucket).key(key));
                name = r.metadata().get(WRITE);
                length = r.contentLength();
                etag = r.eTag();
            } else {
                ResponseBytes<GetObjectResponse> r = gateways.get(g).getObjectAsBytes(b -> b.bucket(bucket).key(key));
                byte[] bytes = r.asByteArray();
                name = r.response().metadata().get(WRITE);
                length = r.response().contentLength();
                etag = r.response().eTag();
                String begins = new String(bytes, 0, Math.min(bytes.length, 12), StandardCharsets.US_ASCII);
                content = Digests.etag(bytes) + " " + bytes.length + " begins '" + begins.replaceAll("[^ -~]", "?") + "'";
            }
            long ended = System.nanoTime();
            history.add(new History.Read(op, key, name == null ? "(no write named)" : name, started, ended));
            Body expected = name == null ? null : bodies.get(name);
            if (expected == null) {
                failures.add(op + " " + key + " from " + history.micros(started) + " us to " + history.micros(ended)
                        + " us: an object whose metadata names no write: " + name);
            } else if (expected.size() != length || !expected.etag().equals(etag)
                    || (content != null && !content.startsWith(expected.etag() + " " + expected.size() + " "))) {
                failures.add(op + " " + key + " from " + history.micros(started) + " us to " + history.micros(ended) + " us: "
                        + name + " was PUT as " + expected.etag() + " " + expected.size() + " bytes, but the answer says ETag "
                        + etag + ", Content-Length " + length + (content == null ? "" : ", and its body is " + content));
            }
        } catch (S3Exception e) {
            long ended = System.nanoTime();
            boolean noSuchKey = e.statusCode() == 404 && (head || "NoSuchKey".equals(e.awsErrorDetails().errorCode()));
            if (noSuchKey) {
                history.add(new History.Read(op, key, null, started, ended));
            } else {
                failures.add(op + " " + key + " from " + history.micros(started) + " us failed: " + e);
            }
        } catch (SdkException e) {
            failures.add(op + " " + key + " from " + history.micros(started) + " us failed: " + e);
        }
    }
}
