package io.hayloft.store.http;

import io.hayloft.common.http.ApiError;
import io.hayloft.store.StoreException;
import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * The store server's wire errors, codes 100..199 (common codes are 1..99, see
 * {@link io.hayloft.common.http.CommonErrors}). The numbers never change; docs/store-api.md lists them.
 */
public final class StoreErrors {
    private StoreErrors() {
    }

    public static final ApiError NEEDLE_NOT_FOUND = io.hayloft.common.http.CommonErrors.NEEDLE_NOT_FOUND;
    public static final ApiError VOLUME_NOT_FOUND = new ApiError(101, "VOLUME_NOT_FOUND", HttpResponseStatus.NOT_FOUND.code());
    public static final ApiError VOLUME_READ_ONLY = new ApiError(102, "VOLUME_READ_ONLY", HttpResponseStatus.CONFLICT.code());
    public static final ApiError VOLUME_EXISTS = new ApiError(103, "VOLUME_EXISTS", HttpResponseStatus.CONFLICT.code());
    public static final ApiError NEEDLE_CORRUPT =
            new ApiError(104, "NEEDLE_CORRUPT", HttpResponseStatus.INTERNAL_SERVER_ERROR.code());
    public static final ApiError NEEDLE_TOO_LARGE =
            new ApiError(105, "NEEDLE_TOO_LARGE", HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE.code());
    public static final ApiError BAD_ARGUMENT = new ApiError(106, "BAD_ARGUMENT", HttpResponseStatus.BAD_REQUEST.code());
    public static final ApiError COMPACTION_RUNNING = new ApiError(107, "COMPACTION_RUNNING", HttpResponseStatus.CONFLICT.code());
    public static final ApiError BLOCK_NOT_FOUND = new ApiError(108, "BLOCK_NOT_FOUND", HttpResponseStatus.NOT_FOUND.code());
    public static final ApiError BLOCK_EXISTS = new ApiError(109, "BLOCK_EXISTS", HttpResponseStatus.CONFLICT.code());
    public static final ApiError BAD_RANGE =
            new ApiError(110, "BAD_RANGE", HttpResponseStatus.REQUESTED_RANGE_NOT_SATISFIABLE.code());
    public static final ApiError UNSUPPORTED_FORMAT =
            new ApiError(111, "UNSUPPORTED_FORMAT", HttpResponseStatus.INTERNAL_SERVER_ERROR.code());
    public static final ApiError CORRUPT_FILE = new ApiError(112, "CORRUPT_FILE", HttpResponseStatus.INTERNAL_SERVER_ERROR.code());

    public static ApiError of(StoreException.Reason reason) {
        return switch (reason) {
            case NEEDLE_NOT_FOUND -> NEEDLE_NOT_FOUND;
            case VOLUME_NOT_FOUND -> VOLUME_NOT_FOUND;
            case VOLUME_READ_ONLY -> VOLUME_READ_ONLY;
            case VOLUME_EXISTS -> VOLUME_EXISTS;
            case NEEDLE_CORRUPT -> NEEDLE_CORRUPT;
            case NEEDLE_TOO_LARGE -> NEEDLE_TOO_LARGE;
            case BAD_ARGUMENT -> BAD_ARGUMENT;
            case COMPACTION_RUNNING -> COMPACTION_RUNNING;
            case BLOCK_NOT_FOUND -> BLOCK_NOT_FOUND;
            case BLOCK_EXISTS -> BLOCK_EXISTS;
            case BAD_RANGE -> BAD_RANGE;
            case UNSUPPORTED_FORMAT -> UNSUPPORTED_FORMAT;
            case CORRUPT_FILE -> CORRUPT_FILE;
        };
    }
}
