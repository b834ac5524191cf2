package io.hayloft.raid;

import io.hayloft.serverkit.metrics.PrometheusEndpoint;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The raid-node's meters, all named {@code hayloft_raid_*} (docs/raid-api.md lists them): encode
 * jobs and bytes, repaired blocks and bytes read and written, scrubbed bytes and corrupt blocks,
 * the backlog, stripes by state, damaged blocks, policy reload errors and passes.
 *
 * <p>Thread-safe: Micrometer meters and atomics.
 */
final class RaidMetrics {

    final PrometheusEndpoint endpoint = new PrometheusEndpoint();
    final Counter encodeOk;
    final Counter encodeFailed;
    final Counter encodeBytes;
    final Counter repairBlocks;
    final Counter repairFailures;
    final Counter repairBytesRead;
    final Counter repairBytesWritten;
    final Counter scrubCorrupt;
    final Counter policyErrors;
    final Counter passes;
    final Counter passFailures;
    final AtomicLong backlog = new AtomicLong();
    final AtomicLong stripesPlanned = new AtomicLong();
    final AtomicLong stripesHealthy = new AtomicLong();
    final AtomicLong stripesDamaged = new AtomicLong();
    final AtomicLong blocksMissing = new AtomicLong();
    final AtomicLong blocksCorrupt = new AtomicLong();

    RaidMetrics(Supplier<Number> scrubBytes, Supplier<Number> policyVersion) {
        MeterRegistry r = endpoint.registry();
        encodeOk = Counter.builder("hayloft_raid_encode_jobs").tag("result", "ok").description("encode jobs finished").register(r);
        encodeFailed = Counter.builder("hayloft_raid_encode_jobs").tag("result", "failed").register(r);
        encodeBytes = Counter.builder("hayloft_raid_encode_bytes").description("volume bytes encoded").register(r);
        repairBlocks = Counter.builder("hayloft_raid_repair_blocks").description("blocks rebuilt").register(r);
        repairFailures = Counter.builder("hayloft_raid_repair_failures").description("stripe repairs that failed").register(r);
        repairBytesRead = Counter.builder("hayloft_raid_repair_bytes_read").description("bytes read by repairs").register(r);
        repairBytesWritten = Counter.builder("hayloft_raid_repair_bytes_written").description("bytes rebuilt").register(r);
        scrubCorrupt = Counter.builder("hayloft_raid_scrub_corrupt_blocks").description("corrupt blocks the scrubber found").register(r);
        policyErrors = Counter.builder("hayloft_raid_policy_reload_errors").description("policy files refused").register(r);
        passes = Counter.builder("hayloft_raid_passes").description("policy passes run").register(r);
        passFailures = Counter.builder("hayloft_raid_pass_failures").description("policy passes that failed").register(r);
        FunctionCounter.builder("hayloft_raid_scrub_bytes", scrubBytes,
                s -> s.get().doubleValue()).description("bytes read by the scrubber").register(r);
        Gauge.builder("hayloft_raid_policy_version", policyVersion, s -> s.get().doubleValue()).register(r);
        Gauge.builder("hayloft_raid_backlog_volumes", backlog, AtomicLong::get).description("volumes due for encoding").register(r);
        Gauge.builder("hayloft_raid_stripes", stripesPlanned, AtomicLong::get).tag("state", "planned").register(r);
        Gauge.builder("hayloft_raid_stripes", stripesHealthy, AtomicLong::get).tag("state", "healthy").register(r);
        Gauge.builder("hayloft_raid_stripes", stripesDamaged, AtomicLong::get).tag("state", "damaged").register(r);
        Gauge.builder("hayloft_raid_damaged_blocks", blocksMissing, AtomicLong::get).tag("kind", "missing").register(r);
        Gauge.builder("hayloft_raid_damaged_blocks", blocksCorrupt, AtomicLong::get).tag("kind", "corrupt").register(r);
        reclaimed = Counter.builder("hayloft_raid_reclaim_volumes").description("volumes re-encoded by reclaim").register(r);
    }

    final Counter reclaimed;
    private Supplier<BlockFixer> fixer;
    final Counter repairBytesReceived = Counter.builder("hayloft_raid_repair_bytes_received")
            .description("source bytes received by repairs as they arrive").register(endpoint.registry());

    /**
     * Live meters of the current repair fixer (it changes with the policy): repairs in flight,
     * source bytes received as they arrive (a running repair's included, unlike
     * {@code hayloft_raid_repair_bytes_read}, counted when a pass ends), and the most source bytes
     * one repair held at once (bounded by {@code 2 × k × repairWindowBytes}).
     */
    void repairGauges(Supplier<BlockFixer> fixer) {
        this.fixer = fixer; // gauges hold their state weakly
        MeterRegistry r = endpoint.registry();
        Gauge.builder("hayloft_raid_repairs_in_flight", fixer, f -> f.get() == null ? 0 : f.get().repairsInFlight())
                .description("stripe repairs running").register(r);
        Gauge.builder("hayloft_raid_repair_max_bytes_held", fixer, f -> f.get() == null ? 0 : f.get().maxBytesHeld())
                .description("most source bytes one repair held at once").register(r);
    }
}
