package io.hayloft.client;

import io.hayloft.client.cache.CacheClient;
import io.hayloft.client.cold.ColdReads;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.client.http.RetryPolicy;
import io.hayloft.client.store.NotFoundException;
import io.hayloft.client.store.StoreClient;
import io.hayloft.client.store.StoreException;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.format.ring.CacheRouting;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.format.wire.Wire;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import javax.net.ssl.SSLContext;

/**
 * The Hayloft client: what applications use to store, read and delete photos (small write-once
 * blobs). Built from the address of the directory:
 *
 * <pre>{@code
 * try (HayloftClient hayloft = HayloftClient.builder().directory("127.0.0.1:7070").build()) {
 *     PutResult stored = hayloft.put(jpegBytes);              // written to every replica
 *     String keep = stored.id().toString();                   // "3,1234,0,8f3a1b2c3d4e5f60"
 *     byte[] back = hayloft.get(PhotoId.parse(keep));          // from a replica, with failover
 *     List<PutResult> many = hayloft.putAll(List.of(a, b, c)); // one multi-write per replica
 *     hayloft.getAsync(stored.id()).thenAccept(bytes -> ...);  // never blocks the caller
 *     hayloft.delete(stored.id());
 * }
 * }</pre>
 *
 * <p>No directory call per photo (docs/client.md). The client caches the directory's volume map
 * (where every logical volume lives; refreshed in the background every {@code volumeMapRefresh},
 * default 1 s, with {@code If-None-Match}, and at once on a volume-level error).
 *
 * <p>Writes: keys come from allocator leases ({@code leaseKeys} keys each, default 1,000, so one
 * lease call per 1,000 photos; a few leases at once, on different volumes when the directory has
 * them, so concurrent writers spread); the client chooses each photo's 64-bit cookie at random; the
 * needles go to every replica in parallel (one multi-write per replica for a batch) and the put
 * succeeds when every replica acknowledged. There is no commit: the stores are the authority. A
 * volume that refuses writes (read-only or full, unknown, an expired token) is left for another:
 * the put is written again there with new keys, and what the old volume's replicas took is put in
 * its delete log and deleted, so it never becomes readable. A put fails only when the directory has
 * no writable volume, or after {@code maxAssigns} moves for replicas that keep failing (then with a
 * {@link PartialFailureException} naming each failed replica).
 *
 * <p>Reads: the photo's volume in the cached map gives the places to read from: the key's cache node
 * and gutter node when the cluster's read policy is {@code cache}, then the replicas on healthy
 * stores (rotated per read to spread the load), then the others; the read fails over from one place
 * to the next on an error or a timeout. A photo of an erasure-coded volume is read through its
 * cache node's cold URL ({@code http://<cache>/cold/...}) and else by the client itself from the
 * stripes. A missing or deleted photo, or a wrong cookie, is a {@link PhotoNotFoundException}, with
 * the same message whichever it was.
 *
 * <p>Deletes: the replicas confirm the photo (key and cookie), the directory appends it to the
 * volume's delete log, then its needles are deleted on every replica that answers; a replica that
 * is down applies the log before it serves the volume again.
 *
 * <p>Every operation has an asynchronous form returning a {@link CompletableFuture} that completes
 * on the client's executor (never blocking the calling thread, so it can be called from an event
 * loop), and a blocking form that waits for it. Errors are unchecked {@link HayloftException}s.
 *
 * <p>Thread-safe: build one client per application and share it; {@link #close()} it at the end.
 */
public final class HayloftClient implements AutoCloseable {
    /** The store part of a cache prefix that reads cold needles ({@code <scheme>://<cache>/cold}). */
    static final String COLD_PREFIX = "cold";
    /** Leases held at once: concurrent puts spread over this many volumes (when the directory has them). */
    static final int LEASE_SLOTS = 4;
    private final DirectoryClient directory;
    private final StoreClient stores;
    private final Writer writer;
    private final Reader reader;
    private final VolumeMapCache maps;
    private final LeasePool leases;
    private final RetryPolicy retrier;
    private final ExecutorService ownExecutor;
    private final long maxObjectBytes;
    private final CacheClient cache; // null without cache nodes
    private final ColdReads cold; // reads of erasure-coded volumes (docs/raid.md)

    private HayloftClient(Builder b) {
        ExecutorService own = null;
        Executor executor = b.executor;
        if (executor == null) {
            AtomicInteger n = new AtomicInteger();
            own = Executors.newCachedThreadPool(r -> {
                Thread t = new Thread(r, "hayloft-client-" + n.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
            executor = own;
        }
        this.ownExecutor = own;
        this.maxObjectBytes = b.maxObjectBytes;
        HttpTransport.Builder tb = HttpTransport.builder().connectTimeout(b.connectTimeout)
                .requestTimeout(b.requestTimeout).executor(executor).listener(b.listener);
        if (b.sslContext != null) {
            tb.sslContext(b.sslContext);
        }
        if (b.trustStore != null) {
            tb.trustStore(b.trustStore, b.trustStorePassword);
        }
        if (b.keyStore != null) {
            tb.keyStore(b.keyStore, b.keyStorePassword);
        }
        HttpTransport http = tb.build();
        this.directory = new DirectoryClient(http, b.directories, b.adminToken);
        this.stores = new StoreClient(http);
        this.retrier = new RetryPolicy(b.maxAttempts, b.initialBackoff, b.maxBackoff, null, executor);
        this.cache = b.cacheNodes.isEmpty() ? null : new CacheClient(stores, b.cacheNodes, b.gutterNodes);
        this.leases = new LeasePool(directory::lease, b.leaseKeys, LEASE_SLOTS);
        this.maps = new VolumeMapCache(directory, b.volumeMapRefresh, map -> leases.retain(v -> {
            Wire.VolumeLocation l = map.volume(v);
            return l == null || l.state().writable() && l.down().isEmpty();
        }));
        this.writer = new Writer(directory, stores, retrier, leases, maps, b.maxBatchBytes, b.maxObjectBytes, b.maxAssigns,
                b.pushToCache ? cache : null, b.coalescePuts);
        this.reader = new Reader(maps, retrier);
        this.cold = b.directories.isEmpty() ? null
                : new ColdReads(b.directories, b.adminToken, b.requestTimeout, executor, http);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The low-level directory client this client uses (for listing volumes and stores, admin calls). */
    public DirectoryClient directory() {
        return directory;
    }

    /**
     * The cache tier's client (routing to a key's cache node and gutter node, push, invalidation),
     * or null when the builder named no cache nodes.
     */
    public CacheClient cache() {
        return cache;
    }

    /** The low-level store client this client uses. */
    public StoreClient stores() {
        return stores;
    }

    // ---------------------------------------------------------------- writes

    /** Stores {@code data} as alternate key 0 of a new photo. */
    public PutResult put(byte[] data) {
        return Futures.await(putAsync(data));
    }

    public CompletableFuture<PutResult> putAsync(byte[] data) {
        return putAsync(Upload.of(data)).thenApply(r -> r.get(0));
    }

    /**
     * Stores {@code data} as alternate key 0 of a new photo whose id is announced before it is written:
     * once the client chose the volume, key and cookie, {@code beforeWrite} is called with that id, and
     * no byte is sent before the future it returns completed. When it fails (or throws) the put fails
     * with its error and nothing is written. When the chosen volume refuses the write and the put moves
     * to another volume, {@code beforeWrite} is called again with the new id; an id announced and then
     * left is abandoned as any moved put's (its volume's delete log, best effort), and the result's id
     * is always the last one announced. What a caller that must never lose track of a needle uses
     * (the S3 gateway names each chunk in the directory before writing it). Never coalesced with other puts.
     */
    public CompletableFuture<PutResult> putAsync(byte[] data, Function<PhotoId, CompletableFuture<Void>> beforeWrite) {
        Objects.requireNonNull(beforeWrite, "beforeWrite");
        try {
            return writer.put(List.of(Upload.of(data)), ids -> beforeWrite.apply(ids.get(0))).thenApply(r -> r.get(0));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Stores {@code data} as alternate key {@code alt} of a new photo. */
    public PutResult put(byte[] data, int alt) {
        return Futures.await(putAsync(Upload.empty().alt(alt, data))).get(0);
    }

    /** Stores a file, streamed from disk to each replica, as alternate key 0 of a new photo. */
    public PutResult put(Path file) {
        return Futures.await(putAsync(Upload.of(file))).get(0);
    }

    /**
     * Stores what {@code in} holds (read to the end, at most the builder's {@code maxObjectBytes})
     * as alternate key {@code alt} of a new photo. The stream is not closed.
     */
    public PutResult put(InputStream in, int alt) {
        return Futures.await(putAsync(Upload.empty().alt(alt, readBounded(in)))).get(0);
    }

    /** Stores one photo with all its alternates; one result per alternate, in order. */
    public List<PutResult> put(Upload photo) {
        return Futures.await(putAsync(photo));
    }

    public CompletableFuture<List<PutResult>> putAsync(Upload photo) {
        return putAllUploadsAsync(List.of(photo));
    }

    /**
     * Stores each array as alternate key 0 of its own new photo, as one multi-write per replica
     * (split into several when the batch is larger than the builder's limits). Results in order.
     */
    public List<PutResult> putAll(List<byte[]> batch) {
        return Futures.await(putAllAsync(batch));
    }

    public CompletableFuture<List<PutResult>> putAllAsync(List<byte[]> batch) {
        List<Upload> uploads = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            byte[] d = batch.get(i);
            if (d == null) {
                return CompletableFuture.failedFuture(new IllegalArgumentException("photo " + i + " of the batch is null"));
            }
            uploads.add(Upload.of(d));
        }
        return putAllUploadsAsync(uploads);
    }

    /** Stores several photos, each with its alternates; results in order of photos, then alternates. */
    public CompletableFuture<List<PutResult>> putAllUploadsAsync(List<Upload> photos) {
        try {
            return writer.put(photos); // the writer takes its own snapshot of the photos
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * Refreshes the client's cached volume map now (it is refreshed in the background every
     * {@code volumeMapRefresh} anyway): after an operator changed the cluster (sealed a volume,
     * failed a store), the next operations see it. Leases of volumes the new map no longer shows
     * writable are dropped before the future completes.
     */
    public CompletableFuture<Void> refreshVolumeMap() {
        return maps.refreshNow().thenApply(s -> null);
    }

    // ---------------------------------------------------------------- reads

    /**
     * The photo's bytes, from the first place that serves them. The calling thread does the I/O of
     * the usual case (the volume in the cached map, a place that answers): no hand-off to another
     * thread; map loads and refreshes, erasure-coded volumes and retries after every place failed go
     * the way of {@link #getAsync(PhotoId)}, with the same results and errors.
     */
    public byte[] get(PhotoId id) {
        Objects.requireNonNull(id, "id");
        return reader.readNow(id, stores::readNow, stores::read, this::viaCache);
    }

    public CompletableFuture<byte[]> getAsync(PhotoId id) {
        Objects.requireNonNull(id, "id");
        return reader.read(id, stores::read, this::viaCache);
    }

    /**
     * A photo of an erasure-coded volume: through the cache's cold prefixes
     * ({@code <scheme>://<cache>/cold}, the key's cache node then its gutter node), then, when every
     * one of them fails (down, 5xx, or 404, which the client's own read then confirms), with the
     * client's own {@link io.hayloft.client.cold.ColdReads}.
     */
    private CompletableFuture<byte[]> viaCache(PhotoId id, List<String> caches) {
        return viaCache(id, caches, 0);
    }

    private CompletableFuture<byte[]> viaCache(PhotoId id, List<String> caches, int i) {
        if (i == caches.size()) {
            return coldCheck(id);
        }
        CompletableFuture<byte[]> f;
        try {
            f = stores.read(caches.get(i), id);
        } catch (IllegalArgumentException e) {
            f = CompletableFuture.failedFuture(e);
        }
        return f.handle((b, t) -> t == null ? CompletableFuture.completedFuture(b) : viaCache(id, caches, i + 1))
                .thenCompose(x -> x);
    }

    /**
     * The bytes behind a photo URL ({@code http://host:port/<volume>/<key>/<alt>?cookie=<hex>}, as
     * {@link PutResult#url()} gives): read from that server, and through the directory (with
     * failover) when it fails.
     */
    public byte[] get(String url) {
        return Futures.await(getAsync(url));
    }

    public CompletableFuture<byte[]> getAsync(String url) {
        String prefix;
        PhotoId id;
        try {
            URI u = URI.create(url);
            String path = u.getPath();
            String[] seg = path.split("/");
            if (seg.length < 4 || u.getScheme() == null || u.getRawAuthority() == null || u.getQuery() == null
                    || !u.getQuery().startsWith("cookie=")) {
                throw new IllegalArgumentException("expected scheme://host:port/<volume>/<key>/<alt>?cookie=<hex>");
            }
            int n = seg.length;
            id = PhotoId.parse(seg[n - 3] + "," + seg[n - 2] + "," + seg[n - 1] + "," + u.getQuery().substring("cookie=".length()));
            String base = String.join("/", Arrays.copyOfRange(seg, 0, n - 3));
            prefix = u.getScheme() + "://" + u.getRawAuthority() + base;
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("malformed photo URL '" + url + "': " + e.getMessage(), e));
        }
        PhotoId photo = id;
        return stores.read(prefix, photo).handle((v, t) -> t == null ? CompletableFuture.completedFuture(v) : getAsync(photo))
                .thenCompose(f -> f);
    }

    /** The photo as a stream, for large objects; the caller must close it. Failover happens before the first byte. */
    public InputStream getStream(PhotoId id) {
        return Futures.await(getStreamAsync(id));
    }

    public CompletableFuture<InputStream> getStreamAsync(PhotoId id) {
        Objects.requireNonNull(id, "id");
        return reader.read(id, stores::readStream,
                (photo, caches) -> viaCache(photo, caches).thenApply(b -> (InputStream) new ByteArrayInputStream(b)));
    }

    /** Writes the photo to {@code target} (through a temporary file in the same directory, then a rename). */
    public void get(PhotoId id, Path target) {
        Path tmp = target.resolveSibling(target.getFileName() + ".part");
        try (InputStream in = getStream(id)) {
            Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw new UncheckedIOException("cannot write " + target + ": " + e.getMessage(), e);
        }
    }

    /**
     * Where a photo lives and what it holds: its volume and the volume's state from the cached volume
     * map, the places a read tries in order, and its alternate keys with their sizes as the replicas
     * report them ({@code GET /<volume>/<key>?cookie=<hex>}, asked of every replica). A photo of an
     * erasure-coded volume is verified by reading the id's needle (its cookie checked); its alternates
     * come from the volume's needle index.
     *
     * @throws PhotoNotFoundException when no replica holds the photo (a wrong cookie included, with the same message)
     */
    public PhotoStat stat(PhotoId id) {
        return Futures.await(statAsync(id));
    }

    public CompletableFuture<PhotoStat> statAsync(PhotoId id) {
        Objects.requireNonNull(id, "id");
        return reader.locate(id).thenCompose(l -> {
            List<String> replicas = replicas(l.volume());
            if (l.coded()) {
                return coldAlts(id).thenApply(alts -> new PhotoStat(id.volume(), l.volume().state(), l.places(), replicas, alts));
            }
            return find(id, replicas).thenApply(alts -> new PhotoStat(id.volume(), l.volume().state(), l.places(), replicas, alts));
        });
    }

    /** The volume's replicas, those on healthy stores first. */
    private static List<String> replicas(Wire.VolumeLocation v) {
        List<String> all = new ArrayList<>(v.replicas());
        all.addAll(v.down());
        return all;
    }

    /** Reads a cold photo (with the id's cookie); fails with PhotoNotFoundException when it is not there. */
    private CompletableFuture<byte[]> coldCheck(PhotoId id) {
        if (cold == null) {
            return CompletableFuture.failedFuture(new PhotoNotFoundException(id, Reader.NOT_FOUND));
        }
        return cold.read(id).exceptionallyCompose(t -> {
            Throwable c = Futures.unwrap(t);
            return CompletableFuture.failedFuture(c instanceof PhotoNotFoundException ? new PhotoNotFoundException(id, Reader.NOT_FOUND) : c);
        });
    }

    /**
     * A cold photo's live alternate keys with their sizes (its needle read to prove it exists with
     * the id's cookie, the rest from the volume's needle index); fails with PhotoNotFoundException when not.
     */
    private CompletableFuture<List<PhotoStat.Alt>> coldAlts(PhotoId id) {
        if (cold == null) {
            return CompletableFuture.failedFuture(new PhotoNotFoundException(id, Reader.NOT_FOUND));
        }
        return cold.alts(id).exceptionallyCompose(t -> {
            Throwable c = Futures.unwrap(t);
            return CompletableFuture.failedFuture(c instanceof PhotoNotFoundException ? new PhotoNotFoundException(id, Reader.NOT_FOUND) : c);
        });
    }

    /**
     * The photo's live alternate keys (those with the id's cookie) as the replicas hold them, asked of
     * every replica at once (union, in the order first seen). None anywhere: PhotoNotFoundException,
     * when at least one replica answered 404 and the others did not answer; every replica failing
     * otherwise: a HayloftException.
     */
    private CompletableFuture<List<PhotoStat.Alt>> find(PhotoId id, List<String> replicas) {
        Map<String, CompletableFuture<List<PhotoStat.Alt>>> asks = new LinkedHashMap<>();
        for (String r : replicas) {
            asks.put(r, retrier.retry(() -> stores.photo(r, id.volume(), id.key(), id.cookie()),
                    t -> Futures.remoteRetryable(t) && !(t instanceof RemoteException re && re.kind() == RemoteException.Kind.UNREACHABLE)));
        }
        return CompletableFuture.allOf(asks.values().stream().map(f -> f.exceptionally(t -> null))
                .toArray(CompletableFuture[]::new)).thenApply(x -> {
                    Map<Integer, PhotoStat.Alt> alts = new LinkedHashMap<>();
                    List<RemoteException> errors = new ArrayList<>();
                    boolean missing = false;
                    for (CompletableFuture<List<PhotoStat.Alt>> f : asks.values()) {
                        Throwable t = f.handle((v, err) -> err).join();
                        if (t == null) {
                            for (PhotoStat.Alt a : f.join()) {
                                alts.putIfAbsent(a.alt(), a);
                            }
                            continue;
                        }
                        Throwable c = Futures.unwrap(t);
                        if (!(c instanceof RemoteException re)) {
                            throw c instanceof RuntimeException rt ? rt : new HayloftException(c.toString(), c);
                        }
                        errors.add(re);
                        missing |= re instanceof NotFoundException && re.code() != StoreException.VOLUME_NOT_FOUND;
                    }
                    if (!alts.isEmpty()) {
                        return List.copyOf(alts.values());
                    }
                    if (missing && errors.stream().allMatch(e -> e instanceof NotFoundException || e.isRetryable())) {
                        throw new PhotoNotFoundException(id, Reader.NOT_FOUND);
                    }
                    HayloftException e = new HayloftException("cannot tell whether photo " + id + " exists: every replica failed: "
                            + errors.stream().map(Throwable::getMessage).toList());
                    errors.forEach(e::addSuppressed);
                    throw e;
                });
    }

    // ---------------------------------------------------------------- deletes

    /**
     * Deletes a photo, every alternate key, without a per-photo directory record: the replicas say
     * which alternates the photo has ({@code GET /<volume>/<key>?cookie}); the photo (key and
     * cookie) is added to its volume's delete log in the directory ({@code POST
     * /v1/volumes/{id}/deletes}); then its needles are deleted on every replica
     * ({@code DELETE /<volume>/<key>?cookie}) and its cache entries dropped. A replica that is down
     * or fails is covered by the log: it applies the entry before it serves the volume again. A photo
     * of an erasure-coded volume is verified by reading it; the log entry, with the number of its
     * live needles from the volume's needle index (reclaim's count of dead needles), is all its delete takes.
     *
     * @throws PhotoNotFoundException when the id does not name a photo (a wrong cookie included, with the same message)
     * @throws PartialFailureException when the delete log could not be appended to (nothing was deleted;
     *         {@link PartialFailureException#retry()} tries again)
     */
    public void delete(PhotoId id) {
        Futures.await(deleteAsync(id));
    }

    public CompletableFuture<Void> deleteAsync(PhotoId id) {
        Objects.requireNonNull(id, "id");
        return reader.locate(id).thenCompose(l -> {
            List<String> replicas = replicas(l.volume());
            if (l.coded()) {
                return coldAlts(id).thenCompose(alts -> logAndDelete(id, alts, List.of(), l.volume().state()));
            }
            return find(id, replicas).thenCompose(alts -> logAndDelete(id, alts, replicas, l.volume().state()));
        });
    }

    /** Appends the photo to its volume's delete log, then deletes its needles on {@code replicas} (best effort) and in the cache. */
    private CompletableFuture<Void> logAndDelete(PhotoId id, List<PhotoStat.Alt> alts, List<String> replicas, VolumeState state) {
        LinkedHashSet<Integer> altKeys = new LinkedHashSet<>();
        alts.forEach(a -> altKeys.add(a.alt()));
        altKeys.add(id.alt());
        List<PhotoId> ids = altKeys.stream().map(id::withAlt).toList();
        // Every live alternate, as the replicas or the cold needle index list them: the exact needle count for reclaim.
        Wire.DeleteEntry entry = new Wire.DeleteEntry(0, id.key(), id.cookieHex(), Math.max(1, alts.size()));
        return retrier.retry(() -> directory.logDeletes(id.volume(), List.of(entry)), Futures::remoteRetryable).handle((log, t) -> {
            if (t != null) {
                Throwable c = Futures.unwrap(t);
                if (c instanceof RemoteException re) {
                    throw new PartialFailureException("delete", id.volume(), ids, Map.of(re.server(), re), List.of(),
                            () -> logAndDelete(id, alts, replicas, state).thenApply(v -> ids));
                }
                throw c instanceof RuntimeException r ? r : new HayloftException(c.toString(), c);
            }
            return log.token();
        }).thenCompose(token -> {
            List<CompletableFuture<?>> deletes = new ArrayList<>();
            for (String r : replicas) {
                deletes.add(retrier.retry(() -> stores.deleteKey(r, id.volume(), id.key(), id.cookie(), token),
                                t -> Futures.remoteRetryable(t) && !(t instanceof RemoteException re && re.kind() == RemoteException.Kind.UNREACHABLE))
                        .exceptionally(t -> null)); // logged: the replica applies the entry when it syncs
            }
            return CompletableFuture.allOf(deletes.toArray(new CompletableFuture<?>[0]))
                    .thenCompose(x -> invalidateInCache(ids, replicas, token));
        });
    }

    /** Drops the photo's needles from their cache nodes; best effort. */
    private CompletableFuture<Void> invalidateInCache(List<PhotoId> ids, List<String> replicas, String token) {
        if (cache == null) {
            return CompletableFuture.completedFuture(null);
        }
        // No replica: an erasure-coded photo, cached (admitCold) under its cold URL; entries are keyed by needle either way.
        String store = replicas.isEmpty() ? COLD_PREFIX : replicas.get(0);
        List<CompletableFuture<Void>> calls = new ArrayList<>();
        for (PhotoId i : ids) {
            calls.add(cache.invalidate(store, i, token == null || token.isEmpty() ? null : token).exceptionally(t -> null));
        }
        return CompletableFuture.allOf(calls.toArray(new CompletableFuture<?>[0]));
    }

    private byte[] readBounded(InputStream in) {
        try {
            byte[] b = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 16, writerLimit() + 1));
            if (b.length > writerLimit()) {
                throw new IllegalArgumentException("the stream holds more than " + writerLimit() + " bytes, the most one object may have");
            }
            return b;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the stream to put: " + e.getMessage(), e);
        }
    }

    private long writerLimit() {
        return maxObjectBytes;
    }

    /** Stops the client's own threads (when it made its own executor). Calls in flight may fail. */
    @Override
    public void close() {
        maps.close();
        if (cold != null) {
            cold.close();
        }
        if (ownExecutor != null) {
            ownExecutor.shutdown();
        }
    }

    /**
     * How to build a {@link HayloftClient}. Defaults: connect timeout 2 s, request timeout 10 s,
     * 3 attempts per call and 5 leases per put for failing replicas, backoff from 50 ms up to 1 s, leases of 1,000
     * keys, the volume map refreshed every second, batches
     * split at 16 MiB, objects of at most 60 MiB, 2 combined writes in flight for small puts
     * ({@link #coalescePuts(int)}), a private pool of daemon threads.
     */
    public static final class Builder {
        private List<String> directories = List.of();
        private Duration connectTimeout = Duration.ofSeconds(2);
        private Duration requestTimeout = Duration.ofSeconds(10);
        private int maxAttempts = 3;
        private int maxAssigns = 5;
        private Duration initialBackoff = Duration.ofMillis(50);
        private Duration maxBackoff = Duration.ofSeconds(1);
        private int leaseKeys = 1000;
        private Duration volumeMapRefresh = Duration.ofSeconds(1);
        private long maxBatchBytes = 16L << 20;
        private long maxObjectBytes = 60L << 20;
        private Executor executor;
        private HttpTransport.Listener listener = HttpTransport.Listener.NONE;
        private SSLContext sslContext;
        private String trustStore;
        private String trustStorePassword;
        private String keyStore;
        private String keyStorePassword;
        private String adminToken;
        private List<String> cacheNodes = List.of();
        private List<String> gutterNodes = List.of();
        private boolean pushToCache = true;
        private int coalescePuts = 2;

        private Builder() {
        }

        /**
         * Combined writes in flight for puts of a few photos held in memory (default 2; 0: every put
         * makes its own requests). While that many are under way, further puts wait and the next one
         * to end takes them all (up to 1 MiB) as one chunk: one multi-write and one fsync per replica
         * for as many puts as arrived meanwhile. Each put is still acknowledged only when every
         * replica holds it durably, and fails on its own ({@link PartialFailureException} naming its
         * photos only); a combined write that its volume refuses moves to another volume as any chunk does.
         * An idle client sends a put at once; a put of a file, of more than 128 KiB, or of more than
         * 125 photos always goes on its own.
         */
        public Builder coalescePuts(int writesInFlight) {
            if (writesInFlight < 0 || writesInFlight > 1024) {
                throw new IllegalArgumentException("coalescePuts must be in 0..1024, was " + writesInFlight);
            }
            this.coalescePuts = writesInFlight;
            return this;
        }

        /**
         * The cache nodes ({@code host:port}, the directory's {@code cacheNodes}) and gutter nodes
         * ({@code gutterNodes}, possibly none): with them the client pushes fresh uploads into their
         * cache node and invalidates deleted photos there (docs/cache-api.md). Reads follow the
         * cluster's read policy (the volume map) either way.
         */
        public Builder cacheNodes(List<String> cacheNodes, List<String> gutterNodes) {
            this.cacheNodes = List.copyOf(cacheNodes);
            this.gutterNodes = gutterNodes == null ? List.of() : List.copyOf(gutterNodes);
            if (!this.cacheNodes.isEmpty()) {
                new CacheRouting(this.cacheNodes, this.gutterNodes); // names a bad list now
            }
            return this;
        }

        /** Whether uploads held in memory are pushed into their cache node (default true when cache nodes are set). */
        public Builder pushToCache(boolean on) {
            this.pushToCache = on;
            return this;
        }

        /**
         * The directory's address(es), {@code host:port}: one directory, or the replicas of a directory
         * group ({@code directory(a, b, c)}, or one {@code "a,b,c"}: each argument is split at its commas).
         * Every directory call of the client, cold reads included, goes through one list of them: to
         * the address that answered last, on to the next when one is unreachable, and to the group's
         * leader when a follower names it.
         */
        public Builder directory(String... addresses) {
            List<String> all = new ArrayList<>();
            for (String a : addresses) {
                for (String part : a.split(",")) {
                    if (!part.isBlank()) {
                        all.add(part.trim());
                    }
                }
            }
            this.directories = List.copyOf(all);
            return this;
        }

        public Builder directories(List<String> addresses) {
            this.directories = List.copyOf(addresses);
            return this;
        }

        public Builder connectTimeout(Duration d) {
            this.connectTimeout = d;
            return this;
        }

        /** Time allowed for one HTTP call's whole answer; a read that exceeds it fails over. */
        public Builder requestTimeout(Duration d) {
            this.requestTimeout = d;
            return this;
        }

        /** Attempts per HTTP call (1 = no retry). */
        public Builder maxAttempts(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("maxAttempts must be >= 1, was " + n);
            }
            this.maxAttempts = n;
            return this;
        }

        /**
         * Leases a put may use when replicas keep failing (down, 5xx): the put moves to another volume
         * (a new lease that excludes the failing one) at most this many times in all. Volumes that
         * refuse writes (read-only, unknown, expired token) move the put without counting here.
         */
        public Builder maxAssigns(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("maxAssigns must be >= 1, was " + n);
            }
            this.maxAssigns = n;
            return this;
        }

        public Builder backoff(Duration initial, Duration max) {
            if (initial == null || max == null || initial.isNegative() || max.compareTo(initial) < 0) {
                throw new IllegalArgumentException("backoff needs 0 <= initial <= max, got " + initial + ", " + max);
            }
            this.initialBackoff = initial;
            this.maxBackoff = max;
            return this;
        }

        /**
         * Keys per allocator lease (1..{@value io.hayloft.format.wire.Wire#MAX_LEASE_KEYS}, default
         * 1,000): a put costs one directory call per this many photos.
         */
        public Builder leaseKeys(int n) {
            if (n < 1 || n > Wire.MAX_LEASE_KEYS) {
                throw new IllegalArgumentException("leaseKeys must be in 1.." + Wire.MAX_LEASE_KEYS + ", was " + n);
            }
            this.leaseKeys = n;
            return this;
        }

        /**
         * How often the cached volume map is refreshed in the background (default 1 s; a refresh of an
         * unchanged map is a 304). It is also refreshed at once when a read or write meets a
         * volume-level error.
         */
        public Builder volumeMapRefresh(Duration d) {
            if (d == null || d.toMillis() < 1) {
                throw new IllegalArgumentException("volumeMapRefresh must be >= 1 ms, was " + d);
            }
            this.volumeMapRefresh = d;
            return this;
        }

        /** Largest multi-write body; bigger batches are split (each part takes keys of one lease). */
        public Builder maxBatchBytes(long n) {
            if (n < 1024) {
                throw new IllegalArgumentException("maxBatchBytes must be >= 1024, was " + n);
            }
            this.maxBatchBytes = n;
            return this;
        }

        /** Largest single object; a bigger one is refused before anything is sent. */
        public Builder maxObjectBytes(long n) {
            if (n < 1 || n > Integer.MAX_VALUE - 1024) {
                throw new IllegalArgumentException("maxObjectBytes must be in 1.." + (Integer.MAX_VALUE - 1024) + ", was " + n);
            }
            this.maxObjectBytes = n;
            return this;
        }

        /** Told of every request the client sends (directory and stores), for metrics per target; see {@link HttpTransport.Listener}. */
        public Builder listener(HttpTransport.Listener l) {
            this.listener = Objects.requireNonNull(l, "listener");
            return this;
        }

        /** Where futures complete and callbacks run (must not be an event loop); default a private daemon pool. */
        public Builder executor(Executor e) {
            this.executor = Objects.requireNonNull(e, "executor");
            return this;
        }

        /** Talk {@code https://} to the directory and the stores. */
        public Builder sslContext(SSLContext c) {
            this.sslContext = Objects.requireNonNull(c, "sslContext");
            return this;
        }

        /**
         * Talk {@code https://} to the directory, the stores and the caches, trusting the certificates
         * (the cluster's CA) in this PKCS#12 file. docs/client.md "TLS".
         */
        public Builder trustStore(String file, String password) {
            this.trustStore = Objects.requireNonNull(file, "trustStore");
            this.trustStorePassword = password;
            return this;
        }

        /** Present the key and certificate in this PKCS#12 file to servers with {@code tlsClientAuth: require}; needs {@link #trustStore}. */
        public Builder keyStore(String file, String password) {
            this.keyStore = Objects.requireNonNull(file, "keyStore");
            this.keyStorePassword = password;
            return this;
        }

        /** The admin token for the directory's admin calls. */
        public Builder adminToken(String token) {
            this.adminToken = token;
            return this;
        }

        public HayloftClient build() {
            if (directories.isEmpty()) {
                throw new IllegalArgumentException("a directory address is needed: builder().directory(\"host:port\")");
            }
            return new HayloftClient(this);
        }
    }
}
