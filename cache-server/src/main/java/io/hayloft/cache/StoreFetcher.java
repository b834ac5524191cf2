package io.hayloft.cache;

import io.hayloft.format.errors.CacheErrors;
import io.hayloft.format.errors.ApiException;
import java.io.IOException;
import java.net.ConnectException;
import io.hayloft.client.RemoteException;
import io.hayloft.client.http.HttpTransport;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.zip.CRC32C;

/**
 * Fetches needles from stores on the cache's {@link HttpTransport}, asynchronously, and verifies the data
 * against the CRC32C the store sends in {@value #CRC_HEADER}: a mismatch fails the fetch with
 * {@link CacheErrors#STORE_CORRUPT}, so corrupt bytes are neither served nor cached. A refused or
 * broken connection fails with {@link CacheErrors#STORE_UNAVAILABLE}, a slow store with
 * {@link CacheErrors#STORE_TIMEOUT}. Any other answer of the store (404, its own errors) is
 * returned as it came.
 *
 * <p>Thread-safe (the transport is).
 */
public final class StoreFetcher implements AutoCloseable {
    /** Response header of the store and of the cache: CRC32C of the body as 8 hex digits. */
    public static final String CRC_HEADER = "X-Hayloft-Crc32c";
    /** Response header of the store: {@code writable} or {@code read-only}. */
    public static final String VOLUME_STATE_HEADER = "X-Hayloft-Volume-State";

    /**
     * A store's answer.
     *
     * @param status HTTP status
     * @param body the body (needle data when 200)
     * @param contentType the store's content type, or null
     * @param crc the CRC32C of the body when the store sent one and it matched, else -1
     * @param volumeState the store's {@value #VOLUME_STATE_HEADER}, or null
     */
    public record Fetched(int status, byte[] body, String contentType, long crc, String volumeState) {
        public boolean verified() {
            return crc >= 0;
        }
    }

    private final HttpTransport http;
    private final Duration timeout;
    private final ExecutorService executor;

    /**
     * Plain HTTP, a transport of its own.
     *
     * @param executor runs the transport's callbacks; owned and shut down by this fetcher
     */
    public StoreFetcher(long timeoutMillis, ExecutorService executor) {
        this(timeoutMillis, executor, HttpTransport.builder().connectTimeout(Duration.ofMillis(timeoutMillis))
                .requestTimeout(Duration.ofMillis(timeoutMillis)).executor(executor).build());
    }

    /**
     * @param executor the executor of {@code http}'s callbacks; owned and shut down by this fetcher
     * @param http     the cache's transport ({@code https://} and its certificate when the cache has a trust store)
     */
    public StoreFetcher(long timeoutMillis, ExecutorService executor, HttpTransport http) {
        this.timeout = Duration.ofMillis(timeoutMillis);
        this.executor = executor;
        this.http = http;
    }

    /** Starts a GET of the needle (one attempt: the cache's caller retries); fails with an {@link ApiException} of {@link CacheErrors}. */
    public CompletableFuture<Fetched> fetch(CacheUrl url) {
        HttpRequest req;
        try {
            req = http.request(http.uri(url.store(), url.needle().storePath(url.cookie()))).timeout(timeout).GET().build();
        } catch (IllegalArgumentException e) {
            return CompletableFuture.failedFuture(CacheErrors.BAD_CACHE_URL.exception("bad store URL " + url.storeUrl(http.scheme() + "://")
                    + ": " + e.getMessage()));
        }
        return http.send(url.store(), "GET " + url.needle(), req, s -> true, HttpTransport.TYPED)
                .handle((resp, err) -> {
                    if (err != null) {
                        throw new CompletionException(translate(url, err));
                    }
                    return check(url, resp);
                });
    }

    private static Fetched check(CacheUrl url, HttpResponse<byte[]> resp) {
        byte[] body = resp.body();
        String type = resp.headers().firstValue("content-type").orElse(null);
        String state = resp.headers().firstValue(VOLUME_STATE_HEADER).orElse(null);
        if (resp.statusCode() != 200) {
            return new Fetched(resp.statusCode(), body, type, -1, state);
        }
        String sent = resp.headers().firstValue(CRC_HEADER).orElse(null);
        if (sent == null) {
            return new Fetched(200, body, type, -1, state);
        }
        long expected;
        try {
            expected = Long.parseLong(sent.trim(), 16);
        } catch (NumberFormatException e) {
            throw new CompletionException(CacheErrors.STORE_CORRUPT.exception("store " + url.store() + " sent a malformed "
                    + CRC_HEADER + " '" + sent + "' for needle " + url.needle()));
        }
        long actual = crc32c(body);
        if (actual != expected) {
            throw new CompletionException(CacheErrors.STORE_CORRUPT.exception("needle " + url.needle() + " from store "
                    + url.store() + " fails its CRC32C: store sent " + sent + ", data has "
                    + crcHex(actual)));
        }
        return new Fetched(200, body, type, actual, state);
    }

    private static ApiException translate(CacheUrl url, Throwable err) {
        Throwable t = err instanceof CompletionException && err.getCause() != null ? err.getCause() : err;
        if (t instanceof ApiException a) {
            return a;
        }
        if (t instanceof RemoteException r && r.kind() == RemoteException.Kind.TIMEOUT || t instanceof HttpTimeoutException) {
            return CacheErrors.STORE_TIMEOUT.exception("store " + url.store() + " did not answer for needle " + url.needle()
                    + " in time: " + t.getMessage());
        }
        if (t instanceof ConnectException || t instanceof IOException) {
            return CacheErrors.STORE_UNAVAILABLE.exception("store " + url.store() + " unavailable for needle " + url.needle()
                    + ": " + t);
        }
        return CacheErrors.STORE_UNAVAILABLE.exception("fetch of needle " + url.needle() + " from store " + url.store()
                + " failed: " + t);
    }

    /** A CRC32C as 8 lower-case hex digits, as sent in {@value #CRC_HEADER}. */
    public static String crcHex(long crc) {
        String h = Long.toHexString(crc & 0xffffffffL);
        return h.length() == 8 ? h : "00000000".substring(h.length()) + h;
    }

    /** CRC32C of a whole array. */
    public static long crc32c(byte[] data) {
        CRC32C c = new CRC32C();
        c.update(data, 0, data.length);
        return c.getValue();
    }

    @Override
    public void close() {
        executor.shutdownNow();
    }
}
