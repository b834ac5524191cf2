package io.hayloft.client;

import io.hayloft.client.RemoteException.Kind;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.client.store.NeedleData;
import io.hayloft.client.store.StoreClient;
import io.hayloft.client.store.StoreException;
import io.hayloft.common.wire.BatchBody;
import io.hayloft.common.wire.PhotoId;
import io.hayloft.common.wire.Wire;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The write path of {@link HayloftClient}: split the photos into chunks (at most
 * {@link DirectoryClient#MAX_ASSIGN} photos and about {@code maxBatchBytes} each), and for each
 * chunk: assign keys, write every needle to every replica in parallel (one multi-write per replica,
 * or single PUTs for one needle or files), and only when all replicas acknowledged, commit the
 * alternates in the directory. A replica that keeps failing (after bounded retries) makes the chunk
 * go to a freshly assigned volume (after a backoff, so the directory can learn of a full or failed
 * volume from heartbeats and probes), up to {@code maxAssigns} assigns; then the put fails with a
 * {@link PartialFailureException} that names each failed replica and can be retried.
 *
 * <p>Thread-safe (immutable; every put works on its own state).
 */
final class Writer {
    private static final Logger LOG = LoggerFactory.getLogger(Writer.class);

    /** One chunk's assignment: where each part goes. Immutable. */
    private record Plan(int volume, List<String> replicas, String token, List<Upload> photos, List<PhotoId> ids,
                        List<Upload.Part> parts, byte[] batch) {
    }

    private final DirectoryClient directory;
    private final StoreClient stores;
    private final HttpTransport http;
    private final Retrier retrier;
    private final long maxBatchBytes;
    private final long maxObjectBytes;
    private final int maxAssigns;
    private final io.hayloft.client.cache.CacheClient cache; // null: no proactive push

    Writer(DirectoryClient directory, StoreClient stores, Retrier retrier, long maxBatchBytes, long maxObjectBytes,
           int maxAssigns, io.hayloft.client.cache.CacheClient cache) {
        this.maxAssigns = maxAssigns;
        this.cache = cache;
        this.directory = directory;
        this.stores = stores;
        this.http = stores.transport();
        this.retrier = retrier;
        this.maxBatchBytes = maxBatchBytes;
        this.maxObjectBytes = maxObjectBytes;
    }

    /** Puts the photos; the results are in the order of the photos and their alternates. */
    CompletableFuture<List<PutResult>> put(List<Upload> photos) {
        if (photos.isEmpty()) {
            return CompletableFuture.completedFuture(List.of());
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
        List<List<Upload>> chunks = chunks(photos);
        CompletableFuture<List<PutResult>> all = CompletableFuture.completedFuture(new ArrayList<>(photos.size()));
        for (List<Upload> chunk : chunks) {
            all = all.thenCompose(acc -> putChunk(chunk, 1).thenApply(r -> {
                acc.addAll(r);
                return acc;
            }));
        }
        return all;
    }

    private List<List<Upload>> chunks(List<Upload> photos) {
        List<List<Upload>> out = new ArrayList<>();
        List<Upload> cur = new ArrayList<>();
        long bytes = 0;
        for (Upload u : photos) {
            long b = u.bytes() + (long) BatchBody.RECORD_HEADER * u.parts().size();
            if (!cur.isEmpty() && (cur.size() >= DirectoryClient.MAX_ASSIGN || bytes + b > maxBatchBytes)) {
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

    private CompletableFuture<List<PutResult>> putChunk(List<Upload> chunk, int attempt) {
        return retrier.run(() -> directory.assign(chunk.size()), Retrier::remoteRetryable)
                .thenApply(a -> plan(a, chunk))
                .thenCompose(plan -> writeAll(plan, plan.replicas()).thenCompose(failures -> {
                    if (failures.isEmpty()) {
                        return commit(plan);
                    }
                    List<String> ok = new ArrayList<>(plan.replicas());
                    ok.removeAll(failures.keySet());
                    if (attempt < maxAssigns && reassignable(failures)) {
                        LOG.info("put of {} photos on volume {} failed on {}; assigning again (attempt {})",
                                chunk.size(), plan.volume(), failures.keySet(), attempt + 1);
                        return retrier.pause(attempt).thenCompose(x -> putChunk(chunk, attempt + 1));
                    }
                    throw new PartialFailureException("put", plan.volume(), plan.ids(), failures, ok,
                            () -> retryPlan(plan, List.copyOf(failures.keySet())));
                }));
    }

    private CompletableFuture<List<PhotoId>> retryPlan(Plan plan, List<String> replicas) {
        return writeAll(plan, replicas).thenCompose(failures -> {
            if (!failures.isEmpty()) {
                List<String> ok = new ArrayList<>(plan.replicas());
                ok.removeAll(failures.keySet());
                throw new PartialFailureException("put", plan.volume(), plan.ids(), failures, ok,
                        () -> retryPlan(plan, List.copyOf(failures.keySet())));
            }
            return commit(plan).thenApply(r -> plan.ids());
        });
    }

    private static boolean reassignable(Map<String, RemoteException> failures) {
        for (RemoteException e : failures.values()) {
            boolean volumeLevel = e.code() == StoreException.VOLUME_READ_ONLY || e.code() == StoreException.VOLUME_NOT_FOUND
                    || e.code() == StoreException.FORBIDDEN;
            if (!e.isRetryable() && !volumeLevel) {
                return false;
            }
        }
        return true;
    }

    private Plan plan(Wire.AssignResponse a, List<Upload> chunk) {
        String dir = directory.addresses().get(0);
        if (a.photos().size() != chunk.size() || a.replicas().isEmpty() || a.token() == null || a.volume() < 1) {
            throw new DirectoryException(dir, Kind.BAD_RESPONSE, 200, 0, null, null, dir + ": assign of " + chunk.size()
                    + " keys answered volume " + a.volume() + ", " + a.photos().size() + " keys, " + a.replicas().size()
                    + " replicas, token " + (a.token() == null ? "missing" : "present"), null);
        }
        List<PhotoId> ids = new ArrayList<>();
        List<Upload.Part> parts = new ArrayList<>();
        long total = 0;
        for (int i = 0; i < chunk.size(); i++) {
            Wire.Assignment as = a.photos().get(i);
            long cookie;
            try {
                cookie = Long.parseUnsignedLong(as.cookie(), 16);
            } catch (RuntimeException e) {
                throw new DirectoryException(dir, Kind.BAD_RESPONSE, 200, 0, null, null,
                        dir + ": assign answered a cookie that is not hex: '" + as.cookie() + "'", e);
            }
            for (Upload.Part p : chunk.get(i).parts()) {
                ids.add(new PhotoId(a.volume(), as.key(), p.alt(), cookie));
                parts.add(p);
                total += p.size() + BatchBody.RECORD_HEADER;
            }
        }
        byte[] batch = null;
        if (parts.size() > 1 && total <= maxBatchBytes + maxObjectBytes) {
            List<NeedleData> needles = new ArrayList<>(parts.size());
            for (int i = 0; i < parts.size(); i++) {
                PhotoId id = ids.get(i);
                needles.add(new NeedleData(id.key(), id.alt(), id.cookie(), bytes(parts.get(i))));
            }
            batch = BatchBody.encode(needles);
        }
        return new Plan(a.volume(), a.replicas(), a.token(), chunk, ids, parts, batch);
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
            writes.put(r, retrier.run(() -> writeReplica(plan, r), Retrier::remoteRetryable));
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
        CompletableFuture<Void> f = CompletableFuture.completedFuture(null);
        for (int i = 0; i < plan.parts().size(); i++) {
            Upload.Part p = plan.parts().get(i);
            PhotoId id = plan.ids().get(i);
            f = f.thenCompose(x -> p.data() != null ? stores.write(replica, id, p.data(), plan.token())
                    : stores.write(replica, id, p.file(), plan.token()));
        }
        return f;
    }

    private CompletableFuture<List<PutResult>> commit(Plan plan) {
        Map<Long, List<Integer>> alts = new LinkedHashMap<>();
        for (PhotoId id : plan.ids()) {
            alts.computeIfAbsent(id.key(), k -> new ArrayList<>()).add(id.alt());
        }
        List<Wire.Commit> commits = new ArrayList<>(alts.size());
        alts.forEach((k, v) -> commits.add(new Wire.Commit(k, v)));
        String base = http.baseUrl(plan.replicas().get(0));
        return retrier.run(() -> directory.commit(commits), Retrier::remoteRetryable).handle((v, t) -> {
            if (t != null) {
                Throwable c = Futures.unwrap(t);
                if (c instanceof RemoteException re) {
                    throw new PartialFailureException("commit", plan.volume(), plan.ids(), Map.of(re.server(), re),
                            plan.replicas(), () -> commit(plan).thenApply(r -> plan.ids()));
                }
                throw c instanceof RuntimeException rt ? rt : new HayloftException(c.toString(), c);
            }
            List<PutResult> out = new ArrayList<>(plan.ids().size());
            for (PhotoId id : plan.ids()) {
                out.add(new PutResult(id, base + id.needlePath()));
            }
            return out;
        }).thenCompose(out -> push(plan).thenApply(v -> out));
    }

    /** Proactive push of the committed needles held in memory into their cache nodes; best effort, never fails. */
    private CompletableFuture<Void> push(Plan plan) {
        if (cache == null) {
            return CompletableFuture.completedFuture(null);
        }
        List<CompletableFuture<Boolean>> pushes = new ArrayList<>();
        for (int i = 0; i < plan.ids().size(); i++) {
            byte[] data = plan.parts().get(i).data();
            if (data != null) {
                pushes.add(cache.push(plan.replicas().get(0), plan.ids().get(i), data, plan.token()));
            }
        }
        return CompletableFuture.allOf(pushes.toArray(new CompletableFuture<?>[0]));
    }
}
