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
 * <p>Fencing (docs/raid.md "One raid-node per cluster"): {@link #epoch()} is the epoch this process
 * works under. The {@link Cluster} the lease was taken through, and any other given to
 * {@link #fence}, sends it with every raid commit, which the directory applies only while that epoch is
 * still the cluster's raid lease (else 409 LEASE_LOST, nothing changed); right before deleting
 * replicas or blocks a job {@link #confirm}s the lease with the directory. The lease is <em>lost</em>
 * once a renewal finds another holder, or finds that it lapsed and was granted again at a new epoch,
 * or a commit was refused LEASE_LOST: {@link #check()} and {@link #confirm()} then fail, so the job
 * stops, until {@link #retake()} takes the lease again at the directory's current epoch (the daemon
 * does so between passes, when no job runs). The epoch never changes under a running job.
 *
 * <p>Holder names are unique per process by default ({@code raid-node@host:pid},
 * {@code raid-cli@host:pid}), so a second raid-node is refused even on the same host; a daemon
 * configured with a stable {@code nodeId} takes its lease back at once after a crash instead of
 * waiting for it to lapse (two running daemons must then never share that id).
 *
 * <p>Thread-safe: requests to the directory are serialised on this object; the state is volatile.
 */
public final class RaidLease implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RaidLease.class);

    /** Another holder has the lease. */
    public static final class HeldException extends IOException {
        HeldException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** The lease is not held at the epoch this process works under (lost, lapsed or released): work under it stops. */
    public static final class LostException extends IOException {
        LostException(String message) {
            super(message);
        }
    }

    private final Cluster cluster;
    private final String holder;
    private final long ttlMillis;
    private final ScheduledExecutorService renewer;
    private volatile long validUntilNanos;
    private volatile long epoch;
    /** Why the lease at {@link #epoch} is lost, or null while it holds. */
    private volatile String lost;
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
     * Takes the lease for {@code holder} and keeps renewing it until {@link #close()}; fences
     * {@code cluster}'s raid commits by it.
     *
     * @throws HeldException when another holder has it (the message names it and when it runs out)
     * @throws IOException when the directory cannot be reached
     */
    public static RaidLease acquire(Cluster cluster, String holder, long ttlMillis) throws IOException {
        if (ttlMillis < 3 || ttlMillis > 3_600_000) {
            throw new IllegalArgumentException("lease ttlMillis must be in 3..3600000, was " + ttlMillis);
        }
        RaidLease l = new RaidLease(cluster, holder, ttlMillis);
        l.epoch = l.grant();
        long every = Math.max(1, ttlMillis / 3);
        l.renewer.scheduleWithFixedDelay(l::renewQuietly, every, every, TimeUnit.MILLISECONDS);
        cluster.fencedBy(l);
        LOG.info("raid lease taken by {} (ttl {} ms, epoch {})", holder, ttlMillis, l.epoch);
        return l;
    }

    /** Fences {@code other}'s raid commits by this lease too (a client of the same process made later). */
    public void fence(Cluster other) {
        other.fencedBy(this);
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

    /**
     * The epoch this process works under: sent with each raid commit. The directory raises it each
     * time the lease changes hands; here it changes only by {@link #retake()}.
     */
    public long epoch() {
        return epoch;
    }

    /** Whether {@link #close()} released the lease. */
    boolean closed() {
        return closed;
    }

    /**
     * Fails unless the lease was renewed within its ttl at {@link #epoch()}, i.e. nobody else can
     * hold it now. No request: what a job checks before each piece of work.
     *
     * @throws LostException naming the holder and why: released, lost (and how), or not renewed for how long
     */
    public void check() throws IOException {
        long left = validUntilNanos - System.nanoTime();
        String why = lost;
        if (closed || why != null || left <= 0) {
            throw new LostException("raid lease of " + holder + " at epoch " + epoch + " is not held (" + (closed ? "released"
                    : why != null ? why : "not renewed for " + (ttlMillis + TimeUnit.NANOSECONDS.toMillis(-left)) + " ms")
                    + "); refusing to delete or rewrite blocks");
        }
    }

    /**
     * Confirms with the directory that the lease is still held at {@link #epoch()}: a renewal, which
     * the directory (its leader, in a replicated directory) answers linearizably. Called right before
     * replicas or blocks are deleted on the stores.
     *
     * @throws LostException when it is not (the lease is then lost until {@link #retake()})
     * @throws IOException when the directory cannot be reached (nothing may be deleted then either)
     */
    public void confirm() throws IOException {
        check();
        try {
            renew();
        } catch (HeldException e) {
            check(); // lost: says why
            throw e;
        }
        check();
    }

    /**
     * Takes the lease again after it was lost or lapsed, at the directory's current epoch (the same one
     * when it was never given to anyone else meanwhile). Only between jobs: work begun under the old
     * epoch must have stopped.
     *
     * @throws HeldException when another holder has it
     */
    public synchronized void retake() throws IOException {
        if (closed) {
            throw new LostException("raid lease of " + holder + " was released");
        }
        long was = epoch;
        epoch = grant();
        String why = lost;
        lost = null;
        LOG.info("raid lease of {} taken again at epoch {} (was {}{})", holder, epoch, was, why == null ? "" : "; lost: " + why);
    }

    /**
     * Marks the lease at {@code epoch} lost (when this process still works under that epoch): a commit
     * made under it was refused LEASE_LOST.
     */
    synchronized void lost(long epoch, String why) {
        if (epoch == this.epoch && lost == null && !closed) {
            lost = why;
            LOG.warn("raid lease of {} at epoch {} is lost ({}): jobs stop; the lease is taken again before any more work",
                    holder, epoch, why);
        }
    }

    /** One grant or renewal by the directory; returns the epoch it answered. */
    private synchronized long grant() throws IOException {
        long sent = System.nanoTime();
        long e;
        try {
            e = cluster.acquireLease(holder, ttlMillis);
        } catch (Cluster.HttpStatusException x) {
            if (x.status() == 409) {
                throw new HeldException(x.getMessage(), x);
            }
            throw x;
        }
        // Valid from when the request was sent: the directory's expiry is at least that late.
        validUntilNanos = sent + TimeUnit.MILLISECONDS.toNanos(ttlMillis);
        return e;
    }

    /** A renewal: another holder, or a new epoch (the lease lapsed and was granted again), means the lease is lost. */
    private synchronized void renew() throws IOException {
        long e;
        try {
            e = grant();
        } catch (HeldException x) {
            lost(epoch, "another holder has it: " + x.getMessage());
            throw x;
        }
        if (e != epoch) {
            lost(epoch, "it lapsed and was granted again at epoch " + e);
        }
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
