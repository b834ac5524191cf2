package io.hayloft.directory;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.client.DirectoryClient;
import io.hayloft.client.NamespaceClient;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.format.s3.Listing;
import io.hayloft.format.s3.ObjectRecord;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link NamespaceClient#list} on a real directory against a model (a sorted set in UTF-8 byte order
 * and the listing rules written out plainly), over random prefixes, delimiters, start points and page
 * sizes, on keys of unicode, spaces, '+', '%', runs of '/' and keys that share a prefix with the
 * delimiter: single pages, and whole listings followed page by page from {@code next}.
 */
class NamespaceListTest {
    private static final String[] TOKENS = {"a", "b", "ab", "/", "//", " ", "+", "%", "%2F", "é", "日本", "😀", "~", "\u007f",
        "z", "a/", ".", "-", "aa", "/a"};
    private static final String[] DELIMITERS = {null, "", "/", "//", "a", "é", "+", "😀", "/a", "ab", "%"};
    private static final Comparator<String> UTF8 = (x, y) -> Arrays.compareUnsigned(x.getBytes(StandardCharsets.UTF_8),
            y.getBytes(StandardCharsets.UTF_8));

    @TempDir
    Path dir;

    /** The page the rules give, from the model. */
    record Page(List<String> objects, List<String> prefixes, boolean truncated, String next) {
    }

    static Page model(TreeSet<String> keys, String prefix, String delimiter, String after, int max) {
        List<String> objects = new ArrayList<>();
        List<String> prefixes = new ArrayList<>();
        if (max == 0) {
            return new Page(objects, prefixes, false, null); // nothing asked, nothing more to say
        }
        String p = prefix == null ? "" : prefix;
        String last = null;
        for (String key : keys) {
            if (!key.startsWith(p) || after != null && UTF8.compare(key, after) <= 0) {
                continue;
            }
            int d = delimiter == null || delimiter.isEmpty() ? -1 : key.indexOf(delimiter, p.length());
            String item = d < 0 ? key : key.substring(0, d + delimiter.length());
            if (d >= 0 && (after != null && UTF8.compare(item, after) <= 0 || item.equals(last))) {
                continue;
            }
            if (objects.size() + prefixes.size() == max) {
                return new Page(objects, prefixes, true, last);
            }
            (d < 0 ? objects : prefixes).add(item);
            last = item;
        }
        return new Page(objects, prefixes, false, null);
    }

    static Page page(Listing l) {
        return new Page(l.objects().stream().map(ObjectRecord::key).toList(), l.commonPrefixes(), l.truncated(), l.next());
    }

    @Test
    void listingsMatchTheModel() throws Exception {
        DirectoryConfig c = new DirectoryConfig();
        c.dataDir = dir.resolve("directory").toString();
        c.port = 0;
        c.init = true;
        c.probeIntervalMillis = 60_000;
        long seed = Long.getLong("hayloft.seed", System.nanoTime());
        Random random = new Random(seed);
        try (DirectoryServer server = DirectoryServer.start(c)) {
            NamespaceClient ns = new NamespaceClient(new DirectoryClient(HttpTransport.create(), List.of(server.address()), null));
            ns.createBucket("list-a", null).join();
            ns.createBucket("list-a0", null).join(); // a bucket whose name extends the other's: never listed with it
            ns.putObject(NamespaceTest.object("list-a0", "a", "e", List.of()), null, NamespaceClient.Condition.NONE).join();
            TreeSet<String> keys = new TreeSet<>(UTF8);
            while (keys.size() < 160) {
                StringBuilder k = new StringBuilder();
                int n = 1 + random.nextInt(5);
                for (int i = 0; i < n; i++) {
                    k.append(TOKENS[random.nextInt(TOKENS.length)]);
                }
                if (keys.add(k.toString())) {
                    ns.putObject(NamespaceTest.object("list-a", k.toString(), "e", List.of()), null, NamespaceClient.Condition.NONE).join();
                }
            }
            List<String> all = new ArrayList<>(keys);
            for (int q = 0; q < 400; q++) {
                String prefix = pick(random, all);
                String delimiter = DELIMITERS[random.nextInt(DELIMITERS.length)];
                String after = random.nextInt(3) == 0 ? null : pick(random, all);
                int max = random.nextInt(10) == 0 ? 1000 : random.nextInt(9);
                Page expected = model(keys, prefix, delimiter, after, max);
                Page got = page(ns.list("list-a", prefix, delimiter, after, max).join());
                assertThat(got).as("seed %d: prefix '%s' delimiter '%s' after '%s' max %d", seed, prefix, delimiter, after, max)
                        .isEqualTo(expected);
            }
            // Whole listings, page by page: every key or prefix once, in order, as one big page gives them.
            for (int q = 0; q < 40; q++) {
                String prefix = pick(random, all);
                String delimiter = DELIMITERS[random.nextInt(DELIMITERS.length)];
                int max = 1 + random.nextInt(7);
                Page whole = model(keys, prefix, delimiter, null, Integer.MAX_VALUE);
                List<String> objects = new ArrayList<>();
                List<String> prefixes = new ArrayList<>();
                String after = null;
                for (int pages = 0; ; pages++) {
                    assertThat(pages).as("seed %d: pages", seed).isLessThan(keys.size() + 1);
                    Listing l = ns.list("list-a", prefix, delimiter, after, max).join();
                    assertThat(l.objects().size() + l.commonPrefixes().size()).isLessThanOrEqualTo(max);
                    l.objects().forEach(o -> objects.add(o.key()));
                    prefixes.addAll(l.commonPrefixes());
                    if (!l.truncated()) {
                        break;
                    }
                    after = l.next();
                }
                assertThat(new Page(objects, prefixes, false, null)).as("seed %d: prefix '%s' delimiter '%s' by %d", seed, prefix,
                        delimiter, max).isEqualTo(whole);
            }
            assertThat(ns.list("list-a0", null, null, null, 10).join().objects()).extracting(ObjectRecord::key).containsExactly("a");
        }
    }

    /** A prefix to list: none, a random key cut short (by code points), or a token. */
    private static String pick(Random random, List<String> keys) {
        switch (random.nextInt(4)) {
            case 0:
                return null;
            case 1:
                return TOKENS[random.nextInt(TOKENS.length)];
            default:
                String k = keys.get(random.nextInt(keys.size()));
                int[] cps = k.codePoints().toArray();
                return new String(cps, 0, random.nextInt(cps.length + 1));
        }
    }
}
