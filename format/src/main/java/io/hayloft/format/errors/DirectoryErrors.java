package io.hayloft.format.errors;


/** The directory's wire errors, codes 200..299 (docs/directory-api.md). Numbers never change. In hayloft-format, so the client decodes
 * the same constants. */
public final class DirectoryErrors {
    private DirectoryErrors() {
    }

    public static final ApiError NO_PLACEMENT = new ApiError(200, "NO_PLACEMENT", 503);
    public static final ApiError NO_WRITABLE_VOLUME = new ApiError(201, "NO_WRITABLE_VOLUME", 503);
    /**
     * No longer sent: it answered the removed per-photo endpoints ({@code lookup}, {@code commit},
     * {@code DELETE /v1/photos}). Kept so code 202 is never reused.
     */
    public static final ApiError UNKNOWN_PHOTO = new ApiError(202, "UNKNOWN_PHOTO", 404);
    public static final ApiError UNKNOWN_VOLUME = new ApiError(203, "UNKNOWN_VOLUME", 404);
    public static final ApiError UNKNOWN_STORE = new ApiError(204, "UNKNOWN_STORE", 404);
    public static final ApiError WRONG_STATE = new ApiError(206, "WRONG_STATE", 409);
    public static final ApiError NO_STRIPE_MAP = new ApiError(207, "NO_STRIPE_MAP", 404);
    public static final ApiError NO_RECLAIM = new ApiError(208, "NO_RECLAIM", 404);
    public static final ApiError JOB_MISMATCH = new ApiError(209, "JOB_MISMATCH", 409);
    public static final ApiError LEASE_HELD = new ApiError(210, "LEASE_HELD", 409);
    /** A backup's target directory exists and is not empty: a backup never overwrites anything. */
    public static final ApiError BACKUP_TARGET_EXISTS = new ApiError(220, "BACKUP_TARGET_EXISTS", 409);
    /** The checkpoint could not be written (disk full, permissions, I/O error); the message says why. */
    public static final ApiError BACKUP_FAILED = new ApiError(221, "BACKUP_FAILED", 500);
    /**
     * A directory replica that is not the Raft group's leader was asked for a change or a read that
     * must be linearizable: 421 Misdirected Request, with the leader's HTTP address ({@code host:port})
     * in the error object's {@code leader} field and the {@code X-Hayloft-Leader} header when it knows
     * one. Clients retry at that address at once (docs/directory-api.md "Replicated directory").
     */
    public static final ApiError NOT_LEADER = new ApiError(230, "NOT_LEADER", 421);
    /** The directory's group has no leader now (an election is running, or this replica is cut off from a majority): retry. */
    public static final ApiError NO_LEADER = new ApiError(231, "NO_LEADER", 503);
    /**
     * A raid-node's commit named a raid lease epoch that is no longer the lease's (another raid-node
     * took it, or it ran out): nothing was changed. The raid-node must stop and take the lease again.
     */
    public static final ApiError LEASE_LOST = new ApiError(232, "LEASE_LOST", 409);
    public static final ApiError UNAUTHORIZED = new ApiError(205, "UNAUTHORIZED", 401);

    // The S3 namespace (docs/directory-api.md "S3 namespace"): the gateway turns each into S3's error.
    /** No bucket of that name. */
    public static final ApiError NO_SUCH_BUCKET = new ApiError(240, "NO_SUCH_BUCKET", 404);
    /** A bucket of that name exists already (one owner: S3's BucketAlreadyOwnedByYou). */
    public static final ApiError BUCKET_EXISTS = new ApiError(241, "BUCKET_EXISTS", 409);
    /** The bucket still holds objects or multipart uploads. */
    public static final ApiError BUCKET_NOT_EMPTY = new ApiError(242, "BUCKET_NOT_EMPTY", 409);
    /** No object of that key. */
    public static final ApiError NO_SUCH_KEY = new ApiError(243, "NO_SUCH_KEY", 404);
    /** No multipart upload of that id (never made, completed or aborted). */
    public static final ApiError NO_SUCH_UPLOAD = new ApiError(244, "NO_SUCH_UPLOAD", 404);
    /** A conditional write's If-Match or If-None-Match did not hold when the change was applied. */
    public static final ApiError PRECONDITION_FAILED = new ApiError(245, "PRECONDITION_FAILED", 412);
    /** A completion named a part that is not uploaded, or with another ETag. */
    public static final ApiError INVALID_PART = new ApiError(246, "INVALID_PART", 400);
    /** A completion named a part smaller than 5 MiB that is not the last. */
    public static final ApiError ENTITY_TOO_SMALL = new ApiError(247, "ENTITY_TOO_SMALL", 400);
    /** The pending record a commit names is gone or doomed (the sweep took it): nothing was changed. */
    public static final ApiError PENDING_GONE = new ApiError(248, "PENDING_GONE", 409);
    /**
     * A change carrying a request id that the directory has applied already (a retry after a lost
     * answer): nothing was changed again. The directory answers such a retry with the first answer;
     * this code reaches a caller only from the state machine's own path, never over HTTP.
     */
    public static final ApiError REQUEST_REPEATED = new ApiError(249, "REQUEST_REPEATED", 409);
}
