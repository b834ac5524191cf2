package io.hayloft.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.common.wire.Wire;
import java.util.List;
import org.junit.jupiter.api.Test;

class LookupCacheTest {
    private static Wire.Lookup lookup(long key) {
        return new Wire.Lookup(key, 1, "00000000000000aa", List.of(0), false, "WRITABLE", List.of("a:1"), List.of("http://a:1"));
    }

    @Test
    void evictsTheLeastRecentlyUsed() {
        LookupCache c = new LookupCache(2);
        c.put(1, lookup(1));
        c.put(2, lookup(2));
        assertThat(c.get(1)).isNotNull(); // 1 is now more recent than 2
        c.put(3, lookup(3));
        assertThat(c.get(2)).isNull();
        assertThat(c.get(1)).isNotNull();
        assertThat(c.get(3)).isNotNull();
        assertThat(c.size()).isEqualTo(2);
        c.invalidate(1);
        assertThat(c.get(1)).isNull();
    }

    @Test
    void sizeZeroCachesNothingAndNegativeIsRefused() {
        LookupCache c = new LookupCache(0);
        c.put(1, lookup(1));
        assertThat(c.get(1)).isNull();
        assertThatThrownBy(() -> new LookupCache(-1)).hasMessageContaining("was -1");
    }
}
