package io.hayloft.format.errors;


/**
 * The store server's wire errors, codes 100..199 (common codes are 1..99, see
 * {@link io.hayloft.format.errors.CommonErrors}). The numbers never change; docs/store-api.md lists them.
 * In hayloft-format, so the client decodes the same constants the store sends.
 */
public final class StoreErrors {
    private StoreErrors() {
    }

    public static final ApiError NEEDLE_NOT_FOUND = io.hayloft.format.errors.CommonErrors.NEEDLE_NOT_FOUND;
    public static final ApiError VOLUME_NOT_FOUND = new ApiError(101, "VOLUME_NOT_FOUND", 404);
    public static final ApiError VOLUME_READ_ONLY = new ApiError(102, "VOLUME_READ_ONLY", 409);
    public static final ApiError VOLUME_EXISTS = new ApiError(103, "VOLUME_EXISTS", 409);
    public static final ApiError NEEDLE_CORRUPT =
            new ApiError(104, "NEEDLE_CORRUPT", 500);
    public static final ApiError NEEDLE_TOO_LARGE =
            new ApiError(105, "NEEDLE_TOO_LARGE", 413);
    public static final ApiError BAD_ARGUMENT = new ApiError(106, "BAD_ARGUMENT", 400);
    public static final ApiError COMPACTION_RUNNING = new ApiError(107, "COMPACTION_RUNNING", 409);
    public static final ApiError BLOCK_NOT_FOUND = new ApiError(108, "BLOCK_NOT_FOUND", 404);
    public static final ApiError BLOCK_EXISTS = new ApiError(109, "BLOCK_EXISTS", 409);
    public static final ApiError BAD_RANGE =
            new ApiError(110, "BAD_RANGE", 416);
    public static final ApiError UNSUPPORTED_FORMAT =
            new ApiError(111, "UNSUPPORTED_FORMAT", 500);
    public static final ApiError CORRUPT_FILE = new ApiError(112, "CORRUPT_FILE", 500);
    /**
     * A volume that has not yet applied its delete log since the store started (docs/store-api.md
     * "Delete log"): it serves no read until it has, so a photo deleted while the store was down never
     * reads back. Retryable; a client reads another replica.
     */
    public static final ApiError VOLUME_SYNCING = new ApiError(113, "VOLUME_SYNCING", 503);
    /** {@code encode-stripe} on a volume that is still writable on this store: seal it first. */
    public static final ApiError VOLUME_NOT_SEALED = new ApiError(114, "VOLUME_NOT_SEALED", 409);
    /** {@code encode-stripe} planned for a volume size other than this replica's. */
    public static final ApiError VOLUME_SIZE_MISMATCH = new ApiError(115, "VOLUME_SIZE_MISMATCH", 409);
    /** {@code encode-stripe} could not send a block to its target store (named in the message). */
    public static final ApiError PEER_FAILED = new ApiError(116, "PEER_FAILED", 502);
    /** {@code encode-stripe} of a job the directory no longer lists as planned (rolled back, committed or replaced). */
    public static final ApiError JOB_NOT_PLANNED = new ApiError(117, "JOB_NOT_PLANNED", 409);
    /**
     * {@code POST /blocks/<name>?op=pull}: the source store could not be read to the end (down, the
     * block shorter than asked, the stream cut); the block was left as it was. Retryable.
     */
    public static final ApiError PULL_SOURCE_FAILED = new ApiError(118, "PULL_SOURCE_FAILED", 502);
    /**
     * A streamed {@code PUT /blocks/<name>} whose bytes do not have the CRC32C its
     * {@code X-Hayloft-Crc32c} header or trailer gave (both named in the message): damaged on the
     * way; the block was left as it was. Retryable.
     */
    public static final ApiError BLOCK_CRC_MISMATCH = new ApiError(119, "BLOCK_CRC_MISMATCH", 400);
    /**
     * {@code encode-stripe}: a delete (or a compaction) changed the replica while the stripe was
     * encoded, between the pass that read the data units and the one that computed the parity, so the
     * blocks could disagree; nothing of this stripe was committed here. Retryable: encode it again.
     */
    public static final ApiError VOLUME_CHANGED = new ApiError(120, "VOLUME_CHANGED", 409);
}
