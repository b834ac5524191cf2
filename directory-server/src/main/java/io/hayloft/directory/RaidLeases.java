package io.hayloft.directory;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.directory.meta.LogEntry;
import io.hayloft.directory.meta.MetaStore;
import io.hayloft.directory.meta.MetaStoreException;
import io.hayloft.format.directory.RaidLease;
import io.hayloft.format.errors.DirectoryErrors;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;

/**
 * The cluster's raid lease: at most one raid-node (daemon or one-shot command) deletes and rewrites
 * blocks at a time, so one raid-node's orphan sweep never takes another's blocks in flight.
 *
 * <p>A holder acquires the lease for {@code ttlMillis} and renews it before it runs out; another
 * holder gets it only once it has expired or been released. The lease survives a directory restart
 * (record {@code raid-lease} of MetaStore's default family, JSON
 * {@code {"holder", "expiresMillis", "epoch"}}, synced). {@code epoch} grows by one each time the
 * lease changes hands, so a holder can tell it lost the lease in between.
 *
 * <p>Thread-safe: every operation is synchronized (a read-modify-write of one record).
 */
public final class RaidLeases {

    static final String RECORD = LogEntry.RAID_LEASE;
    /**
     * Record of the default family a restore writes ({@link DirectoryBackup#restore}): while it is
     * there no raid lease is granted, so no raid-node sweeps the blocks of volumes encoded after the
     * backup as orphans. UTF-8 text saying why; deleted by {@link #releaseHold()}.
     */
    public static final String HOLD = "raid-hold";
    static final long MAX_TTL_MILLIS = 3_600_000;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final MetaStore meta;
    private final ChangeLog log;
    private final Clock clock;

    /** A single directory's leases (changes applied at once). */
    public RaidLeases(MetaStore meta, Clock clock) {
        this(meta, new LocalChangeLog(meta, () -> "single"), clock);
    }

    public RaidLeases(MetaStore meta, ChangeLog log, Clock clock) {
        this.meta = meta;
        this.log = log;
        this.clock = clock;
    }

    /** Why raid work is held after a restore, or null when it is not. */
    public synchronized String hold() {
        byte[] v = meta.setting(HOLD);
        return v == null ? null : new String(v, StandardCharsets.UTF_8);
    }

    /** Lets raid-nodes take the lease again after a restore; returns the hold it removed, or null. */
    public synchronized String releaseHold() {
        ChangeLog.Writer w = log.begin();
        String h = hold();
        if (h != null) {
            w.deleteSetting(HOLD);
        }
        return h;
    }

    /** The lease now; an expired lease is reported with {@code holder} null. */
    public synchronized RaidLease current() {
        log.readBarrier(); // a raid-node acts on the answer: read it linearizably
        RaidLease l = stored();
        return l.holder() == null || l.expiresMillis() <= clock.millis() ? new RaidLease(null, 0, l.epoch()) : l;
    }

    /**
     * Grants or renews the lease for {@code holder}.
     *
     * @throws Refusal INVALID for a blank holder or a ttl outside 1..3600000 ms
     * @throws io.hayloft.format.errors.ApiException 409 LEASE_HELD naming the other holder and when its lease runs out
     */
    public synchronized RaidLease acquire(String holder, long ttlMillis) {
        if (holder == null || holder.isBlank() || holder.length() > 200) {
            throw Refusal.invalid("lease holder must be 1..200 characters, was " + (holder == null ? "missing" : "\"" + holder + "\""));
        }
        if (ttlMillis < 1 || ttlMillis > MAX_TTL_MILLIS) {
            throw Refusal.invalid("ttlMillis must be in 1.." + MAX_TTL_MILLIS + ", was " + ttlMillis);
        }
        ChangeLog.Writer w = log.begin();
        String hold = hold();
        if (hold != null) {
            throw DirectoryErrors.LEASE_HELD.exception(hold + ". Check the stores' blocks against the stripe maps, then release it with "
                    + "'hayloft directory release-raid' (docs/operations.md, \"After a restore\")");
        }
        long now = clock.millis();
        RaidLease l = stored();
        boolean free = l.holder() == null || l.expiresMillis() <= now;
        if (!free && !l.holder().equals(holder)) {
            throw DirectoryErrors.LEASE_HELD.exception("the raid lease is held by " + l.holder() + " until "
                    + Instant.ofEpochMilli(l.expiresMillis()) + " (" + (l.expiresMillis() - now) + " ms from now); "
                    + "run one raid-node per cluster, or wait for it to stop");
        }
        RaidLease next = new RaidLease(holder, now + ttlMillis, holder.equals(l.holder()) && !free ? l.epoch() : l.epoch() + 1);
        store(w, next);
        return next;
    }

    /**
     * Gives the lease up if {@code holder} has it; nothing if nobody does.
     *
     * @throws io.hayloft.format.errors.ApiException 409 LEASE_HELD when another holder has it
     */
    public synchronized RaidLease release(String holder) {
        ChangeLog.Writer w = log.begin();
        RaidLease l = current();
        if (l.holder() == null) {
            return l;
        }
        if (!l.holder().equals(holder)) {
            throw DirectoryErrors.LEASE_HELD.exception("the raid lease is held by " + l.holder() + ", not " + holder);
        }
        RaidLease free = new RaidLease(null, 0, l.epoch());
        store(w, free);
        return free;
    }

    private RaidLease stored() {
        byte[] v = meta.setting(RECORD);
        if (v == null) {
            return new RaidLease(null, 0, 0);
        }
        try {
            return JSON.readValue(v, RaidLease.class);
        } catch (IOException e) {
            throw new MetaStoreException("corrupt raid-lease record in " + meta.path() + ": " + e.getMessage(), e);
        }
    }

    private void store(ChangeLog.Writer w, RaidLease l) {
        try {
            w.putSetting(RECORD, JSON.writeValueAsBytes(l));
        } catch (IOException e) {
            throw new MetaStoreException("cannot serialise " + l + ": " + e.getMessage(), e);
        }
    }
}
