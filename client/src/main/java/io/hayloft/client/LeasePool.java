package io.hayloft.client;

import io.hayloft.format.wire.Wire;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.IntPredicate;
import java.util.function.LongSupplier;

/**
 * The allocator leases a client writes with ({@code POST /v1/leases}, docs/client.md "Writes"): up
 * to {@code slots} live leases, each of {@code leaseKeys} keys on one writable volume, so that one
 * directory call serves about {@code leaseKeys} photos and concurrent writers spread over several
 * volumes (puts take the slots in turn).
 *
 * <p>{@link #take(int)} hands out {@code n} consecutive keys of one lease with one atomic add on the
 * lease's counter; no lock on that path. A lease is used until its keys run out or it nears its
 * expiry: {@code expiresMillis} is read relative to the time the lease arrived (the directory's and
 * the client's clocks need not agree; their difference at arrival is assumed to stay), and the lease
 * is retired a margin before it (10% of its lifetime, at least 30 s, at most half of it). An empty
 * slot fetches a lease; concurrent takers of that slot share the one call.
 *
 * <p>{@link #abandon(int)} drops every lease of a volume that refused a write (read-only, unknown, or
 * an expired token) and excludes the volume from the next lease requests for
 * {@link #EXCLUDE_NANOS}, so the directory, whose view may lag by a heartbeat, picks another.
 *
 * <p>Thread-safe.
 */
final class LeasePool {
    /** How long a volume that refused a write is excluded from lease requests: 30 s. */
    static final long EXCLUDE_NANOS = 30_000_000_000L;
    private static final long MIN_MARGIN_MILLIS = 30_000;

    /** Keys of one lease granted to one chunk: {@code [first, first + count)}. */
    record Grant(Wire.Lease lease, long first, int count) {
    }

    /** A lease in use. */
    private static final class Slot {
        final Wire.Lease lease;
        final long retireNanos; // Long.MAX_VALUE: never
        final AtomicLong next = new AtomicLong();

        Slot(Wire.Lease lease, long retireNanos) {
            this.lease = lease;
            this.retireNanos = retireNanos;
        }
    }

    /** How leases are fetched: {@link DirectoryClient#lease}. */
    interface Source {
        CompletableFuture<Wire.Lease> lease(int keys, List<Integer> exclude);
    }

    private final Source source;
    private final int leaseKeys;
    private final AtomicReferenceArray<Slot> slots;
    private final AtomicReferenceArray<CompletableFuture<Slot>> fetching;
    private final AtomicInteger turn = new AtomicInteger();
    private final Map<Integer, Long> excluded = new ConcurrentHashMap<>(); // volume -> until (nanoTime)
    private final LongSupplier nanos;
    private final LongSupplier wallMillis;
    private final AtomicLong leasesFetched = new AtomicLong();

    LeasePool(Source source, int leaseKeys, int slots) {
        this(source, leaseKeys, slots, System::nanoTime, System::currentTimeMillis);
    }

    LeasePool(Source source, int leaseKeys, int slots, LongSupplier nanos, LongSupplier wallMillis) {
        if (leaseKeys < 1 || leaseKeys > Wire.MAX_LEASE_KEYS) {
            throw new IllegalArgumentException("leaseKeys must be in 1.." + Wire.MAX_LEASE_KEYS + ", was " + leaseKeys);
        }
        if (slots < 1) {
            throw new IllegalArgumentException("slots must be >= 1, was " + slots);
        }
        this.source = source;
        this.leaseKeys = leaseKeys;
        this.slots = new AtomicReferenceArray<>(slots);
        this.fetching = new AtomicReferenceArray<>(slots);
        this.nanos = nanos;
        this.wallMillis = wallMillis;
    }

    /** Leases fetched so far (for tests and metrics). */
    long leasesFetched() {
        return leasesFetched.get();
    }

    /** {@code n} (1..{@link Wire#MAX_LEASE_KEYS}) consecutive keys of one live lease, fetching a lease when needed. */
    CompletableFuture<Grant> take(int n) {
        if (n < 1 || n > Wire.MAX_LEASE_KEYS) {
            throw new IllegalArgumentException("keys to take must be in 1.." + Wire.MAX_LEASE_KEYS + ", was " + n);
        }
        int start = Math.floorMod(turn.getAndIncrement(), slots.length());
        return take(n, start, 0);
    }

    private CompletableFuture<Grant> take(int n, int slot, int fetches) {
        Grant g = grant(slots.get(slot), n);
        if (g != null) {
            return CompletableFuture.completedFuture(g);
        }
        if (fetches >= 3) {
            // Leases keep arriving used up or unusable (many concurrent takers, or a tiny lifetime): use one anyway.
            return fetch(slot, n).thenApply(s -> {
                Grant any = grant(s, n);
                if (any == null) {
                    throw new HayloftException("the directory's leases of volume " + s.lease.volume()
                            + " cannot serve " + n + " keys (count " + s.lease.count() + ")");
                }
                return any;
            });
        }
        return fetch(slot, n).thenCompose(s -> take(n, slot, fetches + 1));
    }

    /** Keys from {@code s}, or null when it is absent, retired, or has fewer than {@code n} keys left. */
    private Grant grant(Slot s, int n) {
        if (s == null || nanos.getAsLong() - s.retireNanos >= 0 && s.retireNanos != Long.MAX_VALUE) {
            return null;
        }
        if (excludedNow(s.lease.volume())) {
            return null;
        }
        long at = s.next.getAndAdd(n);
        if (at + n > s.lease.count()) {
            return null;
        }
        return new Grant(s.lease, s.lease.first() + at, n);
    }

    /** The slot's next lease: joins a fetch in flight, or starts one (replacing whatever the slot held). */
    private CompletableFuture<Slot> fetch(int slot, int n) {
        while (true) {
            CompletableFuture<Slot> f = fetching.get(slot);
            if (f != null) {
                return f;
            }
            CompletableFuture<Slot> mine = new CompletableFuture<>();
            if (!fetching.compareAndSet(slot, null, mine)) {
                continue;
            }
            CompletableFuture<Wire.Lease> call;
            try {
                call = source.lease(Math.max(leaseKeys, n), exclude());
            } catch (RuntimeException e) {
                call = CompletableFuture.failedFuture(e);
            }
            call.whenComplete((lease, t) -> {
                if (t == null && (lease == null || lease.count() < 1 || lease.replicas().isEmpty() || lease.volume() < 1)) {
                    t = new HayloftException("the directory answered an unusable lease: " + lease);
                }
                if (t != null) {
                    fetching.set(slot, null);
                    mine.completeExceptionally(Futures.unwrap(t));
                    return;
                }
                leasesFetched.incrementAndGet();
                Slot s = new Slot(lease, retireAt(lease));
                slots.set(slot, s);
                fetching.set(slot, null);
                mine.complete(s);
            });
            return mine;
        }
    }

    private long retireAt(Wire.Lease lease) {
        long now = nanos.getAsLong();
        long lifetime = lease.expiresMillis() - wallMillis.getAsLong();
        if (lease.expiresMillis() <= 0 || lifetime <= 0) {
            // No expiry given (an open cluster may give none), or clocks too far apart to tell: trust the
            // store's verdict (FORBIDDEN drops the lease).
            return lease.expiresMillis() <= 0 ? Long.MAX_VALUE : now;
        }
        long margin = Math.min(Math.max(MIN_MARGIN_MILLIS, lifetime / 10), lifetime / 2);
        return now + (lifetime - margin) * 1_000_000L;
    }

    /** Volumes excluded now. */
    List<Integer> exclude() {
        long now = nanos.getAsLong();
        List<Integer> out = new ArrayList<>();
        excluded.forEach((v, until) -> {
            if (until - now > 0) {
                out.add(v);
            } else {
                excluded.remove(v, until);
            }
        });
        return out;
    }

    private boolean excludedNow(int volume) {
        Long until = excluded.get(volume);
        return until != null && until - nanos.getAsLong() > 0;
    }

    /**
     * Drops the leases of volumes that the volume map no longer shows writable with every replica on
     * a store that is up (sealed, read-only, a replica's store failed, unknown): the directory would
     * not lease them now, so puts should not go on writing to them on an older lease.
     */
    void retain(IntPredicate writable) {
        for (int i = 0; i < slots.length(); i++) {
            Slot s = slots.get(i);
            if (s != null && !writable.test(s.lease.volume())) {
                slots.compareAndSet(i, s, null);
            }
        }
    }

    /** Drops every lease of {@code volume} and excludes it from lease requests for a while. */
    void abandon(int volume) {
        excluded.put(volume, nanos.getAsLong() + EXCLUDE_NANOS);
        for (int i = 0; i < slots.length(); i++) {
            Slot s = slots.get(i);
            if (s != null && s.lease.volume() == volume) {
                slots.compareAndSet(i, s, null);
            }
        }
    }
}
