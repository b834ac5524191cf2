package io.hayloft.cache;

import io.hayloft.common.http.ApiError;
import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * Wire errors of the cache server: codes 300..399 (docs/cache-api.md). Codes are never renumbered
 * or reused. Errors a store answers (404 for a missing needle, its own 4xx/5xx) are passed through
 * with the store's status and body, not translated into these.
 */
public final class CacheErrors {
    private CacheErrors() {
    }

    /** The URL is not {@code /<store>/<volume>/<key>/<alt>?cookie=<hex>} or a value in it is bad. */
    public static final ApiError BAD_CACHE_URL = new ApiError(300, "BAD_CACHE_URL", HttpResponseStatus.BAD_REQUEST);
    /** The store named in the URL could not be reached (refused, reset, DNS). */
    public static final ApiError STORE_UNAVAILABLE = new ApiError(301, "STORE_UNAVAILABLE", HttpResponseStatus.BAD_GATEWAY);
    /** The store did not answer within {@code storeTimeoutMillis}. */
    public static final ApiError STORE_TIMEOUT = new ApiError(302, "STORE_TIMEOUT", HttpResponseStatus.GATEWAY_TIMEOUT);
    /** The store's data does not match the CRC32C it sent: not served, not cached. */
    public static final ApiError STORE_CORRUPT = new ApiError(303, "STORE_CORRUPT", HttpResponseStatus.BAD_GATEWAY);
    /** The store named in the URL is not in {@code allowedStores}. */
    public static final ApiError STORE_NOT_ALLOWED = new ApiError(304, "STORE_NOT_ALLOWED", HttpResponseStatus.FORBIDDEN);
    /** A pushed needle's body does not match its {@code X-Hayloft-Crc32c} header, or the header is missing. */
    public static final ApiError PUSH_CRC_MISMATCH = new ApiError(305, "PUSH_CRC_MISMATCH", HttpResponseStatus.BAD_REQUEST);
    /** A pushed needle is larger than {@code maxObjectBytes}. */
    public static final ApiError PUSH_TOO_LARGE = new ApiError(306, "PUSH_TOO_LARGE", HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE);
}
