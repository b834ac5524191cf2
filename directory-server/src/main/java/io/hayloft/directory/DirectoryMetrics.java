package io.hayloft.directory;

import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.StoreState;
import io.hayloft.format.directory.VolumeState;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;

/**
 * The directory's gauges of cluster state, for the Grafana dashboard (docs/grafana/hayloft.json,
 * docs/operations.md "Monitoring"). Read from the in-memory views of stores and volumes, so a
 * scrape costs no RocksDB scan:
 *
 * <pre>
 * hayloft_directory_volumes{state}                    logical volumes per state (every state, 0 included)
 * hayloft_directory_stores{state}                     stores per state (UP, FAILED, DRAINED)
 * hayloft_directory_store_capacity_bytes{store,rack}  capacity each store reported in its last heartbeat
 * hayloft_directory_store_free_bytes{store,rack}      free bytes each store reported in its last heartbeat
 * hayloft_directory_store_heartbeat_age_seconds{store,rack}  seconds since each store's last heartbeat
 * hayloft_directory_key_high_water_mark               the key allocator's persisted mark (keys handed out are below it)
 * </pre>
 *
 * The per-store rows are rebuilt by {@link #refresh()} before each scrape (stores come and go).
 * Thread-safe.
 */
final class DirectoryMetrics {

    private final Directory directory;
    private final Clock clock;
    private final MultiGauge capacity;
    private final MultiGauge free;
    private final MultiGauge heartbeatAge;

    DirectoryMetrics(Directory directory, MeterRegistry registry, Clock clock) {
        this.directory = directory;
        this.clock = clock;
        for (VolumeState s : VolumeState.values()) {
            Gauge.builder("hayloft_directory_volumes", directory,
                    d -> d.meta().volumes().stream().filter(v -> v.state() == s).count())
                    .tag("state", s.name()).description("logical volumes in this state").register(registry);
        }
        for (StoreState s : StoreState.values()) {
            Gauge.builder("hayloft_directory_stores", directory,
                    d -> d.meta().stores().stream().filter(st -> st.state() == s).count())
                    .tag("state", s.name()).description("stores in this state").register(registry);
        }
        Gauge.builder("hayloft_directory_key_high_water_mark", directory, d -> d.meta().keyHighWaterMark())
                .description("the key allocator's persisted high-water mark").register(registry);
        capacity = MultiGauge.builder("hayloft_directory_store_capacity_bytes")
                .description("capacity the store reported in its last heartbeat").register(registry);
        free = MultiGauge.builder("hayloft_directory_store_free_bytes")
                .description("free bytes the store reported in its last heartbeat").register(registry);
        heartbeatAge = MultiGauge.builder("hayloft_directory_store_heartbeat_age_seconds")
                .description("seconds since the store's last heartbeat").register(registry);
        refresh();
    }

    /** Rebuilds the per-store rows from the current store records. */
    synchronized void refresh() {
        List<MultiGauge.Row<?>> cap = new ArrayList<>();
        List<MultiGauge.Row<?>> fr = new ArrayList<>();
        List<MultiGauge.Row<?>> age = new ArrayList<>();
        long now = clock.millis();
        for (StoreInfo s : directory.stores()) { // with the leader's soft state: last heartbeat, free bytes
            Tags tags = Tags.of("store", s.id(), "rack", s.rack());
            cap.add(MultiGauge.Row.of(tags, s.capacityBytes()));
            fr.add(MultiGauge.Row.of(tags, s.freeBytes()));
            age.add(MultiGauge.Row.of(tags, Math.max(0, now - s.lastHeartbeatMillis()) / 1000.0));
        }
        capacity.register(cap, true);
        free.register(fr, true);
        heartbeatAge.register(age, true);
    }
}
