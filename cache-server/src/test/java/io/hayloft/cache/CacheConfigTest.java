package io.hayloft.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.serverkit.config.ConfigLoader;
import java.net.InetAddress;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CacheConfigTest {
    private static CacheConfig load(Map<String, String> o) throws Exception {
        return ConfigLoader.load(null, o, CacheConfig.class);
    }

    @Test
    void badValuesAreNamed() throws Exception {
        assertThatThrownBy(() -> load(Map.of("role", "tertiary")).validate()).hasMessageContaining("role must be primary or gutter, was tertiary");
        assertThatThrownBy(() -> load(Map.of("maxBytes", "10")).validate()).hasMessageContaining("maxBytes must be >= 1024, was 10");
        assertThatThrownBy(() -> load(Map.of("cdnNetworks", "10.0.0.0,")).validate()).hasMessageContaining("got '10.0.0.0'");
        assertThatThrownBy(() -> load(Map.of("cdnNetworks", "10.0.0.0/33,")).validate()).hasMessageContaining("must be in 0..32");
        assertThatThrownBy(() -> load(Map.of("cdnNetworks", "example.com/8,")).validate()).hasMessageContaining("address literal");
        assertThatThrownBy(() -> load(Map.of("allowedStores", "s1,")).validate()).hasMessageContaining("store must be host:port, got 's1'");
        assertThatThrownBy(() -> load(Map.of("clusterSecret", "short")).validate()).hasMessageContaining("at least 16");
        assertThatThrownBy(() -> load(Map.of("gutterTtlMillis", "0")).validate()).hasMessageContaining("gutterTtlMillis must be in 1..600000, was 0");
        assertThatThrownBy(() -> load(Map.of("directory", "d1")).validate()).hasMessageContaining("directory: entry 'd1' of 'd1' is not host:port");
        assertThatThrownBy(() -> load(Map.of("directory", "d1:7000,d2")).validate()).hasMessageContaining("directory: entry 'd2'");
        assertThat(load(Map.of("directory", "d1:7000,d2:7000,d3:7000")).validate().directories())
                .containsExactly("d1:7000", "d2:7000", "d3:7000");
        assertThat(load(Map.of("directory", "d1:7000")).validate().directories()).containsExactly("d1:7000");
        assertThat(load(Map.of()).validate().directories()).isEmpty();
        assertThatThrownBy(() -> load(Map.of("coldTimeoutMillis", "0")).validate()).hasMessageContaining("coldTimeoutMillis must be >= 1, was 0");
        assertThatThrownBy(() -> load(Map.of("coldIndexCacheBytes", "1000")).validate())
                .hasMessageContaining("coldIndexCacheBytes must be >= 1048576, was 1000");
        assertThat(load(Map.of("coldIndexCacheBytes", "2097152")).validate().coldIndexCacheBytes).isEqualTo(2L << 20);
        assertThatThrownBy(() -> load(Map.of("maxByte", "1"))).hasMessageContaining("unknown config key 'maxByte'");
    }

    @Test
    void gutterNodesAlwaysExpireEntries() throws Exception {
        assertThat(load(Map.of()).validate().effectiveTtlMillis()).isZero();
        assertThat(load(Map.of("role", "gutter")).validate().effectiveTtlMillis()).isEqualTo(10_000);
        assertThat(load(Map.of("role", "gutter", "ttlMillis", "500")).validate().effectiveTtlMillis()).isEqualTo(500);
        assertThat(load(Map.of("maxBytes", "4096")).validate().objectLimit()).isEqualTo(4096);
    }

    @Test
    void cidrsMatchByPrefix() throws Exception {
        Admission.Cidr n = Admission.Cidr.parse("10.20.0.0/15");
        assertThat(n.contains(InetAddress.getByName("10.21.255.1").getAddress())).isTrue();
        assertThat(n.contains(InetAddress.getByName("10.22.0.1").getAddress())).isFalse();
        assertThat(n.contains(InetAddress.getByName("::1").getAddress())).isFalse();
        assertThat(Admission.Cidr.parse("::1/128").contains(InetAddress.getByName("::1").getAddress())).isTrue();
        assertThat(Admission.Cidr.parse("0.0.0.0/0").contains(InetAddress.getByName("192.0.2.1").getAddress())).isTrue();
    }
}
