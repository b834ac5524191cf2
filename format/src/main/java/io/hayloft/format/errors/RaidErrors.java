package io.hayloft.format.errors;


/** The raid-node's wire errors, codes 400..499 (docs/raid-api.md; the cache has 300..399). Numbers never change. In hayloft-format, so the client decodes
 * the same constants. */
public final class RaidErrors {
    private RaidErrors() {
    }

    /** A pass or scrub asked for by an operator failed; the message says why. */
    public static final ApiError PASS_FAILED = new ApiError(400, "PASS_FAILED", 500);
    /** The raid-node is shutting down and takes no more work. */
    public static final ApiError STOPPING = new ApiError(401, "STOPPING", 503);
    /** The pass did not finish within the wait asked for; it goes on running. */
    public static final ApiError STILL_RUNNING = new ApiError(402, "STILL_RUNNING", 504);
}
