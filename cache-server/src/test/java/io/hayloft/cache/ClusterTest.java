package io.hayloft.cache;

import static io.hayloft.cache.CacheFixture.get;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.ring.CacheRouting;
import java.net.ConnectException;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An in-process cluster: one store, primary cache nodes on a consistent-hash ring and a gutter
 * node, read the way a client reads the places it computes from its volume map (primary, then gutter
 * on failure).
 */
class ClusterTest extends CacheFixtureTest {
    static final long COOKIE = 0x5555aaaa5555aaaaL;
    static final int KEYS = 400;

    final Map<String, CacheServer> byAddress = new HashMap<>();

    @BeforeEach
    void putKeys() throws Exception {
        for (long k = 1; k <= KEYS; k++) {
            f.put(k, 0, COOKIE, 256);
        }
    }

    private CacheServer node(Map<String, String> o) throws Exception {
        CacheServer c = f.cache(o);
        byAddress.put(c.address(), c);
        return c;
    }

    /** Reads every key through {@code routing}, falling back to the gutter node when the primary refuses. */
    private Map<String, Integer> readAll(CacheRouting routing) throws Exception {
        Map<String, Integer> sources = new HashMap<>();
        for (long k = 1; k <= KEYS; k++) {
            HttpResponse<byte[]> r = null;
            for (String prefix : routing.urlPrefixes(k, f.storeAddress())) {
                try {
                    r = get(prefix + "/" + CacheFixture.VOLUME + "/" + k + "/0?cookie=" + String.format("%016x", COOKIE));
                    break;
                } catch (ConnectException e) {
                    // this cache node is down: next in line
                }
            }
            assertThat(r).as("key %d served", k).isNotNull();
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).hasSize(256);
            sources.merge(r.headers().firstValue(CacheHttpHandler.SOURCE_HEADER).orElseThrow(), 1, Integer::sum);
        }
        return sources;
    }

    @Test
    void addingOrRemovingANodeMovesOnlyItsShareAndADeadNodesKeysGoToTheGutter() throws Exception {
        List<String> primaries = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            primaries.add(node(Map.of()).address());
        }
        CacheServer gutter = node(Map.of("role", "gutter", "gutterTtlMillis", "60000"));
        CacheRouting three = new CacheRouting(primaries, List.of(gutter.address()));
        long reads0 = f.storeReads();
        assertThat(readAll(three)).isEqualTo(Map.of("miss", KEYS));
        assertThat(readAll(three)).isEqualTo(Map.of("hit", KEYS));
        assertThat(f.storeReads() - reads0).isEqualTo(KEYS);

        // Add a fourth node: only the keys it now owns miss, once each.
        String added = node(Map.of()).address();
        List<String> four = new ArrayList<>(primaries);
        four.add(added);
        CacheRouting withFour = new CacheRouting(four, List.of(gutter.address()));
        int moved = 0;
        for (long k = 1; k <= KEYS; k++) {
            if (!three.nodeFor(k).equals(withFour.nodeFor(k))) {
                assertThat(withFour.nodeFor(k)).isEqualTo(added);
                moved++;
            }
        }
        long reads1 = f.storeReads();
        Map<String, Integer> afterAdd = readAll(withFour);
        assertThat(afterAdd.getOrDefault("miss", 0)).isEqualTo(moved);
        assertThat(f.storeReads() - reads1).isEqualTo(moved);
        assertThat((double) moved / KEYS).as("share moved to the new node").isBetween(0.10, 0.40);
        System.out.printf("cache ring: adding a 4th node moved %d of %d keys (%.1f%%, ideal 25%%)%n", moved, KEYS,
                100.0 * moved / KEYS);

        // Remove it again: its keys go back to nodes that still hold them; no store read at all.
        long reads2 = f.storeReads();
        assertThat(readAll(three)).isEqualTo(Map.of("hit", KEYS));
        assertThat(f.storeReads() - reads2).isZero();

        // Kill a primary: its keys are served through the gutter node (one fill each), the rest are hits.
        String victim = primaries.get(1);
        byAddress.get(victim).close();
        int victimKeys = 0;
        for (long k = 1; k <= KEYS; k++) {
            victimKeys += three.nodeFor(k).equals(victim) ? 1 : 0;
        }
        long reads3 = f.storeReads();
        Map<String, Integer> afterKill = readAll(three);
        assertThat(afterKill.getOrDefault("miss", 0)).isEqualTo(victimKeys);
        assertThat(afterKill.get("hit")).isEqualTo(KEYS - victimKeys);
        assertThat(f.storeReads() - reads3).isEqualTo(victimKeys);
        assertThat(gutter.cache().stats().snapshot().get("stored")).isEqualTo((long) victimKeys);
        // Second pass: the gutter serves them from memory.
        assertThat(readAll(three)).isEqualTo(Map.of("hit", KEYS));
        assertThat(f.storeReads() - reads3).isEqualTo(victimKeys);
    }
}
