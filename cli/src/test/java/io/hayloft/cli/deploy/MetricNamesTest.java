package io.hayloft.cli.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The PromQL name extraction the dashboard check relies on. */
class MetricNamesTest {

    @Test
    void findsEveryMetricAndNothingElse() {
        assertThat(MetricNames.used("sum by (op, status) (rate(hayloft_store_requests_seconds_count{status=~\"5..\", op!=\"x y\"}"
                + "[$__rate_interval])) / ignoring(status) group_left sum(rate(hayloft_store_requests_seconds_sum[5m]))"))
                .containsExactly("hayloft_store_requests_seconds_count", "hayloft_store_requests_seconds_sum");
        assertThat(MetricNames.used("hayloft_directory_store_free_bytes / hayloft_directory_store_capacity_bytes < 0.1"))
                .containsExactly("hayloft_directory_store_capacity_bytes", "hayloft_directory_store_free_bytes");
        assertThat(MetricNames.used("max_over_time(hayloft_raid_stripes{state=\"damaged\",instance=~\"$instance\"}[1h]) > 0 and on() vector(1)"))
                .containsExactly("hayloft_raid_stripes");
        assertThat(MetricNames.used("histogram_quantile(0.99, sum by (le) (rate(hayloft_x_bucket[${__rate_interval}])))"))
                .containsExactly("hayloft_x_bucket");
        assertThat(MetricNames.used("1e3 * hayloft_a offset 5m")).containsExactly("hayloft_a");
    }

    @Test
    void readsTheExposition() {
        String text = "# HELP hayloft_cache_hits_total reads served from memory\n# TYPE hayloft_cache_hits_total counter\n"
                + "hayloft_cache_hits_total 3.0\nhayloft_store_requests_seconds_count{op=\"get\",status=\"200\"} 5\n";
        assertThat(MetricNames.exported(text)).containsExactly("hayloft_cache_hits_total", "hayloft_store_requests_seconds_count");
    }
}
