package io.hayloft.format.errors;

/**
 * Wire errors shared by every Hayloft server: codes 1..99. Servers number their own errors from
 * 100 up (the store uses 100..199). Codes are never renumbered or reused.
 */
public final class CommonErrors {
    private CommonErrors() {
    }

    public static final ApiError BAD_REQUEST = new ApiError(1, "BAD_REQUEST", 400);
    public static final ApiError NOT_FOUND = new ApiError(2, "NOT_FOUND", 404);
    public static final ApiError METHOD_NOT_ALLOWED =
            new ApiError(3, "METHOD_NOT_ALLOWED", 405);
    public static final ApiError BODY_TOO_LARGE =
            new ApiError(4, "BODY_TOO_LARGE", 413);
    public static final ApiError HEADER_TOO_LARGE =
            new ApiError(5, "HEADER_TOO_LARGE", 431);
    public static final ApiError URI_TOO_LONG = new ApiError(6, "URI_TOO_LONG", 414);
    public static final ApiError REQUEST_TIMEOUT = new ApiError(7, "REQUEST_TIMEOUT", 408);
    public static final ApiError OVERLOADED = new ApiError(8, "OVERLOADED", 503);
    public static final ApiError INTERNAL = new ApiError(9, "INTERNAL", 500);
    public static final ApiError IO_ERROR = new ApiError(10, "IO_ERROR", 500);
    public static final ApiError FORBIDDEN = new ApiError(11, "FORBIDDEN", 403);
    /** Plain HTTP sent to a listener that speaks only HTTPS; answered in plain HTTP, then the connection is closed. */
    public static final ApiError TLS_REQUIRED = new ApiError(12, "TLS_REQUIRED", 400);

    /**
     * A needle that is not there: never written, deleted, or asked for with a wrong cookie. The store's
     * code (100), declared here because every tier (store, cache, cold reads) answers exactly alike, so
     * that a caller cannot tell a wrong cookie from a missing photo.
     */
    public static final ApiError NEEDLE_NOT_FOUND = new ApiError(100, "NEEDLE_NOT_FOUND", 404);

    /** The one message of {@link #NEEDLE_NOT_FOUND}: {@code needle <volume>/<key>/<alt> not found}, unsigned. */
    public static String needleNotFound(long volume, long key, int alt) {
        return "needle " + volume + "/" + Long.toUnsignedString(key) + "/" + Integer.toUnsignedString(alt) + " not found";
    }
}
