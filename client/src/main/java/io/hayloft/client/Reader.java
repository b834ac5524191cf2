package io.hayloft.client;

import io.hayloft.client.http.RetryPolicy;
import io.hayloft.client.store.NotFoundException;
import io.hayloft.client.store.StoreException;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.format.wire.Wire;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The read path of {@link HayloftClient}, with no directory call per photo: the photo's volume in
 * the cached {@link VolumeMapCache volume map} gives the places to read from (cache nodes, healthy
 * replicas rotated per read, replicas on stores that are down); the read tries them in order.
 *
 * <ul>
 *   <li>A volume the map does not know: the map is refreshed at once; still unknown, the photo is
 *       not found.</li>
 *   <li>404 from a place: the photo is not there. {@code VOLUME_NOT_FOUND} from a store (the volume
 *       moved or was erasure-coded), or every place unreachable: the map is refreshed and, when it
 *       changed, the read starts again once on the new map.</li>
 *   <li>503 ({@code VOLUME_SYNCING}, overload), other 5xx, timeouts, refused connections: the next
 *       place.</li>
 *   <li>When a place answered 404 and every other place only failed to answer, the photo is not
 *       found ({@link PhotoNotFoundException}, the same message whatever the reason: a wrong cookie
 *       is indistinguishable from a missing photo); when every place failed otherwise, the read fails
 *       with a retryable error and is tried again (bounded, with backoff).</li>
 *   <li>A volume that is erasure-coded is read by {@code cold} (the cache's cold prefixes, then the
 *       client's own stripe reads).</li>
 * </ul>
 *
 * <p>Thread-safe (immutable; the map cache is thread-safe).
 */
final class Reader {
    /** The one reason a read gives for a photo it did not find (never says whether the cookie was wrong). */
    static final String NOT_FOUND = "no such photo";

    private final VolumeMapCache maps;
    private final RetryPolicy retrier;

    Reader(VolumeMapCache maps, RetryPolicy retrier) {
        this.maps = maps;
        this.retrier = retrier;
    }

    /**
     * Reads with failover; {@code read} is the store call (bytes or a stream) on a URL prefix;
     * {@code cold} reads a photo of an erasure-coded volume given the cache's cold prefixes.
     */
    <T> CompletableFuture<T> read(PhotoId id, BiFunction<String, PhotoId, CompletableFuture<T>> read,
                                  BiFunction<PhotoId, List<String>, CompletableFuture<T>> cold) {
        return retrier.retry(() -> once(id, read, cold, true), Reader::retryable);
    }

    /**
     * A blocking read whose first attempt runs on the CALLING thread: with the cached map, the places
     * are tried in order with the blocking store call {@code readNow}, and the first answer is
     * returned. Everything else goes the way of {@link #read} with the asynchronous calls: no map
     * yet or a volume the map does not know, an erasure-coded volume or one without places; and when
     * every place failed, the outcome of that attempt (refresh the map and read again when it
     * changed, not found, or a retryable failure retried with backoff).
     */
    <T> T readNow(PhotoId id, BiFunction<String, PhotoId, T> readNow, BiFunction<String, PhotoId, CompletableFuture<T>> read,
                  BiFunction<PhotoId, List<String>, CompletableFuture<T>> cold) {
        VolumeMapCache.Snapshot s = maps.cached();
        Wire.VolumeLocation v = s == null ? null : s.volume(id.volume());
        if (v == null || v.state().coded()) {
            return Futures.await(read(id, read, cold));
        }
        Located l = new Located(s, v, maps.places(s, id.key(), v));
        if (l.places().isEmpty()) {
            return Futures.await(read(id, read, cold));
        }
        List<RemoteException> errors = new ArrayList<>();
        for (String place : l.places()) {
            try {
                return readNow.apply(place, id);
            } catch (RemoteException e) {
                errors.add(e);
            }
        }
        CompletableFuture<T> first = outcome(id, l, errors, read, cold, true);
        return Futures.await(first.handle((value, t) -> t == null ? CompletableFuture.completedFuture(value)
                : retrier.retryAfter(t, () -> once(id, read, cold, true), Reader::retryable)).thenCompose(Function.identity()));
    }

    static boolean retryable(Throwable t) {
        return !(t instanceof PhotoNotFoundException) && !(t instanceof IllegalArgumentException)
                && !(t instanceof RemoteException r && !r.isRetryable());
    }

    /**
     * The photo's volume in the map and its read places; refreshes the map once when the volume is
     * unknown; fails with {@link PhotoNotFoundException} when it stays unknown.
     */
    CompletableFuture<Located> locate(PhotoId id) {
        return maps.get().thenCompose(s -> {
            Wire.VolumeLocation v = s.volume(id.volume());
            if (v != null) {
                return CompletableFuture.completedFuture(new Located(s, v, maps.places(s, id.key(), v)));
            }
            return maps.refreshNow().thenApply(fresh -> {
                Wire.VolumeLocation again = fresh.volume(id.volume());
                if (again == null && maps.lastRefreshFailed()) {
                    // a volume created since the map was cached (a photo just put) is not a missing photo
                    throw new HayloftException("photo " + id + ": volume " + id.volume() + " is not in the cached volume map and the "
                            + "directory cannot be reached to look it up; try again");
                }
                if (again == null) {
                    throw new PhotoNotFoundException(id, NOT_FOUND);
                }
                return new Located(fresh, again, maps.places(fresh, id.key(), again));
            });
        });
    }

    /** A volume in a version of the map, with a photo's read places. */
    record Located(VolumeMapCache.Snapshot map, Wire.VolumeLocation volume, List<String> places) {
        boolean coded() {
            return volume.state().coded();
        }

        /** The cache's cold prefixes ({@code <scheme>://<cache>/cold}) among the places. */
        List<String> coldPrefixes() {
            List<String> out = new ArrayList<>();
            for (String p : places) {
                if (p.endsWith("/" + HayloftClient.COLD_PREFIX)) {
                    out.add(p);
                }
            }
            return out;
        }
    }

    private <T> CompletableFuture<T> once(PhotoId id, BiFunction<String, PhotoId, CompletableFuture<T>> read,
                                          BiFunction<PhotoId, List<String>, CompletableFuture<T>> cold, boolean mayRefresh) {
        return locate(id).thenCompose(l -> {
            if (l.coded()) {
                return cold.apply(id, l.coldPrefixes());
            }
            if (l.places().isEmpty()) {
                return again(id, l, read, cold, mayRefresh, () -> new HayloftException("photo " + id
                        + ": the volume map lists no replica of volume " + id.volume() + " (" + l.volume().state() + ")"));
            }
            return tryPlaces(id, l, 0, new ArrayList<>(), read, cold, mayRefresh);
        });
    }

    /** After a volume-level failure: refresh the map, and read again once when it changed; else fail with {@code error}. */
    private <T> CompletableFuture<T> again(PhotoId id, Located l, BiFunction<String, PhotoId, CompletableFuture<T>> read,
                                           BiFunction<PhotoId, List<String>, CompletableFuture<T>> cold, boolean mayRefresh,
                                           Supplier<HayloftException> error) {
        if (!mayRefresh) {
            return CompletableFuture.failedFuture(error.get());
        }
        return maps.refreshNow().handle((fresh, t) -> {
            if (t == null && fresh != l.map() && !fresh.version().equals(l.map().version())) {
                return once(id, read, cold, false);
            }
            return CompletableFuture.<T>failedFuture(error.get());
        }).thenCompose(Function.identity());
    }

    private <T> CompletableFuture<T> tryPlaces(PhotoId id, Located l, int i, List<RemoteException> errors,
                                               BiFunction<String, PhotoId, CompletableFuture<T>> read,
                                               BiFunction<PhotoId, List<String>, CompletableFuture<T>> cold, boolean mayRefresh) {
        List<String> places = l.places();
        if (i == places.size()) {
            return outcome(id, l, errors, read, cold, mayRefresh);
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
            return tryPlaces(id, l, i + 1, errors, read, cold, mayRefresh);
        }).thenCompose(Function.identity());
    }

    private <T> CompletableFuture<T> outcome(PhotoId id, Located l, List<RemoteException> errors,
                                             BiFunction<String, PhotoId, CompletableFuture<T>> read,
                                             BiFunction<PhotoId, List<String>, CompletableFuture<T>> cold, boolean mayRefresh) {
        boolean volumeMoved = false;
        boolean missing = false;
        boolean otherwise = false;
        for (RemoteException e : errors) {
            if (e.code() == StoreException.VOLUME_NOT_FOUND) {
                volumeMoved = true;
            } else if (e instanceof NotFoundException) {
                missing = true;
            } else if (!unavailable(e)) {
                otherwise = true;
            }
        }
        boolean notFound = missing && !volumeMoved && !otherwise;
        Supplier<HayloftException> error = () -> {
            HayloftException e = notFound ? new PhotoNotFoundException(id, NOT_FOUND) : new ReadFailedException(id, errors);
            if (!notFound) {
                errors.forEach(e::addSuppressed);
            }
            return e;
        };
        // Every place answered, none has it: the map may be stale (replicas moved) — one refresh decides.
        return again(id, l, read, cold, mayRefresh, error);
    }

    /** A place that did not answer usefully: unreachable, timed out, garbage, 5xx (VOLUME_SYNCING included), 408, 429. */
    private static boolean unavailable(RemoteException e) {
        return e.isRetryable();
    }

    /** Every place to read from failed with something other than 404. */
    static final class ReadFailedException extends HayloftException {
        private static final long serialVersionUID = 1L;

        ReadFailedException(PhotoId id, List<RemoteException> errors) {
            super("read of " + id + " failed on every replica: " + errors.stream().map(Throwable::getMessage).toList());
        }
    }
}
