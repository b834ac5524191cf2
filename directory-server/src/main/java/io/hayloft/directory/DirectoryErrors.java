package io.hayloft.directory;

import io.hayloft.common.http.ApiError;
import io.netty.handler.codec.http.HttpResponseStatus;

/** The directory's wire errors, codes 200..299 (docs/directory-api.md). Numbers never change. */
public final class DirectoryErrors {
    private DirectoryErrors() {
    }

    public static final ApiError NO_PLACEMENT = new ApiError(200, "NO_PLACEMENT", HttpResponseStatus.SERVICE_UNAVAILABLE.code());
    public static final ApiError NO_WRITABLE_VOLUME = new ApiError(201, "NO_WRITABLE_VOLUME", HttpResponseStatus.SERVICE_UNAVAILABLE.code());
    public static final ApiError UNKNOWN_PHOTO = new ApiError(202, "UNKNOWN_PHOTO", HttpResponseStatus.NOT_FOUND.code());
    public static final ApiError UNKNOWN_VOLUME = new ApiError(203, "UNKNOWN_VOLUME", HttpResponseStatus.NOT_FOUND.code());
    public static final ApiError UNKNOWN_STORE = new ApiError(204, "UNKNOWN_STORE", HttpResponseStatus.NOT_FOUND.code());
    public static final ApiError WRONG_STATE = new ApiError(206, "WRONG_STATE", HttpResponseStatus.CONFLICT.code());
    public static final ApiError NO_STRIPE_MAP = new ApiError(207, "NO_STRIPE_MAP", HttpResponseStatus.NOT_FOUND.code());
    public static final ApiError NO_RECLAIM = new ApiError(208, "NO_RECLAIM", HttpResponseStatus.NOT_FOUND.code());
    public static final ApiError JOB_MISMATCH = new ApiError(209, "JOB_MISMATCH", HttpResponseStatus.CONFLICT.code());
    public static final ApiError LEASE_HELD = new ApiError(210, "LEASE_HELD", HttpResponseStatus.CONFLICT.code());
    /** A backup's target directory exists and is not empty: a backup never overwrites anything. */
    public static final ApiError BACKUP_TARGET_EXISTS = new ApiError(220, "BACKUP_TARGET_EXISTS", HttpResponseStatus.CONFLICT.code());
    /** The checkpoint could not be written (disk full, permissions, I/O error); the message says why. */
    public static final ApiError BACKUP_FAILED = new ApiError(221, "BACKUP_FAILED", HttpResponseStatus.INTERNAL_SERVER_ERROR.code());
    public static final ApiError UNAUTHORIZED = new ApiError(205, "UNAUTHORIZED", HttpResponseStatus.UNAUTHORIZED.code());
}
