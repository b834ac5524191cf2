package io.hayloft.cache;

import io.hayloft.client.http.AddressList;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.cold.ClusterReads;
import io.hayloft.cold.ColdReader;
import io.hayloft.format.errors.ApiException;
import io.hayloft.format.errors.CacheErrors;
import io.hayloft.format.errors.CommonErrors;
import io.hayloft.serverkit.http.HttpResponses;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Fetches needles of erasure-coded volumes (cold URLs, {@code /cold/<volume>/<key>/<alt>?cookie=})
 * through hayloft-cold-read's {@link ColdReader}: the URL's volume (cached stripe map, needle index
 * and deleted keys per volume; one directory call per read for the delete-log entries after the
 * cached head), one range read from the store holding the needle's block (two across a block
 * boundary), and a degraded read from {@code k} other blocks when that store is down, slow or
 * corrupt (docs/raid.md "Reads"). The reader checks the needle's own CRC32C (header and data)
 * before the data is used; the fetch then computes the data's CRC32C for {@value StoreFetcher#CRC_HEADER},
 * so a cold answer is {@link StoreFetcher.Fetched#verified() verified} like a hot one.
 *
 * <p>Answers: 200 with the data and volume state {@value #VOLUME_STATE}; 404 (the common NOT_FOUND
 * body) when the volume or key is unknown, the needle flagged deleted in the index or its (key,
 * cookie) in the volume's delete log, or the cookie not the one in the needle's header. Failures:
 * {@link CacheErrors#COLD_STRIPE_LOST} (503) when more blocks of the stripe are gone than the code
 * tolerates, {@link CacheErrors#NOT_ERASURE_CODED} (409) for a hot volume (decided before any key is
 * looked at, its message naming only the volume: the same answer for every key and cookie),
 * {@link CacheErrors#STORE_TIMEOUT} past {@code coldTimeoutMillis}, {@link CacheErrors#COLD_READ_FAILED}
 * (502) otherwise.
 *
 * <p>Thread-safe. Reads block, so they run on this fetcher's own pool, never on a Netty thread.
 */
public final class ColdFetcher implements AutoCloseable {
    /** The volume state a cold fetch reports to the admission rules. */
    public static final String VOLUME_STATE = "erasure-coded";

    private final ColdReader reader;
    private final ExecutorService executor;
    private final long timeoutMillis;

    /**
     * @param directory     the directory's {@code host:port}, or its replicas' as a comma-separated list
     * @param token         bearer token for the directory's admin reads (stripe maps), or null
     * @param requestMillis deadline of each request to the directory or a store
     * @param timeoutMillis deadline of a whole cold read (degraded reads take more than one round)
     * @param indexCacheBytes bound of the cached needle indexes and stripe maps ({@link ColdReader})
     * @param executor      runs the blocking reads; owned and shut down by this fetcher
     */
    public ColdFetcher(String directory, String token, long requestMillis, long timeoutMillis, long indexCacheBytes,
                       ExecutorService executor) {
        this(directory, token, requestMillis, timeoutMillis, indexCacheBytes, executor,
                HttpTransport.builder().requestTimeout(Duration.ofMillis(requestMillis)).build());
    }

    /** As the other constructor, on the cache's transport ({@code https://} when the cache has a trust store). */
    public ColdFetcher(String directory, String token, long requestMillis, long timeoutMillis, long indexCacheBytes,
                       ExecutorService executor, HttpTransport http) {
        if (timeoutMillis < 1) {
            throw new IllegalArgumentException("timeoutMillis must be >= 1, was " + timeoutMillis);
        }
        this.reader = new ColdReader(new ClusterReads(AddressList.parse("directory", directory), token, Duration.ofMillis(requestMillis), http.clusterRpc()),
                ColdReader.DEFAULT_HEDGE_MILLIS, indexCacheBytes);
        this.executor = executor;
        this.timeoutMillis = timeoutMillis;
    }

    /** Starts a cold read; the future fails with an {@link ApiException} of {@link CacheErrors}. */
    public CompletableFuture<StoreFetcher.Fetched> fetch(CacheUrl url) {
        if (!url.cold()) {
            throw new IllegalArgumentException("not a cold URL: /" + url.store() + "/" + url.needle());
        }
        return CompletableFuture.supplyAsync(() -> read(url), executor)
                .orTimeout(timeoutMillis, TimeUnit.MILLISECONDS)
                .exceptionally(err -> {
                    Throwable t = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
                    if (t instanceof TimeoutException) {
                        throw new CompletionException(CacheErrors.STORE_TIMEOUT.exception("cold read of needle " + url.needle()
                                + " did not finish within coldTimeoutMillis " + timeoutMillis));
                    }
                    throw t instanceof CompletionException c ? c : new CompletionException(t);
                });
    }

    /** Healthy (direct) and degraded cold reads so far, for tests and stats. */
    public long healthyReads() {
        return reader.healthyReads();
    }

    public long degradedReads() {
        return reader.degradedReads();
    }

    /** Bytes of needle indexes and stripe maps held now (at most {@code coldIndexCacheBytes}). */
    public long cachedIndexBytes() {
        return reader.cachedBytes();
    }

    /** Direct reads slower than the hedge delay, raced by a degraded read (machine load can cause them). */
    public long hedgedReads() {
        return reader.hedgedReads();
    }

    private StoreFetcher.Fetched read(CacheUrl url) {
        CacheUrl.NeedleKey n = url.needle();
        byte[] data;
        try {
            data = reader.get(n.volume(), n.key(), n.alt(), url.cookie());
        } catch (ColdReader.StripeLostException e) {
            throw CacheErrors.COLD_STRIPE_LOST.exception("needle " + n + " cannot be read now: too many blocks of its stripe"
                    + " are unavailable (" + e.getMessage() + ")");
        } catch (ClusterReads.HttpStatusException e) {
            if (e.status() == 404) {
                return notFound(n);
            }
            throw CacheErrors.COLD_READ_FAILED.exception("cold read of needle " + n + " failed: " + e.getMessage());
        } catch (IOException e) {
            for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
                if (c instanceof ColdReader.StripeLostException) {
                    throw CacheErrors.COLD_STRIPE_LOST.exception("needle " + n + " cannot be read now: too many blocks of"
                            + " its stripe are unavailable (" + e.getMessage() + ")");
                }
            }
            throw CacheErrors.COLD_READ_FAILED.exception("cold read of needle " + n + " failed: " + e.getMessage());
        } catch (IllegalStateException e) {
            throw CacheErrors.NOT_ERASURE_CODED.exception(e.getMessage());
        } catch (RuntimeException e) {
            throw CacheErrors.COLD_READ_FAILED.exception("cold read of needle " + n + " failed: " + e);
        }
        if (data == null) {
            return notFound(n);
        }
        return new StoreFetcher.Fetched(200, data, "application/octet-stream", StoreFetcher.crc32c(data), VOLUME_STATE);
    }

    /**
     * One answer for an unknown key, a deleted needle, a wrong cookie and a needle of another volume: a
     * caller must not learn which keys exist.
     */
    private static StoreFetcher.Fetched notFound(CacheUrl.NeedleKey n) {
        byte[] json = HttpResponses.errorBytes(CommonErrors.NEEDLE_NOT_FOUND,
                CommonErrors.needleNotFound(n.volume(), n.key(), n.alt()));
        return new StoreFetcher.Fetched(404, json, "application/json", -1, null);
    }

    @Override
    public void close() {
        executor.shutdownNow();
        reader.close();
    }
}
