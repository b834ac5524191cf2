package io.hayloft.s3.sdk;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.CommonPrefix;
import software.amazon.awssdk.services.s3.model.EncodingType;
import software.amazon.awssdk.services.s3.model.ListObjectsResponse;
import software.amazon.awssdk.services.s3.model.ListObjectsV2Response;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * What S3 lists, computed from a model of the bucket's keys (a TreeSet in UTF-8 byte order, S3's
 * order), and the checks of ListObjectsV2 and ListObjects pages against it: the concatenation of the
 * pages is the model's listing (keys and common prefixes in order, no duplicates), each page at most
 * max-keys entries, every page but the last truncated. Not thread-safe.
 */
public final class ListingModel {
    /** S3's key order: the keys' UTF-8 bytes, unsigned. */
    public static final Comparator<String> BYTE_ORDER = (a, b) -> Arrays.compareUnsigned(
            a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));

    private final TreeSet<String> keys = new TreeSet<>(BYTE_ORDER);

    public ListingModel(Collection<String> keys) {
        this.keys.addAll(keys);
    }

    /**
     * The listing S3 answers: keys after {@code startAfter} (null: all) under {@code prefix}, those with
     * {@code delimiter} after the prefix rolled up into their common prefix ({@code "P/"} entries), in order.
     */
    public List<String> expected(String prefix, String delimiter, String startAfter) {
        List<String> out = new ArrayList<>();
        String p = prefix == null ? "" : prefix;
        for (String k : keys) {
            if (!k.startsWith(p) || (startAfter != null && BYTE_ORDER.compare(k, startAfter) <= 0)) {
                continue;
            }
            String entry = k;
            if (delimiter != null && !delimiter.isEmpty()) {
                int d = k.indexOf(delimiter, p.length());
                if (d >= 0) {
                    entry = k.substring(0, d + delimiter.length());
                }
            }
            if (out.isEmpty() || !out.get(out.size() - 1).equals(entry)) {
                out.add(entry);
            }
        }
        return out;
    }

    /** One page: its keys, its common prefixes, whether it is truncated. */
    record Page(List<String> keys, List<String> prefixes, boolean truncated) {
    }

    /** Lists with ListObjectsV2 through every continuation token and checks the pages; returns the page count. */
    public int checkV2(S3Client s3, String bucket, String prefix, String delimiter, String startAfter, int maxKeys, boolean url) {
        List<Page> pages = new ArrayList<>();
        String token = null;
        do {
            String t = token;
            ListObjectsV2Response r = s3.listObjectsV2(b -> b.bucket(bucket).prefix(prefix).delimiter(delimiter)
                    .startAfter(startAfter).maxKeys(maxKeys).continuationToken(t).encodingType(url ? EncodingType.URL : null));
            assertThat(r.maxKeys()).isEqualTo(maxKeys);
            assertThat(r.keyCount()).as("KeyCount counts keys and common prefixes").isEqualTo(r.contents().size() + r.commonPrefixes().size());
            pages.add(page(r.contents(), r.commonPrefixes(), r.isTruncated()));
            token = r.isTruncated() ? r.nextContinuationToken() : null;
            assertThat(!r.isTruncated() || token != null).as("a truncated page has a continuation token").isTrue();
            assertThat(pages.size()).as("pages of %s/%s", prefix, delimiter).isLessThan(100_000);
        } while (token != null);
        check(pages, expected(prefix, delimiter, startAfter), maxKeys);
        return pages.size();
    }

    /** Lists with ListObjects (v1) through every marker and checks the pages; returns the page count. */
    public int checkV1(S3Client s3, String bucket, String prefix, String delimiter, int maxKeys, boolean url) {
        List<Page> pages = new ArrayList<>();
        String marker = null;
        do {
            String m = marker;
            ListObjectsResponse r = s3.listObjects(b -> b.bucket(bucket).prefix(prefix).delimiter(delimiter).maxKeys(maxKeys)
                    .marker(m).encodingType(url ? EncodingType.URL : null));
            Page p = page(r.contents(), r.commonPrefixes(), r.isTruncated());
            pages.add(p);
            marker = null;
            if (r.isTruncated()) {
                // S3 sends NextMarker only with a delimiter; without, the last key is the marker.
                if (delimiter != null) {
                    assertThat(r.nextMarker()).as("NextMarker of a truncated page with a delimiter").isNotNull();
                    marker = r.nextMarker();
                } else {
                    marker = r.nextMarker() != null ? r.nextMarker() : p.keys().get(p.keys().size() - 1);
                }
            }
        } while (marker != null);
        check(pages, expected(prefix, delimiter, null), maxKeys);
        return pages.size();
    }

    private static Page page(List<S3Object> contents, List<CommonPrefix> prefixes, boolean truncated) {
        return new Page(map(contents, S3Object::key), map(prefixes, CommonPrefix::prefix), truncated);
    }

    private static <T> List<String> map(List<T> l, Function<T, String> f) {
        return l.stream().map(f).toList();
    }

    private static void check(List<Page> pages, List<String> expected, int maxKeys) {
        List<String> all = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < pages.size(); i++) {
            Page p = pages.get(i);
            assertThat(p.keys()).as("keys of page %d in byte order", i).isSortedAccordingTo(BYTE_ORDER);
            assertThat(p.prefixes()).as("common prefixes of page %d in byte order", i).isSortedAccordingTo(BYTE_ORDER);
            assertThat(p.keys().size() + p.prefixes().size()).as("entries of page %d", i).isLessThanOrEqualTo(maxKeys);
            assertThat(p.truncated()).as("page %d of %d truncated", i, pages.size()).isEqualTo(i < pages.size() - 1);
            List<String> entries = new ArrayList<>(p.keys());
            entries.addAll(p.prefixes());
            entries.sort(BYTE_ORDER);
            for (String e : entries) {
                assertThat(seen.add(e)).as("%s listed twice (page %d)", e, i).isTrue();
            }
            all.addAll(entries);
        }
        assertThat(all).isEqualTo(expected);
    }
}
