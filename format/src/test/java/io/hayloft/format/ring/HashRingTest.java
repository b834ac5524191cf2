package io.hayloft.format.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class HashRingTest {
    private static final int KEYS = 200_000;

    @Test
    void mappingIsFixedAndIndependentOfNodeOrder() {
        HashRing a = new HashRing(List.of("c1:8090", "c2:8090", "c3:8090"));
        HashRing b = new HashRing(List.of("c3:8090", "c1:8090", "c2:8090"));
        for (long k = 0; k < 10_000; k++) {
            assertThat(a.nodeFor(k)).isEqualTo(b.nodeFor(k));
        }
        // Golden values: the mapping is part of the wire contract (client and directory must agree).
        assertThat(HashRing.mix64(0)).isEqualTo(0L);
        assertThat(HashRing.mix64(1)).isEqualTo(0xb456bcfc34c2cb2cL);
        assertThat(HashRing.fnv1a64("")).isEqualTo(0xcbf29ce484222325L);
        assertThat(HashRing.fnv1a64("a")).isEqualTo(0xaf63dc4c8601ec8cL);
    }

    @Test
    void keysSpreadEvenly() {
        HashRing r = new HashRing(List.of("a", "b", "c", "d", "e"));
        Map<String, Integer> counts = count(r);
        for (int c : counts.values()) {
            assertThat((double) c / KEYS).isBetween(0.2 * 0.8, 0.2 * 1.2);
        }
    }

    @Test
    void addingANodeMovesOnlyItsShareAndOnlyToIt() {
        HashRing before = new HashRing(List.of("a", "b", "c", "d"));
        HashRing after = before.with("e");
        int moved = 0;
        for (long k = 0; k < KEYS; k++) {
            String x = before.nodeFor(k);
            String y = after.nodeFor(k);
            if (!x.equals(y)) {
                assertThat(y).as("key %d moved from %s to %s", k, x, y).isEqualTo("e");
                moved++;
            }
        }
        assertThat((double) moved / KEYS).isBetween(0.2 * 0.8, 0.2 * 1.2);
        assertThat(moved).isEqualTo(count(after).get("e"));
    }

    @Test
    void removingANodeMovesOnlyItsKeys() {
        HashRing before = new HashRing(List.of("a", "b", "c", "d", "e"));
        HashRing after = before.without("c");
        int moved = 0;
        for (long k = 0; k < KEYS; k++) {
            String x = before.nodeFor(k);
            String y = after.nodeFor(k);
            if (!x.equals(y)) {
                assertThat(x).as("key %d moved from %s", k, x).isEqualTo("c");
                moved++;
            } else {
                assertThat(x).isNotEqualTo("c");
            }
        }
        assertThat(moved).isEqualTo(count(before).get("c"));
    }

    @Test
    void successorsAreDistinctAndStartWithTheOwner() {
        HashRing r = new HashRing(List.of("a", "b", "c"));
        for (long k = 0; k < 1000; k++) {
            List<String> s = r.nodesFor(k, 5);
            assertThat(s).hasSize(3).doesNotHaveDuplicates();
            assertThat(s.get(0)).isEqualTo(r.nodeFor(k));
            // The successor is where the key goes when its owner is removed.
            assertThat(r.without(s.get(0)).nodeFor(k)).isEqualTo(s.get(1));
        }
    }

    @Test
    void badArgumentsAreNamed() {
        assertThatThrownBy(() -> new HashRing(List.of())).hasMessageContaining("at least one node");
        assertThatThrownBy(() -> new HashRing(List.of("a", "a"))).hasMessageContaining("'a' is listed twice");
        assertThatThrownBy(() -> new HashRing(List.of("a", " "))).hasMessageContaining("non-blank");
        assertThatThrownBy(() -> new HashRing(List.of("a"), 0)).hasMessageContaining("got 0");
        assertThatThrownBy(() -> new HashRing(List.of("a")).without("b")).hasMessageContaining("'b' is not in the ring");
        assertThatThrownBy(() -> new HashRing(List.of("a")).nodesFor(1, 0)).hasMessageContaining("got 0");
    }

    private static Map<String, Integer> count(HashRing r) {
        Map<String, Integer> m = new HashMap<>();
        for (long k = 0; k < KEYS; k++) {
            m.merge(r.nodeFor(k), 1, Integer::sum);
        }
        return m;
    }
}
