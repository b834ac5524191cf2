package io.hayloft.cli.s3;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;

/**
 * Threads that PUT, overwrite and delete objects through the AWS SDK v2 while a test kills servers, and
 * the model the test checks the gateway against afterwards: what each key may hold. Each thread writes
 * keys of its own (a prefix per thread, some keys in non-ASCII UTF-8), so the operations on one key are
 * sequential. A key's model is the set of its possible states: after an acknowledged write (a PUT
 * answered 200, a DELETE answered 204) exactly that write; after a failed one (an error answer, a
 * connection closed by a killed server) that write or the state before it, since the change may or may
 * not have been committed. A key whose operation failed is never written again, so a failed write is
 * always its key's last and cannot be committed behind a later one. Bodies are kept as a seed and a
 * size and regenerated for the check.
 *
 * <p>Thread-safe: {@link #start} once, the counters from any thread, {@link #model} and {@link #check}
 * after {@link #stop}.
 */
final class S3Writers {
    /** Keys made new by thread {@code %1$d}, its {@code %2$d}-th: plain and non-ASCII ones, a space, a character outside the BMP. */
    private static final String[] KEY_FORMS = {"w%d/plain-%d", "w%d/ünïcödé-%d", "w%d/日本語/写真-%d.jpg", "w%d/ключ %d 😀"};

    /** A body: {@code size} bytes of {@code new Random(seed)}, or {@link #ABSENT}, the state of a key without an object. */
    record Body(long seed, int size) {
        static final Body ABSENT = new Body(0, -1);

        byte[] bytes() {
            byte[] b = new byte[size];
            new Random(seed).nextBytes(b);
            return b;
        }

        @Override
        public String toString() {
            return size < 0 ? "absent" : size + " bytes of seed " + seed;
        }
    }

    private final S3Client s3;
    private final String bucket;
    private final int[] sizes;
    private final AtomicBoolean stopped = new AtomicBoolean();
    private final AtomicLong acknowledgedPuts = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final Map<String, Set<Body>> model = new ConcurrentHashMap<>();
    private final List<CompletableFuture<Void>> threads = new ArrayList<>();
    private volatile String firstFailure;

    /** Writers of objects of {@code sizes} (each drawn with the same chance) into {@code bucket}, which must exist. */
    S3Writers(S3Client s3, String bucket, int... sizes) {
        this.s3 = s3;
        this.bucket = bucket;
        this.sizes = sizes.clone();
    }

    /** Starts {@code count} writers on {@code executor}, each with its own random sequence from {@code seed}. */
    void start(int count, long seed, ExecutorService executor) {
        for (int t = 0; t < count; t++) {
            int thread = t;
            threads.add(CompletableFuture.runAsync(() -> write(thread, new Random(seed + thread)), executor));
        }
    }

    /** PUTs answered 200 so far (new keys and overwrites). */
    long acknowledgedPuts() {
        return acknowledgedPuts.get();
    }

    /** Fails the caller's wait if a writer ended with an exception that is not the SDK's (a fault of the test). */
    void rethrowIfBroken() {
        for (CompletableFuture<Void> f : threads) {
            if (f.isCompletedExceptionally()) {
                f.join();
            }
        }
    }

    /** Stops the writers after their current operation and waits up to {@code seconds} for them. */
    void stop(long seconds) throws Exception {
        stopped.set(true);
        CompletableFuture.allOf(threads.toArray(CompletableFuture[]::new)).get(seconds, TimeUnit.SECONDS);
    }

    /** Stops the writers without waiting (after a failure). */
    void abandon() {
        stopped.set(true);
    }

    /** Operations that failed, and the first one's error, for the test's log. */
    String failures() {
        return failed.get() + " failed" + (firstFailure == null ? "" : ", the first: " + firstFailure);
    }

    /** Every key written, in order, with its possible states. */
    Map<String, Set<Body>> model() {
        return new TreeMap<>(model);
    }

    /** 70% new keys, 20% overwrites of a key whose last operation was acknowledged, 10% deletes of one. */
    private void write(int thread, Random random) {
        Map<String, Body> acknowledged = new HashMap<>();
        List<String> settled = new ArrayList<>();
        for (int n = 0; !stopped.get() && !Thread.currentThread().isInterrupted(); n++) {
            int dice = random.nextInt(10);
            String key;
            Body next;
            if (dice < 7 || settled.isEmpty()) {
                key = String.format(KEY_FORMS[n % KEY_FORMS.length], thread, n);
                next = new Body(random.nextLong(), sizes[random.nextInt(sizes.length)]);
            } else {
                key = settled.get(random.nextInt(settled.size()));
                next = dice < 9 ? new Body(random.nextLong(), sizes[random.nextInt(sizes.length)]) : Body.ABSENT;
            }
            Body before = acknowledged.getOrDefault(key, Body.ABSENT);
            try {
                if (next == Body.ABSENT) {
                    s3.deleteObject(b -> b.bucket(bucket).key(key));
                } else {
                    s3.putObject(b -> b.bucket(bucket).key(key), RequestBody.fromBytes(next.bytes()));
                }
            } catch (SdkException e) {
                model.put(key, Set.copyOf(Arrays.asList(before, next))); // committed or not: never written again
                acknowledged.remove(key);
                settled.remove(key);
                if (failed.getAndIncrement() == 0) {
                    firstFailure = key + ": " + e;
                }
                continue;
            }
            model.put(key, Set.of(next));
            if (acknowledged.put(key, next) == null) {
                settled.add(key);
            }
            if (next != Body.ABSENT) {
                acknowledgedPuts.incrementAndGet();
            }
        }
    }

    /**
     * Reads every key of the model through {@code reader}: an object must be byte-exact one of the
     * key's possible bodies, a 404 only for a key that may be absent. Returns the number of keys read.
     */
    int check(S3Client reader) {
        Map<String, Set<Body>> all = model();
        for (Map.Entry<String, Set<Body>> e : all.entrySet()) {
            String key = e.getKey();
            Set<Body> possible = e.getValue();
            byte[] got;
            try {
                got = reader.getObjectAsBytes(b -> b.bucket(bucket).key(key)).asByteArray();
            } catch (NoSuchKeyException absent) {
                assertThat(possible).as("key %s answered 404 NoSuchKey, but the model holds %s", key, possible).contains(Body.ABSENT);
                continue;
            } catch (SdkException error) {
                throw new AssertionError("GET of key " + key + " failed; the model holds " + possible, error);
            }
            assertThat(possible.stream().filter(b -> b.size() == got.length && Arrays.equals(b.bytes(), got)))
                    .as("key %s read back %d bytes, equal to none the model holds: %s", key, got.length, possible).isNotEmpty();
        }
        return all.size();
    }
}
