package io.hayloft.serverkit.metrics;

import io.hayloft.testkit.PrometheusText;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** {@link PrometheusText} (test-kit has no tests of its own): sums over label sets, a missing metric is NaN. */
class PrometheusTextTest {
    private static final String TEXT = """
            # HELP hayloft_store_block_committed_bytes_total bytes
            # TYPE hayloft_store_block_committed_bytes_total counter
            hayloft_store_block_committed_bytes_total{writes="direct",} 3145733.0
            hayloft_store_block_committed_bytes_total{writes="page_cache",} 0.0
            hayloft_encode_stripes_total 7.0
            hayloft_encode_stripes_total_extra 5.0
            hayloft_http_requests{op="get",status="200",note="a \\"b\\" c"} 2
            hayloft_http_requests{op="get",status="404",} 1e1
            """;

    @Test
    void samplesAreSummedOverTheLabelsAsked() {
        String blocks = "hayloft_store_block_committed_bytes_total";
        assertThat(PrometheusText.sum(TEXT, blocks, "writes", "direct")).isEqualTo(3145733.0);
        assertThat(PrometheusText.sum(TEXT, blocks, "writes", "page_cache")).isZero();
        assertThat(PrometheusText.sum(TEXT, blocks)).isEqualTo(3145733.0);
        assertThat(PrometheusText.sum(TEXT, "hayloft_encode_stripes_total")).isEqualTo(7.0);
        assertThat(PrometheusText.sum(TEXT, "hayloft_http_requests", "op", "get")).isEqualTo(12.0);
        assertThat(PrometheusText.sum(TEXT, "hayloft_http_requests", "op", "get", "status", "404")).isEqualTo(10.0);
        assertThat(PrometheusText.sum(TEXT, "hayloft_http_requests", "note", "a \\\"b\\\" c")).isEqualTo(2.0);
        assertThat(PrometheusText.sum(TEXT, "hayloft_http_requests", "op", "put")).isNaN();
        assertThat(PrometheusText.sum(TEXT, "hayloft_nothing")).isNaN();
        assertThat(PrometheusText.sum(null, "hayloft_nothing")).isNaN();
        assertThatThrownBy(() -> PrometheusText.sum(TEXT, "x", "op")).isInstanceOf(IllegalArgumentException.class);
    }
}
