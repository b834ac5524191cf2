package io.hayloft.client;

import io.hayloft.client.http.HttpTransport;
import io.hayloft.client.store.NotFoundException;
import io.hayloft.client.store.StoreClient;
import io.hayloft.common.wire.PhotoId;
import io.hayloft.common.wire.Wire;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
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
 * <p>Writes: the directory assigns keys and cookies on a writable logical volume; the needles go to
 * every replica in parallel (one multi-write per replica for a batch); the put succeeds only when
 * every replica acknowledged, and is then committed in the directory. A replica that keeps failing
 * (bounded retries with backoff) sends the put to a freshly assigned volume; when that is used up
 * the put fails with a {@link PartialFailureException} naming each failed replica. Reads: the
 * directory's lookup (cached, dropped on any read error) gives the places to read from in order;
 * the id's cookie, volume and alternate key must match it; the read fails over from one place to
 * the next on an error or a timeout. A photo of an erasure-coded volume is read through its cache
 * node's cold URL ({@code http://<cache>/cold/...}, when the directory lists one) and else by the
 * client itself from the stripes. A missing or deleted photo, or a wrong cookie, is a
 * {@link PhotoNotFoundException}.
 *
 * <p>Every operation has an asynchronous form returning a {@link CompletableFuture} that completes
 * on the client's executor (never blocking the calling thread, so it can be called from an event
 * loop), and a blocking form that waits for it. Errors are unchecked {@link HayloftException}s.
 *
 * <p>Thread-safe: build one client per application and share it; {@link #close()} it at the end.
 */
public final class HayloftClient implements AutoCloseable {
    /** The last path segment of a cache prefix that reads cold needles (directory's {@code readFrom}). */
    static final String COLD_PREFIX = "cold";
    private final DirectoryClient directory;
    private final StoreClient stores;
    private final Writer writer;
    private final Reader reader;
    private final Retrier retrier;
    private final ExecutorService ownExecutor;
    private final long maxObjectBytes;
    private final io.hayloft.client.cache.CacheClient cache; // null without cache nodes
    private final io.hayloft.client.cold.ColdReads cold; // reads of erasure-coded volumes (docs/raid.md)

    private HayloftClient(Builder b) {
        ExecutorService own = null;
        java.util.concurrent.Executor executor = b.executor;
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
                .requestTimeout(b.requestTimeout).executor(executor);
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
        this.retrier = new Retrier(b.maxAttempts, b.initialBackoff, b.maxBackoff, executor);
        this.cache = b.cacheNodes.isEmpty() ? null : new io.hayloft.client.cache.CacheClient(stores, b.cacheNodes, b.gutterNodes);
        this.writer = new Writer(directory, stores, retrier, b.maxBatchBytes, b.maxObjectBytes, b.maxAssigns,
                b.pushToCache ? cache : null);
        this.reader = new Reader(directory, stores, new LookupCache(b.lookupCacheSize), retrier);
        this.cold = b.directories.isEmpty() ? null
                : new io.hayloft.client.cold.ColdReads(b.directories.get(0), b.adminToken, b.requestTimeout, executor, http);
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
    public io.hayloft.client.cache.CacheClient cache() {
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
            return writer.put(List.copyOf(photos));
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    // ---------------------------------------------------------------- reads

    /** The photo's bytes, from the first place that serves them. */
    public byte[] get(PhotoId id) {
        return Futures.await(getAsync(id));
    }

    public CompletableFuture<byte[]> getAsync(PhotoId id) {
        Objects.requireNonNull(id, "id");
        if (cold == null) {
            return reader.read(id, stores::read);
        }
        // Erasure-coded volumes are read from their stripes; a hot read that fails may have raced an
        // encode (replicas dropped), so a fresh lookup decides before the failure is reported.
        return reader.lookup(id.key(), false)
                .handle((l, t) -> t == null && io.hayloft.client.cold.ColdReads.isCold(l.volumeState())
                        ? coldRead(id, l) : reader.read(id, stores::read))
                .thenCompose(f -> f)
                .exceptionallyCompose(e -> reader.lookup(id.key(), true).handle((l, t) ->
                        t == null && io.hayloft.client.cold.ColdReads.isCold(l.volumeState())
                                ? coldRead(id, l) : CompletableFuture.<byte[]>failedFuture(e)).thenCompose(f -> f));
    }

    /**
     * A photo of an erasure-coded volume: through the cache prefixes the lookup lists first
     * ({@code http://<cache>/cold}, the key's cache node then its gutter node), then, when every one
     * of them fails (down, 5xx, or 404, which the client's own read then confirms), with the client's
     * own {@link io.hayloft.client.cold.ColdReads}.
     */
    private CompletableFuture<byte[]> coldRead(PhotoId id, io.hayloft.common.wire.Wire.Lookup l) {
        List<String> caches = new java.util.ArrayList<>();
        for (String p : l.readFrom()) {
            if (p.endsWith("/" + COLD_PREFIX)) {
                caches.add(p);
            }
        }
        return viaCache(id, caches, 0);
    }

    private CompletableFuture<byte[]> viaCache(PhotoId id, List<String> caches, int i) {
        if (i == caches.size()) {
            return cold.read(id);
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
            String base = String.join("/", java.util.Arrays.copyOfRange(seg, 0, n - 3));
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
        return reader.read(id, stores::readStream);
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

    /** The directory's lookup for the photo's key, fresh (not from the cache). */
    public Wire.Lookup stat(PhotoId id) {
        return Futures.await(reader.lookup(id.key(), true));
    }

    // ---------------------------------------------------------------- deletes

    /**
     * Deletes a photo, every alternate key: the directory marks it deleted (from then on it is not
     * readable), then its needles are deleted on every replica. A needle already gone counts as
     * deleted, so repeating a delete is harmless.
     *
     * @throws PhotoNotFoundException when the id does not name a photo (wrong cookie included)
     * @throws PartialFailureException when some replicas kept failing
     */
    public void delete(PhotoId id) {
        Futures.await(deleteAsync(id));
    }

    public CompletableFuture<Void> deleteAsync(PhotoId id) {
        Objects.requireNonNull(id, "id");
        return retrier.run(() -> directory.lookup(id.key()), Retrier::remoteRetryable).handle((l, t) -> {
            if (t != null) {
                Throwable c = Futures.unwrap(t);
                if (c instanceof DirectoryException d && d.code() == DirectoryException.UNKNOWN_PHOTO) {
                    throw new PhotoNotFoundException(id, "the directory never assigned key " + id.key());
                }
                throw c instanceof RuntimeException r ? r : new HayloftException(c.toString(), c);
            }
            String wrong = Reader.mismatch(id, l);
            if (wrong != null && !(l.deleted() && Reader.mismatch(id, undeleted(l)) == null)) {
                throw new PhotoNotFoundException(id, wrong);
            }
            return l;
        }).thenCompose(l -> retrier.run(() -> directory.delete(id.key()), Retrier::remoteRetryable).thenCompose(token -> {
            reader.invalidate(id.key());
            LinkedHashSet<Integer> alts = new LinkedHashSet<>(l.alts());
            alts.add(id.alt());
            List<PhotoId> ids = alts.stream().map(id::withAlt).toList();
            return invalidateInCache(deleteNeedles(l.volume(), ids, l.replicas(), token), ids, l.replicas(), token);
        }));
    }

    /** After the needles' delete (done or failed), drops them from their cache nodes; keeps the delete's outcome. */
    private CompletableFuture<Void> invalidateInCache(CompletableFuture<Void> deleted, List<PhotoId> ids, List<String> replicas,
                                                      String token) {
        if (cache == null) {
            return deleted;
        }
        // No replica: an erasure-coded photo, cached (admitCold) under its cold URL; entries are keyed by needle either way.
        String store = replicas.isEmpty() ? COLD_PREFIX : replicas.get(0);
        return deleted.handle((v, t) -> {
            List<CompletableFuture<Void>> calls = new ArrayList<>();
            for (PhotoId i : ids) {
                calls.add(cache.invalidate(store, i, token == null || token.isEmpty() ? null : token));
            }
            return CompletableFuture.allOf(calls.toArray(new CompletableFuture<?>[0]))
                    .thenCompose(x -> t == null ? CompletableFuture.<Void>completedFuture(null) : CompletableFuture.<Void>failedFuture(t));
        }).thenCompose(f -> f);
    }

    private static Wire.Lookup undeleted(Wire.Lookup l) {
        return new Wire.Lookup(l.key(), l.volume(), l.cookie(), l.alts(), false, l.volumeState(),
                l.replicas(), l.readFrom());
    }

    private CompletableFuture<Void> deleteNeedles(int volume, List<PhotoId> ids, List<String> replicas, String token) {
        Map<String, CompletableFuture<Void>> calls = new LinkedHashMap<>();
        for (String r : replicas) {
            CompletableFuture<Void> f = CompletableFuture.completedFuture(null);
            for (PhotoId id : ids) {
                f = f.thenCompose(x -> retrier.run(() -> stores.delete(r, id, token), Retrier::remoteRetryable)
                        .exceptionally(t -> {
                            if (Futures.unwrap(t) instanceof NotFoundException) {
                                return null;
                            }
                            throw new java.util.concurrent.CompletionException(Futures.unwrap(t));
                        }));
            }
            calls.put(r, f);
        }
        return CompletableFuture.allOf(calls.values().stream().map(f -> f.exceptionally(t -> null))
                .toArray(CompletableFuture[]::new)).thenApply(x -> {
                    Map<String, RemoteException> failures = new LinkedHashMap<>();
                    List<String> ok = new ArrayList<>();
                    calls.forEach((r, f) -> {
                        Throwable t = f.handle((v, err) -> err).join();
                        if (t == null) {
                            ok.add(r);
                        } else if (Futures.unwrap(t) instanceof RemoteException re) {
                            failures.put(r, re);
                        } else {
                            throw new HayloftException("delete on " + r + " failed: " + Futures.unwrap(t), Futures.unwrap(t));
                        }
                    });
                    if (!failures.isEmpty()) {
                        List<String> failed = List.copyOf(failures.keySet());
                        throw new PartialFailureException("delete", volume, ids, failures, ok,
                                () -> deleteNeedles(volume, ids, failed, token).thenApply(v -> ids));
                    }
                    return null;
                });
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
        if (cold != null) {
            cold.close();
        }
        if (ownExecutor != null) {
            ownExecutor.shutdown();
        }
    }

    /**
     * How to build a {@link HayloftClient}. Defaults: connect timeout 2 s, request timeout 10 s,
     * 3 attempts per call and 5 assigns per put, backoff from 50 ms up to 1 s, lookup cache of 10,000 entries, batches
     * split at 16 MiB, objects of at most 60 MiB, a private pool of daemon threads.
     */
    public static final class Builder {
        private List<String> directories = List.of();
        private Duration connectTimeout = Duration.ofSeconds(2);
        private Duration requestTimeout = Duration.ofSeconds(10);
        private int maxAttempts = 3;
        private int maxAssigns = 5;
        private Duration initialBackoff = Duration.ofMillis(50);
        private Duration maxBackoff = Duration.ofSeconds(1);
        private int lookupCacheSize = 10_000;
        private long maxBatchBytes = 16L << 20;
        private long maxObjectBytes = 60L << 20;
        private java.util.concurrent.Executor executor;
        private SSLContext sslContext;
        private String trustStore;
        private String trustStorePassword;
        private String keyStore;
        private String keyStorePassword;
        private String adminToken;
        private List<String> cacheNodes = List.of();
        private List<String> gutterNodes = List.of();
        private boolean pushToCache = true;

        private Builder() {
        }

        /**
         * The cache nodes ({@code host:port}, the directory's {@code cacheNodes}) and gutter nodes
         * ({@code gutterNodes}, possibly none): with them the client pushes fresh uploads into their
         * cache node and invalidates deleted photos there (docs/cache-api.md). Reads follow the
         * directory's {@code readFrom} either way.
         */
        public Builder cacheNodes(List<String> cacheNodes, List<String> gutterNodes) {
            this.cacheNodes = List.copyOf(cacheNodes);
            this.gutterNodes = gutterNodes == null ? List.of() : List.copyOf(gutterNodes);
            if (!this.cacheNodes.isEmpty()) {
                new io.hayloft.common.ring.CacheRouting(this.cacheNodes, this.gutterNodes); // names a bad list now
            }
            return this;
        }

        /** Whether uploads held in memory are pushed into their cache node (default true when cache nodes are set). */
        public Builder pushToCache(boolean on) {
            this.pushToCache = on;
            return this;
        }

        /** The directory's address(es), {@code host:port}; later ones are used when earlier ones are unreachable. */
        public Builder directory(String... addresses) {
            this.directories = List.of(addresses);
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
         * Assigns a put may use: when a replica of the assigned volume keeps failing (down, full,
         * read-only), the put is assigned again, to another volume as the directory sees fit.
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

        /** Lookups kept in memory (0 disables the cache). */
        public Builder lookupCacheSize(int n) {
            if (n < 0) {
                throw new IllegalArgumentException("lookupCacheSize must be >= 0, was " + n);
            }
            this.lookupCacheSize = n;
            return this;
        }

        /** Largest multi-write body; bigger batches are split (each part is its own assign). */
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

        /** Where futures complete and callbacks run (must not be an event loop); default a private daemon pool. */
        public Builder executor(java.util.concurrent.Executor e) {
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
