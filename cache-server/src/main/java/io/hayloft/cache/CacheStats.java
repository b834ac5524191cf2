package io.hayloft.cache;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * Counters of one cache node, exported to Prometheus ({@code /metrics}, names
 * {@code hayloft_cache_*}) and as JSON ({@code /stats}). A request is counted once, as a hit (served
 * from memory), a lease wait (served by another request's fill) or a miss (served by its own store
 * fetch); the hit rate is hits over all three.
 *
 * <p>Thread-safe (striped adders).
 */
public final class CacheStats {
    final LongAdder hits = new LongAdder();
    final LongAdder misses = new LongAdder();
    final LongAdder leaseWaits = new LongAdder();
    final LongAdder leaseExpiries = new LongAdder();
    final LongAdder leasesCancelled = new LongAdder();
    final LongAdder storeReads = new LongAdder();
    final LongAdder coldReads = new LongAdder();
    final LongAdder fetchErrors = new LongAdder();
    final LongAdder corrupt = new LongAdder();
    final LongAdder stored = new LongAdder();
    final LongAdder notAdmitted = new LongAdder();
    final LongAdder pushes = new LongAdder();
    final LongAdder invalidations = new LongAdder();
    final LongAdder evictions = new LongAdder();
    final LongAdder expirations = new LongAdder();
    private final LongSupplier bytes;
    private final LongSupplier entries;

    CacheStats(LongSupplier bytes, LongSupplier entries) {
        this.bytes = bytes;
        this.entries = entries;
    }

    /** Hits over all reads, 0 before the first read. */
    public double hitRate() {
        long h = hits.sum();
        long all = h + misses.sum() + leaseWaits.sum();
        return all == 0 ? 0 : (double) h / all;
    }

    /** Every counter by name, for {@code /stats}. */
    public Map<String, Object> snapshot() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("hits", hits.sum());
        m.put("misses", misses.sum());
        m.put("leaseWaits", leaseWaits.sum());
        m.put("hitRate", hitRate());
        m.put("storeReads", storeReads.sum());
        m.put("coldReads", coldReads.sum());
        m.put("fetchErrors", fetchErrors.sum());
        m.put("corrupt", corrupt.sum());
        m.put("stored", stored.sum());
        m.put("notAdmitted", notAdmitted.sum());
        m.put("leaseExpiries", leaseExpiries.sum());
        m.put("leasesCancelled", leasesCancelled.sum());
        m.put("pushes", pushes.sum());
        m.put("invalidations", invalidations.sum());
        m.put("evictions", evictions.sum());
        m.put("expirations", expirations.sum());
        m.put("bytes", bytes.getAsLong());
        m.put("entries", entries.getAsLong());
        return m;
    }

    void register(MeterRegistry r) {
        counter(r, "hayloft_cache_hits", hits, "reads served from memory");
        counter(r, "hayloft_cache_misses", misses, "reads served by their own store fetch");
        counter(r, "hayloft_cache_lease_waits", leaseWaits, "reads that waited for another read's fill");
        counter(r, "hayloft_cache_lease_expiries", leaseExpiries, "lease waits that gave up and read the store");
        counter(r, "hayloft_cache_leases_cancelled", leasesCancelled, "fills dropped because an invalidation arrived");
        counter(r, "hayloft_cache_store_reads", storeReads, "GETs sent to stores");
        counter(r, "hayloft_cache_cold_reads", coldReads, "reads of needles of erasure-coded volumes (through the stripes)");
        counter(r, "hayloft_cache_fetch_errors", fetchErrors, "store fetches that failed (unreachable, timeout, corrupt)");
        counter(r, "hayloft_cache_corrupt", corrupt, "store answers whose data failed its CRC32C");
        counter(r, "hayloft_cache_stored", stored, "needles put into memory (fills and pushes)");
        counter(r, "hayloft_cache_not_admitted", notAdmitted, "fills not kept: CDN request, read-only volume, unverified, too big");
        counter(r, "hayloft_cache_pushes", pushes, "needles pushed by a store or client");
        counter(r, "hayloft_cache_invalidations", invalidations, "invalidations received");
        counter(r, "hayloft_cache_evictions", evictions, "entries evicted for space");
        counter(r, "hayloft_cache_expirations", expirations, "entries expired by TTL");
        Gauge.builder("hayloft_cache_hit_rate", this, CacheStats::hitRate).description("hits over all reads").register(r);
        Gauge.builder("hayloft_cache_bytes", bytes, LongSupplier::getAsLong).description("weighed bytes in memory").register(r);
        Gauge.builder("hayloft_cache_entries", entries, LongSupplier::getAsLong).description("entries in memory").register(r);
    }

    private static void counter(MeterRegistry r, String name, LongAdder a, String description) {
        FunctionCounter.builder(name, a, LongAdder::sum).description(description).register(r);
    }
}
