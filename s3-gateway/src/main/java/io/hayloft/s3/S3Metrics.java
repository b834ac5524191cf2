package io.hayloft.s3;

import io.hayloft.serverkit.metrics.PrometheusEndpoint;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

/**
 * The gateway's metrics on {@code /_hayloft/metrics}: {@code hayloft_s3_requests_seconds{op,status}}
 * (a timer per S3 operation, e.g. {@code op="PutObject"}, and answer status), and the object bytes
 * received ({@code hayloft_s3_received_bytes_total{op}}) and sent ({@code hayloft_s3_sent_bytes_total{op}}).
 * Thread-safe: meters are cached in concurrent maps.
 */
public final class S3Metrics {
    private final MeterRegistry registry;
    private final ConcurrentMap<String, Timer> timers = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Counter> received = new ConcurrentHashMap<>();
    private final ConcurrentMap<String, Counter> sent = new ConcurrentHashMap<>();

    public S3Metrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** Records one request of {@code op} answered {@code status} after {@code nanos}. */
    public void request(String op, int status, long nanos) {
        timers.computeIfAbsent(op + " " + status, k -> Timer.builder("hayloft_s3_requests").tag("op", op)
                .tag("status", Integer.toString(status)).description("S3 requests by operation and status")
                .serviceLevelObjectives(PrometheusEndpoint.LATENCY_BUCKETS).register(registry))
                .record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    /** Object bytes received by {@code op} (an upload's decoded body). */
    public void received(String op, long bytes) {
        if (bytes > 0) {
            received.computeIfAbsent(op, k -> Counter.builder("hayloft_s3_received_bytes").tag("op", op)
                    .description("object bytes received").baseUnit("bytes").register(registry)).increment(bytes);
        }
    }

    /** Object bytes sent by {@code op} (a GET's body). */
    public void sent(String op, long bytes) {
        if (bytes > 0) {
            sent.computeIfAbsent(op, k -> Counter.builder("hayloft_s3_sent_bytes").tag("op", op)
                    .description("object bytes sent").baseUnit("bytes").register(registry)).increment(bytes);
        }
    }
}
