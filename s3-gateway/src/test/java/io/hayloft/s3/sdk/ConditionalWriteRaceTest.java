package io.hayloft.s3.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * Conditional writes raced: 16 writers released together (a latch) put the same key with
 * {@code If-None-Match: *}, then with {@code If-Match} naming the current ETag; exactly one wins (200),
 * the others get 412 PreconditionFailed (or 409 ConditionalRequestConflict, which S3 also answers to a
 * race), and the object holds the winner's bytes. The same on CompleteMultipartUpload.
 */
class ConditionalWriteRaceTest {
    @RegisterExtension
    static final SdkCluster S3 = new SdkCluster();

    private static final int WRITERS = 16;
    private static String bucket;

    @BeforeAll
    static void bucket() {
        bucket = S3.bucket("race");
    }

    /** Runs the writers together; returns per writer its ETag (it won) or its S3 error status. */
    private static List<Object> race(List<Callable<String>> writers) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(writers.size());
        try {
            CountDownLatch ready = new CountDownLatch(writers.size());
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Object>> results = new ArrayList<>();
            for (Callable<String> w : writers) {
                results.add(pool.submit(() -> {
                    ready.countDown();
                    go.await();
                    try {
                        return w.call();
                    } catch (S3Exception e) {
                        assertThat(e.statusCode()).as("a loser's answer: %s", e.getMessage()).isIn(412, 409);
                        assertThat(e.awsErrorDetails().errorCode()).isEqualTo(e.statusCode() == 412
                                ? "PreconditionFailed" : "ConditionalRequestConflict");
                        return e.statusCode();
                    }
                }));
            }
            ready.await();
            go.countDown();
            List<Object> out = new ArrayList<>();
            for (Future<Object> f : results) {
                out.add(f.get());
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    private static int winner(List<Object> results) {
        List<Integer> winners = new ArrayList<>();
        for (int i = 0; i < results.size(); i++) {
            if (results.get(i) instanceof String) {
                winners.add(i);
            }
        }
        assertThat(winners).as("writers that got 200: %s", results).hasSize(1);
        return winners.get(0);
    }

    @Test
    void ifNoneMatchStarCreatesOnce() throws Exception {
        for (int round = 0; round < 3; round++) {
            String key = "create-once/" + round;
            List<byte[]> bodies = new ArrayList<>();
            List<Callable<String>> writers = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                byte[] body = Digests.bytes(1000 + round * 100 + w, 1000 + w * 37 + (w % 2) * SdkCluster.CHUNK);
                bodies.add(body);
                writers.add(() -> S3.s3().putObject(b -> b.bucket(bucket).key(key).ifNoneMatch("*"), RequestBody.fromBytes(body)).eTag());
            }
            List<Object> results = race(writers);
            int win = winner(results);
            assertThat(results.get(win)).isEqualTo(Digests.etag(bodies.get(win)));
            assertThat(S3.s3().getObjectAsBytes(b -> b.bucket(bucket).key(key)).asByteArray()).isEqualTo(bodies.get(win));
            // Once it exists, If-None-Match: * always fails.
            S3Errors.expect(() -> S3.s3().putObject(b -> b.bucket(bucket).key(key).ifNoneMatch("*"), RequestBody.fromString("late")),
                    "PreconditionFailed", 412);
        }
    }

    @Test
    void ifMatchReplacesOnce() throws Exception {
        String key = "replace-once";
        byte[] first = Digests.bytes(2000, 5000);
        String etag = S3.s3().putObject(b -> b.bucket(bucket).key(key), RequestBody.fromBytes(first)).eTag();
        for (int round = 0; round < 3; round++) {
            String current = etag;
            List<byte[]> bodies = new ArrayList<>();
            List<Callable<String>> writers = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                byte[] body = Digests.bytes(3000 + round * 100 + w, 2000 + w);
                bodies.add(body);
                writers.add(() -> S3.s3().putObject(b -> b.bucket(bucket).key(key).ifMatch(current), RequestBody.fromBytes(body)).eTag());
            }
            List<Object> results = race(writers);
            int win = winner(results);
            assertThat(S3.s3().getObjectAsBytes(b -> b.bucket(bucket).key(key)).asByteArray()).isEqualTo(bodies.get(win));
            etag = (String) results.get(win);
            assertThat(etag).isEqualTo(Digests.etag(bodies.get(win)));
        }
        String stale = Digests.etag(first);
        S3Errors.expect(() -> S3.s3().putObject(b -> b.bucket(bucket).key(key).ifMatch(stale), RequestBody.fromString("x")),
                "PreconditionFailed", 412);
        S3Errors.expect(() -> S3.s3().putObject(b -> b.bucket(bucket).key("never-was").ifMatch(stale), RequestBody.fromString("x")),
                "NoSuchKey", 404);
    }

    @Test
    void completeMultipartUploadWithIfNoneMatchStarCompletesOnce() throws Exception {
        String key = "multipart-once";
        int n = 4;
        List<String> ids = new ArrayList<>();
        List<byte[]> bodies = new ArrayList<>();
        List<Callable<String>> writers = new ArrayList<>();
        for (int w = 0; w < n; w++) {
            byte[] body = Digests.bytes(4000 + w, 1000 + w);
            String id = S3.s3().createMultipartUpload(b -> b.bucket(bucket).key(key)).uploadId();
            String partEtag = S3.s3().uploadPart(b -> b.bucket(bucket).key(key).uploadId(id).partNumber(1),
                    RequestBody.fromBytes(body)).eTag();
            ids.add(id);
            bodies.add(body);
            writers.add(() -> S3.s3().completeMultipartUpload(b -> b.bucket(bucket).key(key).uploadId(id).ifNoneMatch("*")
                    .multipartUpload(m -> m.parts(CompletedPart.builder().partNumber(1).eTag(partEtag).build()))).eTag());
        }
        List<Object> results = race(writers);
        int win = winner(results);
        assertThat(results.get(win)).isEqualTo(Digests.multipartEtag(List.of(bodies.get(win))));
        assertThat(S3.s3().getObjectAsBytes(b -> b.bucket(bucket).key(key)).asByteArray()).isEqualTo(bodies.get(win));
    }
}
