package io.hayloft.directory;

import io.hayloft.common.http.ApiError;
import io.netty.handler.codec.http.HttpResponseStatus;

/** The directory's wire errors, codes 200..299 (docs/directory-api.md). Numbers never change. */
public final class DirectoryErrors {
    private DirectoryErrors() {
    }

    public static final ApiError NO_PLACEMENT = new ApiError(200, "NO_PLACEMENT", HttpResponseStatus.SERVICE_UNAVAILABLE);
    public static final ApiError NO_WRITABLE_VOLUME = new ApiError(201, "NO_WRITABLE_VOLUME", HttpResponseStatus.SERVICE_UNAVAILABLE);
    public static final ApiError UNKNOWN_PHOTO = new ApiError(202, "UNKNOWN_PHOTO", HttpResponseStatus.NOT_FOUND);
    public static final ApiError UNKNOWN_VOLUME = new ApiError(203, "UNKNOWN_VOLUME", HttpResponseStatus.NOT_FOUND);
    public static final ApiError UNKNOWN_STORE = new ApiError(204, "UNKNOWN_STORE", HttpResponseStatus.NOT_FOUND);
    public static final ApiError UNAUTHORIZED = new ApiError(205, "UNAUTHORIZED", HttpResponseStatus.UNAUTHORIZED);
}
