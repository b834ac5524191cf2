package io.hayloft.cache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.RemovalCause;
import io.hayloft.cache.CacheUrl.NeedleKey;
import io.hayloft.format.errors.ApiException;
import io.hayloft.format.errors.CacheErrors;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The cache proper: needle bytes in a Caffeine cache bounded by weight (W-TinyLFU; weight = data
 * length + {@value #ENTRY_OVERHEAD}), filled from the stores under memcache-style leases.
 *
 * <p><b>Leases.</b> The first admitted miss of a needle puts a {@link Lease} (a token, the cookie,
 * a deadline and a future) in {@link #leases} and fetches from the store; concurrent misses of the
 * same needle and cookie wait on that future, so a burst causes one store read. The fill is stored
 * only if the store verified it (CRC32C), the admission rules allow it, and the lease was not
 * cancelled. {@link #invalidate} records a tombstone, removes and cancels the in-flight lease, then
 * drops the entry; a fill re-checks cancellation and the tombstone <em>after</em> storing and
 * removes its own entry if either appeared, so a fill that races an invalidation never outlives it
 * (one side always sees the other's volatile write). Requests that arrived before the invalidation
 * may still get the fill's bytes; requests after it never do. A waiter that waits longer than the
 * lease timeout gives up and reads the store itself, uncached; a newer miss replaces an expired
 * lease (cancelling it).
 *
 * <p><b>Cold needles.</b> A cold URL ({@code /cold/...}, a needle of an erasure-coded volume) is
 * filled by the {@link ColdFetcher} under the same lease, so a burst of misses causes one cold read;
 * its bytes are kept only when {@code admitCold} is set (default false: Haystack keeps the cache for
 * writable volumes; {@code admitOnlyWritable} does not govern cold needles).
 *
 * <p><b>Negative answers come from the tier, never from memory.</b> A cached entry keeps its cookie
 * and the tier that filled it (a hot URL, {@code /<store>/...}, or a cold URL). Only a read of the
 * same tier with the same cookie is served from it; a read with another cookie, or through the other
 * tier's URL, is a miss and reads through to its own tier (the URL's store, or the cold reader), so
 * it gets exactly the answer a key never written gets at that URL: a wrong cookie cannot be told from
 * a missing photo by status, error, body or headers (docs/security.md). A cold URL of a hot volume is
 * thus answered {@code 409 NOT_ERASURE_CODED} whatever the key and cookie, and a hot URL naming a
 * store that does not hold the volume gets that store's answer, cached photo or not. The same holds
 * for leases: a read joins an in-flight fill only of its own tier and cookie.
 *
 * <p>Thread-safe. {@link #get} blocks the calling (worker) thread until its answer is ready.
 */
public final class ReadThroughCache {
    /** Bytes charged per entry on top of its data: key, entry object and Caffeine node, roughly. */
    public static final int ENTRY_OVERHEAD = 96;

    /**
     * A cached needle: data, its cookie, its verified CRC32C as 8 hex digits (formatted once, sent on
     * every hit) and whether a cold URL filled it (served only to URLs of the same tier).
     */
    record Entry(byte[] data, long cookie, String crcHex, boolean cold) {
    }

    /** Where an answer came from, sent in the {@code X-Hayloft-Cache} response header. */
    public enum Source {
        HIT("hit"), MISS("miss"), WAIT("wait"), BYPASS("bypass");

        /** The header value. */
        public final String header;

        Source(String header) {
            this.header = header;
        }
    }

    /**
     * An answer: a store-like status and body; {@code crcHex} is null unless the data was verified.
     */
    public record Answer(int status, byte[] body, String contentType, String crcHex, Source source) {
    }

    static final class Lease {
        final long token;
        final long cookie;
        final boolean cold;
        final long deadlineNanos;
        final CompletableFuture<StoreFetcher.Fetched> result = new CompletableFuture<>();
        volatile boolean cancelled;

        Lease(long token, long cookie, boolean cold, long deadlineNanos) {
            this.token = token;
            this.cookie = cookie;
            this.cold = cold;
            this.deadlineNanos = deadlineNanos;
        }

        boolean expired(long now) {
            return now - deadlineNanos > 0;
        }
    }

    private final CacheConfig config;
    private final StoreFetcher fetcher;
    private final ColdFetcher cold; // null without a directory
    private final Admission admission;
    private final Cache<NeedleKey, Entry> cache;
    private final Cache<NeedleKey, Boolean> tombstones;
    private final ConcurrentHashMap<NeedleKey, Lease> leases = new ConcurrentHashMap<>();
    private final AtomicLong tokens = new AtomicLong();
    private final CacheStats stats;

    public ReadThroughCache(CacheConfig config, StoreFetcher fetcher) {
        this(config, fetcher, null);
    }

    /** @param cold reads cold URLs, or null when the cache has no directory (cold URLs then fail 503) */
    public ReadThroughCache(CacheConfig config, StoreFetcher fetcher, ColdFetcher cold) {
        this.config = config;
        this.fetcher = fetcher;
        this.cold = cold;
        this.admission = new Admission(config);
        Caffeine<Object, Object> b = Caffeine.newBuilder()
                // Maintenance (replaying reads into the W-TinyLFU policy, evicting) runs on the calling worker,
                // amortized, instead of waking a ForkJoinPool thread every few reads on a small machine.
                .executor(Runnable::run)
                .maximumWeight(config.maxBytes)
                .removalListener((k, v, cause) -> {
                    if (cause == RemovalCause.SIZE) {
                        stats().evictions.increment();
                    } else if (cause == RemovalCause.EXPIRED) {
                        stats().expirations.increment();
                    }
                });
        long ttl = config.effectiveTtlMillis();
        if (ttl > 0) {
            b.expireAfterWrite(Duration.ofMillis(ttl));
        }
        this.cache = b.<NeedleKey, Entry>weigher((k, e) -> e.data().length + ENTRY_OVERHEAD).build();
        this.tombstones = Caffeine.newBuilder().expireAfterWrite(Duration.ofMillis(Math.max(1, config.tombstoneMillis)))
                .maximumSize(1_000_000).build();
        this.stats = new CacheStats(this::weightedBytes, cache::estimatedSize);
    }

    public CacheStats stats() {
        return stats;
    }

    public Admission admission() {
        return admission;
    }

    /** Weighed bytes held now. */
    public long weightedBytes() {
        return cache.policy().eviction().map(e -> e.weightedSize().orElse(0)).orElse(0L);
    }

    /** In-flight leases, for tests and /health. */
    public int leasesInFlight() {
        return leases.size();
    }

    /**
     * Serves a read from memory only, or returns null when the needle is not cached. Never blocks:
     * safe on an event loop.
     */
    public Answer hit(CacheUrl url) {
        Answer a = peek(url);
        if (a != null) {
            stats.hits.increment();
        }
        return a;
    }

    /**
     * The cached answer for {@code url}, or null: not cached, cached by the other tier, or cached with
     * another cookie. The last two read through, so their answer is the tier's answer for a missing key.
     */
    private Answer peek(CacheUrl url) {
        Entry e = cache.getIfPresent(url.needle());
        if (e == null || e.cold() != url.cold() || e.cookie() != url.cookie()) {
            return null;
        }
        return new Answer(200, e.data(), "application/octet-stream", e.crcHex(), Source.HIT);
    }

    /**
     * Serves one read.
     *
     * @param admitted whether this request passes the user/CDN rule (a miss by a CDN is not kept)
     * @throws ApiException a {@link CacheErrors} error when the store cannot be read
     */
    public Answer get(CacheUrl url, boolean admitted) throws InterruptedException {
        NeedleKey k = url.needle();
        Answer hit = hit(url);
        if (hit != null) {
            return hit;
        }
        while (true) {
            long now = System.nanoTime();
            Lease cur = leases.get(k);
            if (cur != null && !cur.expired(now)) {
                if (cur.cookie != url.cookie() || cur.cold != url.cold()) {
                    stats.misses.increment();
                    return answer(fetchNow(url, direct(url)), Source.BYPASS);
                }
                stats.leaseWaits.increment();
                StoreFetcher.Fetched f = await(cur.result, Math.max(1, TimeUnit.NANOSECONDS.toMillis(cur.deadlineNanos - now)));
                if (f == null) {
                    stats.leaseExpiries.increment(); // the lease was not fulfilled in time: read the store
                    return answer(fetchNow(url, direct(url)), Source.BYPASS);
                }
                return answer(f, Source.WAIT);
            }
            if (!admitted) {
                stats.misses.increment();
                stats.notAdmitted.increment();
                return answer(fetchNow(url, direct(url)), Source.BYPASS);
            }
            Lease mine = new Lease(tokens.incrementAndGet(), url.cookie(), url.cold(),
                    now + TimeUnit.MILLISECONDS.toNanos(config.leaseTimeoutMillis));
            boolean won = cur == null ? leases.putIfAbsent(k, mine) == null : leases.replace(k, cur, mine);
            if (!won) {
                continue;
            }
            if (cur != null) {
                cur.cancelled = true; // an expired lease: its late fill must not be stored
            }
            Answer late = peek(url);
            if (late != null) {
                // A fill landed between our miss and our lease: serve it, and whoever joined our lease.
                leases.remove(k, mine);
                mine.result.complete(new StoreFetcher.Fetched(late.status(), late.body(), late.contentType(),
                        late.crcHex() == null ? -1 : Long.parseLong(late.crcHex(), 16), null));
                stats.hits.increment();
                return late;
            }
            stats.misses.increment();
            fill(url, mine);
            return answer(fetchNow(url, mine.result), Source.MISS);
        }
    }

    private CompletableFuture<StoreFetcher.Fetched> direct(CacheUrl url) {
        CompletableFuture<StoreFetcher.Fetched> pending;
        if (url.cold()) {
            if (cold == null) {
                return CompletableFuture.failedFuture(CacheErrors.COLD_NOT_CONFIGURED.exception("needle " + url.needle()
                        + " is on an erasure-coded volume, and this cache has no directory configured to read it"));
            }
            stats.coldReads.increment();
            pending = cold.fetch(url);
        } else {
            stats.storeReads.increment();
            pending = fetcher.fetch(url);
        }
        return pending.whenComplete((f, err) -> {
            if (err != null) {
                countError(err);
            }
        });
    }

    private void fill(CacheUrl url, Lease lease) {
        NeedleKey k = url.needle();
        direct(url).whenComplete((f, err) -> {
            try {
                if (err == null) {
                    keep(k, lease, f, url.cold());
                }
            } finally {
                leases.remove(k, lease);
                if (err != null) {
                    lease.result.completeExceptionally(err);
                } else {
                    lease.result.complete(f);
                }
            }
        });
    }

    private void keep(NeedleKey k, Lease lease, StoreFetcher.Fetched f, boolean coldNeedle) {
        if (f.status() != 200) {
            return;
        }
        boolean stateOk = coldNeedle ? config.admitCold : admission.admitsVolumeState(f.volumeState());
        if (!f.verified() || !stateOk || f.body().length > config.objectLimit()) {
            stats.notAdmitted.increment();
            return;
        }
        if (lease.cancelled || tombstones.getIfPresent(k) != null) {
            return;
        }
        Entry e = new Entry(f.body(), lease.cookie, StoreFetcher.crcHex(f.crc()), coldNeedle);
        cache.put(k, e);
        if (lease.cancelled || tombstones.getIfPresent(k) != null) {
            cache.asMap().remove(k, e); // an invalidation raced this fill: it wins
            return;
        }
        stats.stored.increment();
    }

    /**
     * Stores a pushed needle (a fresh upload) for URLs of its tier. The caller has verified {@code crc}.
     *
     * @param cold true when pushed to a cold URL ({@code /cold/...}): then served to cold URLs only, else to hot ones
     * @return false when the needle was invalidated within {@code tombstoneMillis} and is not stored
     */
    public boolean push(NeedleKey k, long cookie, boolean cold, byte[] data, long crc) {
        stats.pushes.increment();
        if (data.length > config.objectLimit()) {
            throw CacheErrors.PUSH_TOO_LARGE.exception("needle " + k + " has " + data.length + " bytes, more than maxObjectBytes "
                    + config.objectLimit());
        }
        if (tombstones.getIfPresent(k) != null) {
            return false;
        }
        Entry e = new Entry(data, cookie, StoreFetcher.crcHex(crc), cold);
        cache.put(k, e);
        if (tombstones.getIfPresent(k) != null) {
            cache.asMap().remove(k, e);
            return false;
        }
        stats.stored.increment();
        return true;
    }

    /** Drops a needle and cancels its in-flight fill, if any. */
    public void invalidate(NeedleKey k) {
        stats.invalidations.increment();
        if (config.tombstoneMillis > 0) {
            tombstones.put(k, Boolean.TRUE);
        }
        Lease l = leases.remove(k);
        if (l != null) {
            l.cancelled = true;
            stats.leasesCancelled.increment();
        }
        cache.invalidate(k);
    }

    /** True when the needle is in memory (any cookie, either tier). */
    public boolean contains(NeedleKey k) {
        return cache.getIfPresent(k) != null;
    }

    private void countError(Throwable err) {
        stats.fetchErrors.increment();
        Throwable t = err.getCause() != null ? err.getCause() : err;
        if (t instanceof ApiException a && a.error() == CacheErrors.STORE_CORRUPT) {
            stats.corrupt.increment();
        }
    }

    private static Answer answer(StoreFetcher.Fetched f, Source s) {
        return new Answer(f.status(), f.body(), f.contentType(), f.verified() ? StoreFetcher.crcHex(f.crc()) : null, s);
    }

    /** Waits for a fetch, which its own timeout bounds; a second here is a safety margin. */
    private StoreFetcher.Fetched fetchNow(CacheUrl url, CompletableFuture<StoreFetcher.Fetched> f) throws InterruptedException {
        long limit = url.cold() ? config.coldTimeoutMillis : config.storeTimeoutMillis;
        StoreFetcher.Fetched r = await(f, limit + 1000);
        if (r == null) {
            throw CacheErrors.STORE_TIMEOUT.exception((url.cold() ? "cold read" : "store fetch") + " of needle " + url.needle()
                    + " did not finish within " + limit + " ms");
        }
        return r;
    }

    /** The fetch's result, or null if it is not done within {@code millis}. */
    private static StoreFetcher.Fetched await(CompletableFuture<StoreFetcher.Fetched> f, long millis)
            throws InterruptedException {
        try {
            return f.get(millis, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            return null;
        } catch (ExecutionException e) {
            Throwable c = e.getCause() instanceof CompletionException && e.getCause().getCause() != null
                    ? e.getCause().getCause() : e.getCause();
            if (c instanceof ApiException a) {
                throw a;
            }
            throw CacheErrors.STORE_UNAVAILABLE.exception("store fetch failed: " + c);
        }
    }
}
