package io.hayloft.format.ring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class CacheRoutingTest {
    @Test
    void primaryThenGutterUrlsNameTheStore() {
        CacheRouting r = new CacheRouting(List.of("c1:8090", "c2:8090"), List.of("g1:8090"));
        for (long k = 0; k < 100; k++) {
            List<String> urls = r.urlPrefixes(k, "s1:8080");
            assertThat(urls).containsExactly("http://" + r.nodeFor(k) + "/s1:8080", "http://g1:8090/s1:8080");
            assertThat(r.nodeFor(k)).isEqualTo(new HashRing(List.of("c2:8090", "c1:8090")).nodeFor(k));
        }
        CacheRouting noGutter = new CacheRouting(List.of("c1:8090"), List.of());
        assertThat(noGutter.urlPrefixes(5, "s:1")).containsExactly("http://c1:8090/s:1");
        assertThat(noGutter.gutterFor(5)).isNull();
        assertThatThrownBy(() -> new CacheRouting(List.of("a:1"), List.of("a:1"))).hasMessageContaining("both a cache node and a gutter node");
    }
}
