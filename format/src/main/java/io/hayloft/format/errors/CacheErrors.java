package io.hayloft.format.errors;


/**
 * Wire errors of the cache server: codes 300..399 (docs/cache-api.md). Codes are never renumbered
 * or reused. Errors a store answers (404 for a missing needle, its own 4xx/5xx) are passed through
 * with the store's status and body, not translated into these.
 */
public final class CacheErrors {
    private CacheErrors() {
    }

    /** The URL is not {@code /<store>/<volume>/<key>/<alt>?cookie=<hex>} or a value in it is bad. */
    public static final ApiError BAD_CACHE_URL = new ApiError(300, "BAD_CACHE_URL", 400);
    /** The store named in the URL could not be reached (refused, reset, DNS). */
    public static final ApiError STORE_UNAVAILABLE = new ApiError(301, "STORE_UNAVAILABLE", 502);
    /** The store did not answer within {@code storeTimeoutMillis}. */
    public static final ApiError STORE_TIMEOUT = new ApiError(302, "STORE_TIMEOUT", 504);
    /** The store's data does not match the CRC32C it sent: not served, not cached. */
    public static final ApiError STORE_CORRUPT = new ApiError(303, "STORE_CORRUPT", 502);
    /** The store named in the URL is not in {@code allowedStores}. */
    public static final ApiError STORE_NOT_ALLOWED = new ApiError(304, "STORE_NOT_ALLOWED", 403);
    /** A pushed needle's body does not match its {@code X-Hayloft-Crc32c} header, or the header is missing. */
    public static final ApiError PUSH_CRC_MISMATCH = new ApiError(305, "PUSH_CRC_MISMATCH", 400);
    /** A pushed needle is larger than {@code maxObjectBytes}. */
    public static final ApiError PUSH_TOO_LARGE = new ApiError(306, "PUSH_TOO_LARGE", 413);
    /** A cold URL ({@code /cold/...}) reached a cache configured without {@code directory}. */
    public static final ApiError COLD_NOT_CONFIGURED = new ApiError(307, "COLD_NOT_CONFIGURED", 503);
    /** More blocks of the needle's stripe are unavailable than the code tolerates: the needle cannot be rebuilt now. */
    public static final ApiError COLD_STRIPE_LOST = new ApiError(308, "COLD_STRIPE_LOST", 503);
    /** A cold read failed otherwise (directory unreachable, a block corrupt beyond rebuilding). */
    public static final ApiError COLD_READ_FAILED = new ApiError(309, "COLD_READ_FAILED", 502);
    /** A cold URL names a photo whose volume is not erasure-coded: read it from its replicas. */
    public static final ApiError NOT_ERASURE_CODED = new ApiError(310, "NOT_ERASURE_CODED", 409);
}
