package io.hayloft.client;

import io.hayloft.client.cache.CacheClient;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.client.http.RetryPolicy;
import io.hayloft.client.store.NeedleData;
import io.hayloft.client.store.StoreClient;
import io.hayloft.client.store.StoreException;
import io.hayloft.format.wire.BatchBody;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.format.wire.Wire;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.security.SecureRandom;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The write path of {@link HayloftClient}, with no directory call per photo: split the photos into
 * chunks (at most {@link #MAX_CHUNK} photos and about {@code maxBatchBytes} each); each chunk takes
 * consecutive keys of one allocator lease ({@link LeasePool}) and a random 64-bit cookie per photo
 * ({@link SecureRandom}; every alternate key of a photo shares its cookie), is written to every
 * replica of the lease's volume in parallel (one multi-write per replica, or single PUTs for one
 * needle or files) with the lease's token, and is acknowledged when every replica acknowledged.
 * There is no commit: the stores are the authority for which photos exist.
 *
 * <p>A replica that refuses the volume ({@code VOLUME_READ_ONLY}, {@code VOLUME_NOT_FOUND}, or
 * {@code FORBIDDEN}, an expired token) moves the chunk: the volume's leases are dropped and the
 * volume excluded from lease requests for a while, the chunk is written again with new keys on a new
 * lease, and the needles the old volume's replicas took are abandoned: put in its delete log (one
 * {@code logDeletes} call) and deleted on those replicas, best effort, so they are never readable.
 * This repeats until the chunk is written or the directory answers {@code NO_WRITABLE_VOLUME}. Other
 * failures (a replica down or answering 5xx after bounded retries) move the chunk the same way, at
 * most {@code maxAssigns} times in all; then the put fails with a {@link PartialFailureException}
 * that names each failed replica and whose {@link PartialFailureException#retry()} writes the same
 * needles to the failed replicas again. A chunk of several photos that is larger than a whole volume
 * ({@code NEEDLE_TOO_LARGE}; the volume stays writable) is written in two halves, each on its own
 * lease; a single photo that large fails at once.
 *
 * <p><b>Coalescing.</b> Puts of a few photos held in memory (a single put, typically) do not each
 * make their own requests when others are under way: at most {@code coalesce} combined writes are in
 * flight, and the puts that arrive meanwhile wait in a queue that the next combined write takes
 * whole (up to {@link #MAX_CHUNK} photos and {@link #MAX_COMBINED_BYTES}): one chunk on one lease,
 * one multi-write per replica, one fsync per replica (group commit in the client). A put that finds
 * a free slot is sent at once, so an idle client adds no delay; under load one request per replica
 * carries as many puts as arrived during the previous one. Each put is still acknowledged only when
 * every replica holds it durably. A combined write that fails on some replicas gives every put in it
 * its own {@link PartialFailureException}, naming only that put's photos, whose retry writes only
 * them; one that its volume refuses moves (or is halved) as any chunk does, and its callers get
 * their slices of the results. {@code coalesce} 0 sends every put on its own.
 *
 * <p>Thread-safe (every put works on its own state; the lease pool is thread-safe; the coalescing
 * queue is guarded by its own lock).
 */
final class Writer {
    private static final Logger LOG = LoggerFactory.getLogger(Writer.class);
    /** Most photos in one chunk (one multi-write). */
    static final int MAX_CHUNK = 1000;
    /**
     * Most bytes of one combined write: enough to carry 16 puts of 64 KiB, small next to a volume, so
     * a volume that cannot take a combined write had little room left.
     */
    static final long MAX_COMBINED_BYTES = 1L << 20;
    /** Volume moves one chunk may make on volume-level refusals before giving up (a guard; the directory normally says NO_WRITABLE_VOLUME first). */
    private static final int MAX_VOLUME_MOVES = 64;
    /** Backoffs a lease request waits while the directory has no writable volume outside the client's exclusions. */
    static final int EXCLUSION_WAITS = 10;

    /** One chunk's placement on a lease: where each part goes. Immutable. */
    private record Plan(int volume, List<String> replicas, String token, List<PhotoId> ids, List<Upload.Part> parts,
                        byte[] batch) {
    }

    /** A put waiting to be coalesced: its photos, their bytes and needles, and its caller's future. */
    private record Pending(List<Upload> photos, long bytes, int needles, CompletableFuture<List<PutResult>> result) {
    }

    /** A put's failure on some replicas, with the plan it failed on (to give each coalesced put its own). */
    private static final class PlanFailure extends PartialFailureException {
        private static final long serialVersionUID = 1L;
        private final transient Plan plan;

        PlanFailure(Plan plan, Map<String, RemoteException> failures, List<String> succeeded,
                    Supplier<CompletableFuture<List<PhotoId>>> retry) {
            super("put", plan.volume(), plan.ids(), failures, succeeded, retry);
            this.plan = plan;
        }
    }

    private final DirectoryClient directory;
    private final StoreClient stores;
    private final HttpTransport http;
    private final RetryPolicy retrier;
    private final LeasePool leases;
    private final VolumeMapCache maps; // refreshed when a volume refuses writes
    private final long maxBatchBytes;
    private final long maxObjectBytes;
    private final int maxAssigns;
    private final CacheClient cache; // null: no proactive push
    private final SecureRandom random = new SecureRandom();
    private final int coalesce; // combined writes in flight; 0: every put on its own
    private final long combinedBytes; // most bytes of one combined write
    private final ArrayDeque<Pending> waiting = new ArrayDeque<>(); // guarded by itself
    private int combinedInFlight; // guarded by waiting

    Writer(DirectoryClient directory, StoreClient stores, RetryPolicy retrier, LeasePool leases, VolumeMapCache maps,
           long maxBatchBytes, long maxObjectBytes, int maxAssigns, CacheClient cache, int coalesce) {
        this.coalesce = coalesce;
        this.combinedBytes = Math.min(MAX_COMBINED_BYTES, maxBatchBytes);
        this.maxAssigns = maxAssigns;
        this.cache = cache;
        this.directory = directory;
        this.stores = stores;
        this.http = stores.transport();
        this.retrier = retrier;
        this.leases = leases;
        this.maps = maps;
        this.maxBatchBytes = maxBatchBytes;
        this.maxObjectBytes = maxObjectBytes;
    }

    /** Puts the photos; the results are in the order of the photos and their alternates. */
    CompletableFuture<List<PutResult>> put(List<Upload> given) {
        return put(given, null);
    }

    /**
     * Puts the photos, announcing each placement first: {@code before} (null: none) is given the ids
     * of every chunk's needles once their volume, keys and cookies are chosen and before any byte is
     * sent, again with new ids each time a chunk moves to another volume; the chunk is written only
     * after the returned future completed, and a failed one fails the put with nothing written. Such a
     * put is never coalesced with others.
     */
    CompletableFuture<List<PutResult>> put(List<Upload> given, Function<List<PhotoId>, CompletableFuture<Void>> before) {
        if (given.isEmpty()) {
            return CompletableFuture.completedFuture(List.of());
        }
        List<Upload> photos = new ArrayList<>(given.size()); // alternates added after this call are not this put's
        for (Upload u : given) {
            photos.add(u == null ? null : u.snapshot());
        }
        for (int i = 0; i < photos.size(); i++) {
            Upload u = photos.get(i);
            if (u == null || u.parts().isEmpty()) {
                throw new IllegalArgumentException("photo " + i + " of the batch has no data (no alternate key)");
            }
            for (Upload.Part p : u.parts()) {
                if (p.size() > maxObjectBytes) {
                    throw new IllegalArgumentException("photo " + i + " alternate " + Integer.toUnsignedString(p.alt())
                            + " is " + p.size() + " bytes; the most one object may have is " + maxObjectBytes);
                }
            }
        }
        Pending pending = coalesce > 0 && before == null ? coalescable(photos) : null;
        if (pending != null) {
            return coalesced(pending);
        }
        List<List<Upload>> chunks = chunks(photos);
        if (chunks.size() == 1) { // a single put, or a batch that fits one request
            return putChunk(chunks.get(0), 1, 0, before);
        }
        CompletableFuture<List<PutResult>> all = CompletableFuture.completedFuture(new ArrayList<>(photos.size()));
        for (List<Upload> chunk : chunks) {
            all = all.thenCompose(acc -> putChunk(chunk, 1, 0, before).thenApply(r -> {
                acc.addAll(r);
                return acc;
            }));
        }
        return all;
    }

    /**
     * The put as it waits to join a combined write, or null when it goes on its own: it holds a file,
     * or is more than an eighth of a combined write's bytes or of {@link #MAX_CHUNK} photos (it is a
     * batch already).
     */
    private Pending coalescable(List<Upload> photos) {
        if (photos.size() > MAX_CHUNK / 8) {
            return null;
        }
        long bytes = 0;
        int needles = 0;
        for (Upload u : photos) {
            for (Upload.Part p : u.parts()) {
                if (p.data() == null) {
                    return null;
                }
            }
            bytes += u.bytes() + (long) BatchBody.RECORD_HEADER * u.parts().size();
            needles += u.parts().size();
        }
        return bytes <= combinedBytes / 8 ? new Pending(photos, bytes, needles, new CompletableFuture<>()) : null;
    }

    private CompletableFuture<List<PutResult>> coalesced(Pending p) {
        List<Pending> group;
        synchronized (waiting) {
            waiting.add(p);
            if (combinedInFlight >= coalesce) {
                return p.result(); // the write in flight that ends first takes it
            }
            combinedInFlight++;
            group = drain();
        }
        send(group);
        return p.result();
    }

    /** The waiting puts that fit one combined write, oldest first (at least one). Caller holds the lock. */
    private List<Pending> drain() {
        List<Pending> group = new ArrayList<>();
        long bytes = 0;
        int photos = 0;
        while (!waiting.isEmpty()) {
            Pending next = waiting.peek();
            if (!group.isEmpty() && (photos + next.photos().size() > MAX_CHUNK || bytes + next.bytes() > combinedBytes)) {
                break;
            }
            group.add(waiting.poll());
            bytes += next.bytes();
            photos += next.photos().size();
        }
        return group;
    }

    /** The next group for a combined write that just ended, or null (and one slot fewer in flight) when none waits. */
    private List<Pending> nextGroup() {
        synchronized (waiting) {
            if (waiting.isEmpty()) {
                combinedInFlight--;
                return null;
            }
            return drain();
        }
    }

    /** Writes the group as one chunk, then the groups that wait behind it, in a loop while writes end at once. */
    private void send(List<Pending> group) {
        while (group != null) {
            List<Upload> all;
            if (group.size() == 1) {
                all = group.get(0).photos();
            } else {
                all = new ArrayList<>();
                for (Pending p : group) {
                    all.addAll(p.photos());
                }
            }
            CompletableFuture<List<PutResult>> f;
            try {
                f = putChunk(all, 1, 0, null);
            } catch (RuntimeException e) {
                f = CompletableFuture.failedFuture(e);
            }
            // The slot passes to the next group (or is freed) before this group's callers run their own
            // code: a caller that puts again from its callback finds the queue moving, not its own slot held.
            if (!f.isDone()) {
                List<Pending> g = group;
                f.whenComplete((r, t) -> {
                    List<Pending> next = nextGroup();
                    try {
                        send(next);
                    } finally {
                        deliver(g, r, t);
                    }
                });
                return;
            }
            List<Pending> g = group;
            group = nextGroup();
            f.whenComplete((r, t) -> deliver(g, r, t));
        }
    }

    /** Each put of a combined write gets its own results, or its own failure. */
    private void deliver(List<Pending> group, List<PutResult> results, Throwable t) {
        try {
            split(group, results, t);
        } catch (RuntimeException | Error e) { // a bug here must not leave a caller waiting for ever
            for (Pending p : group) {
                p.result().completeExceptionally(e);
            }
            throw e;
        }
    }

    private void split(List<Pending> group, List<PutResult> results, Throwable t) {
        if (group.size() == 1) {
            if (t == null) {
                group.get(0).result().complete(results);
            } else {
                group.get(0).result().completeExceptionally(Futures.unwrap(t));
            }
            return;
        }
        Throwable c = t == null ? null : Futures.unwrap(t);
        int from = 0;
        for (Pending p : group) {
            int to = from + p.needles();
            if (c == null) {
                p.result().complete(List.copyOf(results.subList(from, to)));
            } else if (c instanceof PlanFailure pf) {
                Plan sub = subPlan(pf.plan, from, to);
                List<String> failed = List.copyOf(pf.failures().keySet());
                PartialFailureException own = new PlanFailure(sub, pf.failures(), pf.succeeded(), () -> retryPlan(sub, failed));
                for (Throwable s : pf.getSuppressed()) {
                    if (!pf.failures().containsValue(s)) {
                        own.addSuppressed(s);
                    }
                }
                p.result().completeExceptionally(own);
            } else {
                p.result().completeExceptionally(c);
            }
            from = to;
        }
    }

    /** Needles {@code from} (inclusive) to {@code to} of a plan, on the same lease and replicas. */
    private Plan subPlan(Plan plan, int from, int to) {
        List<PhotoId> ids = List.copyOf(plan.ids().subList(from, to));
        List<Upload.Part> parts = List.copyOf(plan.parts().subList(from, to));
        return new Plan(plan.volume(), plan.replicas(), plan.token(), ids, parts, batchBody(ids, parts));
    }

    private List<List<Upload>> chunks(List<Upload> photos) {
        List<List<Upload>> out = new ArrayList<>();
        List<Upload> cur = new ArrayList<>();
        long bytes = 0;
        for (Upload u : photos) {
            long b = u.bytes() + (long) BatchBody.RECORD_HEADER * u.parts().size();
            if (!cur.isEmpty() && (cur.size() >= MAX_CHUNK || bytes + b > maxBatchBytes)) {
                out.add(cur);
                cur = new ArrayList<>();
                bytes = 0;
            }
            cur.add(u);
            bytes += b;
        }
        out.add(cur);
        return out;
    }

    /**
     * Writes one chunk on a lease. {@code assigns}: leases used so far for non-volume failures
     * (bounded by maxAssigns); {@code moves}: volume-level refusals so far.
     */
    private CompletableFuture<List<PutResult>> putChunk(List<Upload> chunk, int assigns, int moves,
                                                        Function<List<PhotoId>, CompletableFuture<Void>> before) {
        return lease(chunk.size(), 1)
                .thenCompose(g -> putChunk(chunk, g, assigns, moves, before));
    }

    private CompletableFuture<List<PutResult>> putChunk(List<Upload> chunk, LeasePool.Grant grant, int assigns, int moves,
                                                        Function<List<PhotoId>, CompletableFuture<Void>> before) {
        Plan plan = plan(grant, chunk);
        return announce(plan, before).thenCompose(x -> writeAll(plan, plan.replicas())).thenCompose(failures -> {
            if (failures.isEmpty()) {
                return done(plan);
            }
            List<String> ok = new ArrayList<>(plan.replicas());
            ok.removeAll(failures.keySet());
            boolean volumeLevel = failures.values().stream().anyMatch(Writer::volumeLevel);
            boolean tooLarge = failures.values().stream().anyMatch(e -> e.code() == StoreException.NEEDLE_TOO_LARGE);
            if (tooLarge && !volumeLevel && chunk.size() > 1) { // a batch larger than a whole volume: halves, each on its own lease
                LOG.info("volume {} cannot hold a write of {} photos ({}); writing it in two halves",
                        plan.volume(), chunk.size(), failures.values().stream().map(RemoteException::errorName).toList());
                abandonQuietly(plan, ok);
                List<Upload> first = chunk.subList(0, chunk.size() / 2);
                List<Upload> second = chunk.subList(chunk.size() / 2, chunk.size());
                return putChunk(first, assigns, moves, before).thenCompose(a -> putChunk(second, assigns, moves, before)
                        .thenApply(b -> {
                            List<PutResult> both = new ArrayList<>(a.size() + b.size());
                            both.addAll(a);
                            both.addAll(b);
                            return both;
                        }));
            }
            if (volumeLevel && moves < MAX_VOLUME_MOVES) {
                LOG.info("volume {} refused a put of {} photos ({}); moving to another volume",
                        plan.volume(), chunk.size(), failures.values().stream().map(RemoteException::errorName).toList());
                leases.abandon(plan.volume());
                maps.refreshNow();
                abandonQuietly(plan, ok);
                return putChunk(chunk, assigns, moves + 1, before);
            }
            PartialFailureException failed = new PlanFailure(plan, failures, ok, () -> retryPlan(plan, List.copyOf(failures.keySet())));
            if (assigns >= maxAssigns || !reassignable(failures)) {
                throw failed;
            }
            LOG.info("put of {} photos on volume {} failed on {}; moving to another volume (lease {})",
                    chunk.size(), plan.volume(), failures.keySet(), assigns + 1);
            leases.abandon(plan.volume());
            maps.refreshNow();
            // Only when another volume takes the chunk is this attempt abandoned; else it is the failure to report (and retry).
            return retrier.pause(assigns)
                    .thenCompose(x -> lease(chunk.size(), 1))
                    .handle((g, t) -> {
                        if (t != null) {
                            failed.addSuppressed(Futures.unwrap(t));
                            return CompletableFuture.<List<PutResult>>failedFuture(failed);
                        }
                        abandonQuietly(plan, ok);
                        return putChunk(chunk, g, assigns + 1, moves, before);
                    }).thenCompose(f -> f);
        });
    }

    /** The plan's ids given to {@code before} (null: nothing to wait for); a callback that throws fails the put. */
    private static CompletableFuture<Void> announce(Plan plan, Function<List<PhotoId>, CompletableFuture<Void>> before) {
        if (before == null) {
            return CompletableFuture.completedFuture(null);
        }
        try {
            CompletableFuture<Void> f = before.apply(List.copyOf(plan.ids()));
            return f != null ? f : CompletableFuture.failedFuture(new NullPointerException("beforeWrite returned null"));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private void abandonQuietly(Plan plan, List<String> took) {
        abandon(plan, took).exceptionally(t -> {
            LOG.warn("could not abandon {} needles on volume {} ({}); the photos were never acknowledged",
                    plan.ids().size(), plan.volume(), Futures.unwrap(t).toString());
            return null;
        });
    }

    /**
     * Keys for a chunk: the lease pool's, fetching a lease when needed with the retrier's bounded
     * retries. {@code NO_WRITABLE_VOLUME} while the client excludes volumes is waited out (up to
     * {@link #EXCLUSION_WAITS} backoffs): the volumes the client just found full are still writable in
     * the directory's view until their stores' next heartbeat, after which it creates new ones.
     */
    private CompletableFuture<LeasePool.Grant> lease(int n, int wait) {
        return retrier.retry(() -> leases.take(n), Writer::leaseRetryable).handle((g, t) -> {
            if (t == null) {
                return CompletableFuture.completedFuture(g);
            }
            Throwable c = Futures.unwrap(t);
            if (c instanceof DirectoryException d && d.code() == DirectoryException.NO_WRITABLE_VOLUME
                    && !leases.exclude().isEmpty() && wait < EXCLUSION_WAITS) {
                return retrier.pause(wait).thenCompose(x -> lease(n, wait + 1));
            }
            return CompletableFuture.<LeasePool.Grant>failedFuture(c);
        }).thenCompose(f -> f);
    }

    /** Whether a lease call may be tried again: not when the directory has no writable volume. */
    private static boolean leaseRetryable(Throwable t) {
        if (t instanceof DirectoryException d && d.code() == DirectoryException.NO_WRITABLE_VOLUME) {
            return false;
        }
        return Futures.remoteRetryable(t);
    }

    /** A replica's refusal of the whole volume: read-only (full), no such volume, or a refused (expired) token. */
    static boolean volumeLevel(RemoteException e) {
        return e.code() == StoreException.VOLUME_READ_ONLY || e.code() == StoreException.VOLUME_NOT_FOUND
                || e.code() == StoreException.FORBIDDEN;
    }

    /**
     * Makes the plan's needles on an abandoned volume unreadable: one delete-log entry per photo,
     * then {@code DELETE /<vol>/<key>?cookie} on the replicas that took them. Best effort.
     */
    private CompletableFuture<Void> abandon(Plan plan, List<String> took) {
        if (took.isEmpty()) {
            return CompletableFuture.completedFuture(null);
        }
        Map<Long, PhotoId> photos = new LinkedHashMap<>();
        Map<Long, Integer> needles = new LinkedHashMap<>();
        for (PhotoId id : plan.ids()) {
            photos.putIfAbsent(id.key(), id);
            needles.merge(id.key(), 1, Integer::sum);
        }
        List<Wire.DeleteEntry> entries = new ArrayList<>();
        photos.forEach((k, id) -> entries.add(new Wire.DeleteEntry(0, k, id.cookieHex(), needles.get(k))));
        return retrier.retry(() -> directory.logDeletes(plan.volume(), entries), Futures::remoteRetryable).thenCompose(log -> {
            List<CompletableFuture<?>> deletes = new ArrayList<>();
            for (String r : took) {
                for (PhotoId id : photos.values()) {
                    deletes.add(stores.deleteKey(r, plan.volume(), id.key(), id.cookie(), log.token()).exceptionally(t -> null));
                }
            }
            return CompletableFuture.allOf(deletes.toArray(new CompletableFuture<?>[0]));
        });
    }

    private CompletableFuture<List<PhotoId>> retryPlan(Plan plan, List<String> replicas) {
        return writeAll(plan, replicas).thenCompose(failures -> {
            if (!failures.isEmpty()) {
                List<String> ok = new ArrayList<>(plan.replicas());
                ok.removeAll(failures.keySet());
                throw new PlanFailure(plan, failures, ok, () -> retryPlan(plan, List.copyOf(failures.keySet())));
            }
            return done(plan).thenApply(r -> plan.ids());
        });
    }

    private static boolean reassignable(Map<String, RemoteException> failures) {
        for (RemoteException e : failures.values()) {
            if (!e.isRetryable() && !volumeLevel(e)) {
                return false;
            }
        }
        return true;
    }

    private Plan plan(LeasePool.Grant g, List<Upload> chunk) {
        Wire.Lease lease = g.lease();
        List<PhotoId> ids = new ArrayList<>();
        List<Upload.Part> parts = new ArrayList<>();
        long total = 0;
        for (int i = 0; i < chunk.size(); i++) {
            long key = g.first() + i;
            long cookie = random.nextLong();
            for (Upload.Part p : chunk.get(i).parts()) {
                ids.add(new PhotoId(lease.volume(), key, p.alt(), cookie));
                parts.add(p);
                total += p.size() + BatchBody.RECORD_HEADER;
            }
        }
        byte[] batch = total <= maxBatchBytes + maxObjectBytes ? batchBody(ids, parts) : null;
        return new Plan(lease.volume(), lease.replicas(), lease.token(), ids, parts, batch);
    }

    /** The multi-write body of these needles, or null for a single needle (a single PUT). */
    private static byte[] batchBody(List<PhotoId> ids, List<Upload.Part> parts) {
        if (parts.size() <= 1) {
            return null;
        }
        List<NeedleData> needles = new ArrayList<>(parts.size());
        for (int i = 0; i < parts.size(); i++) {
            PhotoId id = ids.get(i);
            needles.add(new NeedleData(id.key(), id.alt(), id.cookie(), bytes(parts.get(i))));
        }
        return BatchBody.encode(needles);
    }

    private static byte[] bytes(Upload.Part p) {
        if (p.data() != null) {
            return p.data();
        }
        try {
            return Files.readAllBytes(p.file());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + p.file() + ": " + e.getMessage(), e);
        }
    }

    /** Writes the plan to {@code replicas} in parallel; completes with the failures (empty when all acknowledged). */
    private CompletableFuture<Map<String, RemoteException>> writeAll(Plan plan, List<String> replicas) {
        Map<String, CompletableFuture<Void>> writes = new LinkedHashMap<>();
        for (String r : replicas) {
            writes.put(r, retrier.retry(() -> writeReplica(plan, r), Futures::remoteRetryable));
        }
        return CompletableFuture.allOf(writes.values().stream().map(f -> f.exceptionally(t -> null))
                .toArray(CompletableFuture[]::new)).thenApply(x -> {
                    Map<String, RemoteException> failures = new LinkedHashMap<>();
                    for (Map.Entry<String, CompletableFuture<Void>> e : writes.entrySet()) {
                        Throwable t = e.getValue().handle((v, err) -> err).join();
                        if (t != null) {
                            Throwable c = Futures.unwrap(t);
                            if (!(c instanceof RemoteException re)) {
                                throw c instanceof RuntimeException rt ? rt : new HayloftException(c.toString(), c);
                            }
                            failures.put(e.getKey(), re);
                        }
                    }
                    return failures;
                });
    }

    private CompletableFuture<Void> writeReplica(Plan plan, String replica) {
        if (plan.batch() != null) {
            return stores.writeBatch(replica, plan.volume(), plan.batch(), plan.parts().size(), plan.token());
        }
        if (plan.parts().size() == 1) { // a single put: no chain of stages
            return writePart(plan, 0, replica);
        }
        CompletableFuture<Void> f = CompletableFuture.completedFuture(null);
        for (int i = 0; i < plan.parts().size(); i++) {
            int part = i;
            f = f.thenCompose(x -> writePart(plan, part, replica));
        }
        return f;
    }

    /** Writes part {@code i} of the plan to {@code replica}, from memory or from its file. */
    private CompletableFuture<Void> writePart(Plan plan, int i, String replica) {
        Upload.Part p = plan.parts().get(i);
        PhotoId id = plan.ids().get(i);
        return p.data() != null ? stores.write(replica, id, p.data(), plan.token()) : stores.write(replica, id, p.file(), plan.token());
    }

    /** Every replica acknowledged: the results, after the best-effort push into the cache. */
    private CompletableFuture<List<PutResult>> done(Plan plan) {
        String base = http.baseUrl(plan.replicas().get(0));
        List<PutResult> out = new ArrayList<>(plan.ids().size());
        for (PhotoId id : plan.ids()) {
            out.add(new PutResult(id, base + id.needlePath()));
        }
        return push(plan).thenApply(v -> out);
    }

    /** Proactive push of the needles held in memory into their cache nodes; best effort, never fails. */
    private CompletableFuture<Void> push(Plan plan) {
        if (cache == null) {
            return CompletableFuture.completedFuture(null);
        }
        List<CompletableFuture<Boolean>> pushes = new ArrayList<>();
        for (int i = 0; i < plan.ids().size(); i++) {
            byte[] data = plan.parts().get(i).data();
            if (data != null) {
                pushes.add(cache.push(plan.replicas().get(0), plan.ids().get(i), data, plan.token())
                        .exceptionally(t -> false));
            }
        }
        return CompletableFuture.allOf(pushes.toArray(new CompletableFuture<?>[0])).handle((v, t) -> null);
    }
}
