package io.hayloft.s3.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.directory.meta.NamespaceStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import software.amazon.awssdk.core.sync.RequestBody;

/**
 * 4,000 keys (uploaded by 16 threads) in a tree of prefixes, listed by prefix and delimiter through
 * continuation tokens and markers, every page checked against the {@link ListingModel}: the common
 * prefixes, no duplicates, S3's byte order, max-keys.
 *
 * <p>The number of keys (it was 10,000) is chosen to cross what a listing crosses: a whole listing
 * goes through S3's 1,000-key page, which is also the directory's own page
 * ({@link NamespaceStore#MAX_PAGE}), three times, its last page exactly full (not truncated, with no
 * key after it), and through pages of 777 with a last one partly full; a listing after a start key
 * crosses a page too; and one common prefix ({@code photos/}, 1,143 keys) rolls up more keys than a
 * directory page, so the delimiter listings must seek past it, not count it against the page. The
 * listings under a prefix take smaller max-keys than they did with 10,000 keys (230, 15, 120), so they
 * still run to several pages.
 */
@Tag("slow")
class ManyKeysTest {
    @RegisterExtension
    static final SdkCluster S3 = new SdkCluster();

    private static final int KEYS = 4_000;
    private static final int PAGE = 1000;
    private static String bucket;
    private static ListingModel model;

    /** Key {@code i}: three levels of directories of uneven fan-out, some names sharing prefixes, some unicode. */
    static String key(int i) {
        String top = switch (i % 7) {
            case 0 -> "logs";
            case 1 -> "logs-old";
            case 2 -> "photos";
            case 3 -> "photos/raw";
            case 4 -> "données";
            case 5 -> "z";
            default -> "a b";
        };
        return top + "/" + (i % 13) + "/" + (i % 101 == 0 ? "deep/" : "") + "item-" + i;
    }

    @BeforeAll
    static void upload() throws Exception {
        bucket = S3.bucket("tenk");
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < KEYS; i++) {
            keys.add(key(i));
        }
        long start = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 16; t++) {
                int first = t;
                done.add(pool.submit(() -> {
                    for (int i = first; i < KEYS; i += 16) {
                        String k = keys.get(i);
                        // Empty objects: no needle to write, only the namespace changes (what listing is about).
                        S3.s3().putObject(b -> b.bucket(bucket).key(k), RequestBody.empty());
                    }
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        System.out.printf("ManyKeysTest: %d PUTs by 16 threads in %d ms%n", KEYS, (System.nanoTime() - start) / 1_000_000);
        model = new ListingModel(keys);
    }

    @Test
    void theSizeCrossesThePages() {
        assertThat(NamespaceStore.MAX_PAGE).as("the directory's page, S3's").isEqualTo(PAGE);
        assertThat(KEYS % PAGE).as("a whole listing's last page exactly full").isZero();
        assertThat(model.expected("photos/", null, null)).as("keys under one common prefix").hasSizeGreaterThan(PAGE);
        assertThat(model.expected(null, null, "logs/5/item-9")).as("keys after the start key").hasSizeGreaterThan(PAGE);
    }

    @Test
    void everyKeyListedOnceInOrderThroughContinuationTokens() {
        long start = System.nanoTime();
        assertThat(model.checkV2(S3.s3(), bucket, null, null, null, PAGE, false)).isEqualTo(KEYS / PAGE);
        assertThat(model.checkV2(S3.s3(), bucket, null, null, null, 777, true)).isEqualTo((KEYS + 776) / 777);
        assertThat(model.checkV2(S3.s3(), bucket, null, null, "logs/5/item-9", PAGE, false))
                .isEqualTo((model.expected(null, null, "logs/5/item-9").size() + PAGE - 1) / PAGE);
        System.out.printf("ManyKeysTest: full listings in %d ms%n", (System.nanoTime() - start) / 1_000_000);
    }

    @Test
    void prefixesAndDelimitersThroughContinuationTokens() {
        assertThat(model.expected(null, "/", null)).containsExactly("a b/", "données/", "logs-old/", "logs/", "photos/", "z/");
        model.checkV2(S3.s3(), bucket, null, "/", null, 2, false);
        model.checkV2(S3.s3(), bucket, "photos/", "/", null, 5, false);
        model.checkV2(S3.s3(), bucket, "photos", "/", null, 1000, false);
        model.checkV2(S3.s3(), bucket, "logs", null, null, 230, false);
        model.checkV2(S3.s3(), bucket, "logs/1", "/", null, 3, true);
        model.checkV2(S3.s3(), bucket, "données/7/", "/", null, 15, true);
        model.checkV2(S3.s3(), bucket, "z/", "/", "z/3", 4, false);
        model.checkV2(S3.s3(), bucket, "a b/", "-", null, 100, true);
    }

    @Test
    void markersOfListObjectsV1() {
        assertThat(model.checkV1(S3.s3(), bucket, null, null, PAGE, false)).isEqualTo(KEYS / PAGE);
        model.checkV1(S3.s3(), bucket, "photos/", "/", 4, false);
        model.checkV1(S3.s3(), bucket, "logs-old/", null, 120, true);
    }
}
