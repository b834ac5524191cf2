package io.hayloft.client;

import io.hayloft.client.store.NotFoundException;
import io.hayloft.client.store.StoreClient;
import io.hayloft.common.wire.PhotoId;
import io.hayloft.common.wire.Wire;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;

/**
 * The read path of {@link HayloftClient}: look the key up (through the {@link LookupCache}), check
 * that the id matches what the directory holds (volume, cookie, alternate key, not deleted), then
 * read from the {@code readFrom} prefixes in order, failing over to the next on an error, a 404 or a
 * timeout. A failed read drops the cached lookup, so the next attempt (bounded, with backoff) asks
 * the directory again. When every place answered 404 with a fresh lookup, the photo is not found.
 *
 * <p>Thread-safe (immutable; the cache is thread-safe).
 */
final class Reader {
    private final DirectoryClient directory;
    private final StoreClient stores;
    private final LookupCache cache;
    private final Retrier retrier;

    Reader(DirectoryClient directory, StoreClient stores, LookupCache cache, Retrier retrier) {
        this.directory = directory;
        this.stores = stores;
        this.cache = cache;
        this.retrier = retrier;
    }

    /** Reads with failover; {@code read} is the store call (bytes or a stream). */
    <T> CompletableFuture<T> read(PhotoId id, BiFunction<String, PhotoId, CompletableFuture<T>> read) {
        return retrier.run(() -> once(id, read), t -> !(t instanceof PhotoNotFoundException)
                && !(t instanceof IllegalArgumentException) && !(t instanceof RemoteException r && !r.isRetryable()));
    }

    /** The directory's lookup of a key, cached; {@code fresh} bypasses the cache. */
    CompletableFuture<Wire.Lookup> lookup(long key, boolean fresh) {
        Wire.Lookup cached = fresh ? null : cache.get(key);
        if (cached != null) {
            return CompletableFuture.completedFuture(cached);
        }
        return directory.lookup(key).thenApply(l -> {
            cache.put(key, l);
            return l;
        });
    }

    void invalidate(long key) {
        cache.invalidate(key);
    }

    private <T> CompletableFuture<T> once(PhotoId id, BiFunction<String, PhotoId, CompletableFuture<T>> read) {
        boolean cached = cache.get(id.key()) != null;
        return lookup(id.key(), false).handle((l, t) -> {
            if (t != null) {
                Throwable c = Futures.unwrap(t);
                if (c instanceof DirectoryException d && d.code() == DirectoryException.UNKNOWN_PHOTO) {
                    return CompletableFuture.<T>failedFuture(new PhotoNotFoundException(id, "the directory never assigned key " + id.key()));
                }
                return CompletableFuture.<T>failedFuture(c);
            }
            String wrong = mismatch(id, l);
            if (wrong != null) {
                cache.invalidate(id.key());
                if (cached) {
                    // The cached lookup may be stale: decide on a fresh one.
                    return once(id, read);
                }
                return CompletableFuture.<T>failedFuture(new PhotoNotFoundException(id, wrong));
            }
            List<String> places = l.readFrom().isEmpty() ? l.replicas() : l.readFrom();
            if (places.isEmpty()) {
                return CompletableFuture.<T>failedFuture(new HayloftException("photo " + id
                        + ": the directory lists no replica to read from (volume " + l.volume() + " is " + l.volumeState() + ")"));
            }
            return tryPlaces(id, places, 0, new ArrayList<>(), read, cached);
        }).thenCompose(f -> f);
    }

    private <T> CompletableFuture<T> tryPlaces(PhotoId id, List<String> places, int i, List<RemoteException> errors,
                                               BiFunction<String, PhotoId, CompletableFuture<T>> read, boolean cached) {
        if (i == places.size()) {
            cache.invalidate(id.key());
            boolean allMissing = errors.stream().allMatch(e -> e instanceof NotFoundException);
            if (allMissing && cached) {
                return once(id, read);
            }
            HayloftException e = allMissing
                    ? new PhotoNotFoundException(id, "no replica has it (" + places + ")")
                    : new ReadFailedException(id, errors);
            errors.forEach(e::addSuppressed);
            return CompletableFuture.failedFuture(e);
        }
        CompletableFuture<T> f;
        try {
            f = read.apply(places.get(i), id);
        } catch (IllegalArgumentException e) {
            f = CompletableFuture.failedFuture(e);
        }
        return f.handle((v, t) -> {
            if (t == null) {
                return CompletableFuture.completedFuture(v);
            }
            Throwable c = Futures.unwrap(t);
            if (!(c instanceof RemoteException re)) {
                return CompletableFuture.<T>failedFuture(c);
            }
            errors.add(re);
            cache.invalidate(id.key());
            return tryPlaces(id, places, i + 1, errors, read, cached);
        }).thenCompose(x -> x);
    }

    /** Why the id does not name a live photo per the lookup, or null when it does. */
    static String mismatch(PhotoId id, Wire.Lookup l) {
        if (l.deleted()) {
            return "deleted";
        }
        if (l.volume() != id.volume()) {
            return "it lives on volume " + l.volume() + ", not " + id.volume();
        }
        long cookie;
        try {
            cookie = Long.parseUnsignedLong(l.cookie(), 16);
        } catch (RuntimeException e) {
            return "the directory holds a malformed cookie '" + l.cookie() + "'";
        }
        if (cookie != id.cookie()) {
            return "wrong cookie";
        }
        if (!l.alts().contains(id.alt())) {
            return "alternate key " + Integer.toUnsignedString(id.alt()) + " was never committed (committed: " + l.alts() + ")";
        }
        return null;
    }

    /** Every place to read from failed with something other than 404. */
    static final class ReadFailedException extends HayloftException {
        private static final long serialVersionUID = 1L;

        ReadFailedException(PhotoId id, List<RemoteException> errors) {
            super("read of " + id + " failed on every replica: " + errors.stream().map(Throwable::getMessage).toList());
        }
    }
}
