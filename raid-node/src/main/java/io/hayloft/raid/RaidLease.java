package io.hayloft.raid;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This process's hold on the cluster's raid lease (directory {@code /v1/raid-lease}): one raid-node
 * at a time deletes and rewrites blocks, so an orphan sweep never takes the blocks of another
 * raid-node's job in flight. {@link #acquire} takes the lease and renews it every third of its ttl
 * on a daemon thread; {@link #check()} fails once a renewal has not succeeded within the ttl (the
 * directory may have given the lease to someone else), and {@link #close()} releases it.
 *
 * <p>Holder names are unique per process by default ({@code raid-node@host:pid},
 * {@code raid-cli@host:pid}), so a second raid-node is refused even on the same host; a daemon
 * configured with a stable {@code nodeId} takes its lease back at once after a crash instead of
 * waiting for it to lapse (two running daemons must then never share that id).
 *
 * <p>Thread-safe: the last renewal time is volatile.
 */
public final class RaidLease implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RaidLease.class);

    /** Another holder has the lease. */
    public static final class HeldException extends IOException {
        HeldException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final Cluster cluster;
    private final String holder;
    private final long ttlMillis;
    private final ScheduledExecutorService renewer;
    private volatile long validUntilNanos;
    private volatile long epoch;
    private volatile boolean closed;

    private RaidLease(Cluster cluster, String holder, long ttlMillis) {
        this.cluster = cluster;
        this.holder = holder;
        this.ttlMillis = ttlMillis;
        this.renewer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "raid-lease-renewer");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Takes the lease for {@code holder} and keeps renewing it until {@link #close()}.
     *
     * @throws HeldException when another holder has it (the message names it and when it runs out)
     * @throws IOException when the directory cannot be reached
     */
    public static RaidLease acquire(Cluster cluster, String holder, long ttlMillis) throws IOException {
        if (ttlMillis < 3 || ttlMillis > 3_600_000) {
            throw new IllegalArgumentException("lease ttlMillis must be in 3..3600000, was " + ttlMillis);
        }
        RaidLease l = new RaidLease(cluster, holder, ttlMillis);
        l.renew();
        long every = Math.max(1, ttlMillis / 3);
        l.renewer.scheduleWithFixedDelay(l::renewQuietly, every, every, TimeUnit.MILLISECONDS);
        LOG.info("raid lease taken by {} (ttl {} ms, epoch {})", holder, ttlMillis, l.epoch);
        return l;
    }

    /** The holder name of a daemon on this host. */
    public static String daemonHolder() {
        return "raid-node@" + host() + ":" + ProcessHandle.current().pid();
    }

    /** The holder name of a one-shot command in this process. */
    public static String commandHolder() {
        return "raid-cli@" + host() + ":" + ProcessHandle.current().pid();
    }

    private static String host() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return ManagementFactory.getRuntimeMXBean().getName();
        }
    }

    public String holder() {
        return holder;
    }

    /** Increases each time the lease changes hands in the directory. */
    public long epoch() {
        return epoch;
    }

    /**
     * Fails unless the lease was renewed within its ttl, i.e. nobody else can hold it now.
     *
     * @throws IOException naming the holder and how long ago the lease lapsed
     */
    public void check() throws IOException {
        long left = validUntilNanos - System.nanoTime();
        if (closed || left <= 0) {
            throw new IOException("raid lease of " + holder + " is not held (" + (closed ? "released" : "not renewed for "
                    + (ttlMillis + TimeUnit.NANOSECONDS.toMillis(-left)) + " ms") + "); refusing to delete or rewrite blocks");
        }
    }

    private void renew() throws IOException {
        long sent = System.nanoTime();
        try {
            epoch = cluster.acquireLease(holder, ttlMillis);
        } catch (Cluster.HttpStatusException e) {
            if (e.status() == 409) {
                throw new HeldException(e.getMessage(), e);
            }
            throw e;
        }
        // Valid from when the request was sent: the directory's expiry is at least that late.
        validUntilNanos = sent + TimeUnit.MILLISECONDS.toNanos(ttlMillis);
    }

    private void renewQuietly() {
        try {
            renew();
        } catch (IOException | RuntimeException e) {
            LOG.warn("raid lease of {} not renewed ({}); jobs stop deleting blocks once it lapses", holder, e.toString());
        }
    }

    /** Stops renewing and releases the lease. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        renewer.shutdownNow();
        try {
            cluster.releaseLease(holder);
        } catch (IOException e) {
            LOG.warn("raid lease of {} not released ({}); it lapses in {} ms", holder, e.toString(), ttlMillis);
        }
    }
}
