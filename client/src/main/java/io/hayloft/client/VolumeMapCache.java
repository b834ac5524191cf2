package io.hayloft.client;

import io.hayloft.format.ring.CacheRouting;
import io.hayloft.format.wire.Wire;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The client's copy of the directory's volume map ({@code GET /v1/volume-map}): where every logical
 * volume lives, so that a read, a delete or a stat needs no directory call per photo.
 *
 * <p>The first use loads the map (a future; concurrent first users share one call). From then on a
 * daemon thread refreshes it every {@code refresh} with {@code If-None-Match} (a 304 costs the
 * directory almost nothing); {@link #refreshNow()} refreshes at once, for a read or write that met a
 * volume-level error. Concurrent refreshes are coalesced: at most one directory call is in flight,
 * and every caller gets its answer. A failed refresh keeps the map it had (a read of a cached map
 * works while the directory is down).
 *
 * <p>{@link #places} computes a photo's read places (as the directory's removed lookup endpoint once did): with read policy
 * {@code cache}, the key's cache node and gutter node on the consistent-hash ring
 * ({@link CacheRouting#urlPrefixes}) with the first healthy replica as the store part for a
 * {@code WRITABLE} volume, or the store part {@code cold} for an erasure-coded one
 * ({@code ERASURE_CODED}, {@code DEGRADED}, {@code REPAIRING}); then the replicas on healthy stores,
 * rotated per read to spread the load; then the replicas on the other stores.
 *
 * <p>Thread-safe.
 */
final class VolumeMapCache implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(VolumeMapCache.class);

    /** One version of the map, indexed by volume id. Immutable. */
    static final class Snapshot {
        private final Wire.VolumeMap map;
        private final Map<Integer, Wire.VolumeLocation> byId;
        private final CacheRouting routing; // null unless readPolicy is cache with cache nodes

        Snapshot(Wire.VolumeMap map) {
            this.map = map;
            Map<Integer, Wire.VolumeLocation> m = new HashMap<>();
            for (Wire.VolumeLocation v : map.volumes()) {
                m.put(v.id(), v);
            }
            this.byId = m;
            CacheRouting r = null;
            if ("cache".equals(map.readPolicy()) && !map.cacheNodes().isEmpty()) {
                r = new CacheRouting(map.cacheNodes(), map.gutterNodes());
            }
            this.routing = r;
        }

        Wire.VolumeMap map() {
            return map;
        }

        String version() {
            return map.version();
        }

        /** The volume's location, or null when the map does not know it. */
        Wire.VolumeLocation volume(int id) {
            return byId.get(id);
        }

        String scheme() {
            return map.scheme() == null || map.scheme().isEmpty() ? "http" : map.scheme();
        }
    }

    private final DirectoryClient directory;
    private final Duration refresh;
    private final AtomicReference<Snapshot> current = new AtomicReference<>();
    private final AtomicReference<CompletableFuture<Snapshot>> inFlight = new AtomicReference<>();
    private final AtomicInteger rotation = new AtomicInteger();
    private final ScheduledExecutorService timer;
    private final Consumer<Snapshot> onChange;

    /** @param onChange told of every new version of the map before the refresh that fetched it completes */
    VolumeMapCache(DirectoryClient directory, Duration refresh, Consumer<Snapshot> onChange) {
        this.directory = directory;
        this.onChange = onChange;
        this.refresh = refresh;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "hayloft-client-volume-map");
            t.setDaemon(true);
            return t;
        });
        long ms = Math.max(1, refresh.toMillis());
        timer.scheduleWithFixedDelay(this::background, ms, ms, TimeUnit.MILLISECONDS);
    }

    /** The refresh period. */
    Duration refreshPeriod() {
        return refresh;
    }

    /** The cached map, loading it when there is none yet. */
    CompletableFuture<Snapshot> get() {
        Snapshot s = current.get();
        return s != null ? CompletableFuture.completedFuture(s) : refreshNow();
    }

    /** The cached map, or null before the first load. */
    Snapshot cached() {
        return current.get();
    }

    /**
     * Asks the directory now (with {@code If-None-Match} of the cached version); joins the call in
     * flight if there is one. Completes with the map (the cached one when unchanged), or fails when
     * the directory cannot be reached and no map is cached.
     */
    /**
     * True when the latest refresh could not reach the directory (and so answered the cached map): a
     * volume missing from that map may exist.
     */
    boolean lastRefreshFailed() {
        return lastRefreshFailed;
    }

    private volatile boolean lastRefreshFailed;

    CompletableFuture<Snapshot> refreshNow() {
        while (true) {
            CompletableFuture<Snapshot> f = inFlight.get();
            if (f != null) {
                return f;
            }
            CompletableFuture<Snapshot> mine = new CompletableFuture<>();
            if (!inFlight.compareAndSet(null, mine)) {
                continue;
            }
            Snapshot known = current.get();
            CompletableFuture<Wire.VolumeMap> call;
            try {
                call = directory.volumeMap(known == null ? null : known.version());
            } catch (RuntimeException e) {
                call = CompletableFuture.failedFuture(e);
            }
            call.whenComplete((m, t) -> {
                Snapshot result = null;
                Throwable error = null;
                if (t != null) {
                    error = Futures.unwrap(t);
                    result = current.get();
                } else if (m == null) {
                    result = known;
                } else {
                    try {
                        result = new Snapshot(m);
                        current.set(result);
                        onChange.accept(result);
                    } catch (RuntimeException e) {
                        error = e;
                        result = current.get();
                    }
                }
                lastRefreshFailed = error != null;
                inFlight.set(null);
                if (result != null) {
                    if (error != null) {
                        LOG.debug("volume map refresh failed, keeping version {}: {}", result.version(), error.toString());
                    }
                    mine.complete(result);
                } else {
                    mine.completeExceptionally(error);
                }
            });
            return mine;
        }
    }

    private void background() {
        if (current.get() == null) {
            return; // never used: no directory calls for a client that does not read, write or delete
        }
        try {
            refreshNow();
        } catch (RuntimeException e) {
            LOG.debug("volume map refresh failed: {}", e.toString());
        }
    }

    /**
     * The URL prefixes to read photo {@code key} of volume {@code v} from, in order (see the class
     * comment); the healthy replicas are rotated on each call.
     */
    List<String> places(Snapshot s, long key, Wire.VolumeLocation v) {
        String scheme = s.scheme();
        List<String> healthy = new ArrayList<>(v.replicas());
        if (healthy.size() > 1) {
            Collections.rotate(healthy, Math.floorMod(rotation.getAndIncrement(), healthy.size()));
        }
        List<String> out = new ArrayList<>(healthy.size() + v.down().size() + 2);
        if (s.routing != null && !healthy.isEmpty() && v.state().writable()) {
            out.addAll(s.routing.urlPrefixes(key, healthy.get(0), scheme));
        } else if (s.routing != null && v.state().coded()) {
            out.addAll(s.routing.urlPrefixes(key, HayloftClient.COLD_PREFIX, scheme));
        }
        for (String a : healthy) {
            out.add(scheme + "://" + a);
        }
        for (String a : v.down()) {
            out.add(scheme + "://" + a);
        }
        return out;
    }

    /** Stops the background refresh. */
    @Override
    public void close() {
        timer.shutdownNow();
    }
}
