package io.hayloft.directory;

import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.StoreState;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Haystack's "pitchfork": probes every store each {@code probeInterval} (health endpoint plus a real
 * disk read of one of its volumes) and reports the verdicts to the {@link Directory}, which marks a
 * store that fails {@code failureThreshold} probes in a row FAILED and its volumes read-only. One
 * bad store never stops the checker: every probe is independent and every error is caught.
 *
 * <p>Thread-safe; {@link #close()} stops it.
 */
public final class HealthChecker implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(HealthChecker.class);

    private final Directory directory;
    private final StoreAdmin stores;
    private final ScheduledExecutorService timer;
    private final Map<String, Integer> successes = new ConcurrentHashMap<>();
    private final Map<String, Boolean> inFlight = new ConcurrentHashMap<>();
    /** Probes whose verdict is not recorded yet: {@link #close()} waits for them, so none touches a closed database. */
    private final Set<CompletableFuture<?>> pending = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    public HealthChecker(Directory directory, StoreAdmin stores) {
        this.directory = directory;
        this.stores = stores;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "hayloft-health-checker");
            t.setDaemon(true);
            return t;
        });
        long period = directory.config().probeIntervalMillis;
        timer.scheduleWithFixedDelay(this::round, period, period, TimeUnit.MILLISECONDS);
    }

    /** One round of probes; public so tests and operators can force one. */
    public void round() {
        if (closed || !directory.log().leads()) {
            return; // the leader's work (a replica that takes over starts probing at its next round)
        }
        try {
            for (StoreInfo s : directory.stores()) {
                if (s.state() == StoreState.DRAINED || inFlight.putIfAbsent(s.id(), Boolean.TRUE) != null) {
                    continue;
                }
                int volume = directory.volumes().stream()
                        // replicas of an erasure-coded volume are being dropped: not a health signal
                        .filter(v -> v.replicas().contains(s.id()) && v.state() != VolumeState.ERASURE_CODED)
                        .mapToInt(VolumeInfo::id).findFirst().orElse(0);
                CompletableFuture<Void> done = stores.probe(s.address(), volume)
                        .orTimeout(directory.config().probeTimeoutMillis, TimeUnit.MILLISECONDS)
                        .whenComplete((ok, err) -> {
                            inFlight.remove(s.id());
                            if (closed) {
                                return;
                            }
                            try {
                                if (err == null) {
                                    directory.probeResult(s.id(), null, successes.merge(s.id(), 1, Integer::sum));
                                } else {
                                    successes.put(s.id(), 0);
                                    Throwable t = err.getCause() != null && err instanceof CompletionException ? err.getCause() : err;
                                    String why = t instanceof TimeoutException
                                            ? "no answer within " + directory.config().probeTimeoutMillis + " ms"
                                            : String.valueOf(t.getMessage() == null ? t : t.getMessage());
                                    directory.probeResult(s.id(), why, 0);
                                }
                            } catch (RuntimeException e) {
                                LOG.error("health checker: recording the probe of store {} failed", s.id(), e);
                            }
                        });
                pending.add(done);
                done.whenComplete((x, y) -> pending.remove(done));
            }
        } catch (RuntimeException e) {
            LOG.error("health checker round failed; will try again next round", e);
        }
    }

    /**
     * Stops probing and waits (at most the probe timeout, which bounds every probe) until no probe
     * callback can still record a verdict, so the directory may close its database afterwards.
     */
    @Override
    public void close() {
        closed = true;
        timer.shutdownNow();
        long wait = directory.config().probeTimeoutMillis + 1000;
        try {
            timer.awaitTermination(wait, TimeUnit.MILLISECONDS);
            CompletableFuture.allOf(pending.toArray(new CompletableFuture<?>[0]))
                    .handle((x, y) -> null).get(wait, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("health checker: probes still running at close after {} ms", wait);
        }
    }
}
