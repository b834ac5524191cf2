package io.hayloft.common.metrics;

import io.hayloft.common.http.HttpResponses;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * A Prometheus registry for one server and the {@code /metrics} response in the text exposition
 * format (version 0.0.4).
 *
 * <p>Thread-safe (Micrometer registries are).
 */
public final class PrometheusEndpoint {
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** The current metrics as a response the caller owns. */
    public FullHttpResponse response() {
        return HttpResponses.text(HttpResponseStatus.OK, registry.scrape(), CONTENT_TYPE);
    }
}
