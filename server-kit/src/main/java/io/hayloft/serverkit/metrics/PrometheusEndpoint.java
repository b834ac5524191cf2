package io.hayloft.serverkit.metrics;

import io.hayloft.serverkit.http.HttpResponses;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.time.Duration;
import java.util.stream.LongStream;

/**
 * A Prometheus registry for one server and the {@code /metrics} response in the text exposition
 * format (version 0.0.4).
 *
 * <p>Thread-safe (Micrometer registries are).
 */
public final class PrometheusEndpoint {
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    /**
     * Histogram buckets of the servers' request timers ({@code ..._requests_seconds_bucket{le}}), for
     * percentiles with {@code histogram_quantile} (docs/grafana/hayloft.json): 1 ms to 10 s, 13 buckets
     * plus {@code +Inf}, few enough to keep a series per op and status cheap.
     */
    public static final Duration[] LATENCY_BUCKETS = LongStream
            .of(1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000)
            .mapToObj(Duration::ofMillis).toArray(Duration[]::new);

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** The current metrics as a response the caller owns. */
    public FullHttpResponse response() {
        return HttpResponses.text(HttpResponseStatus.OK, registry.scrape(), CONTENT_TYPE);
    }
}
