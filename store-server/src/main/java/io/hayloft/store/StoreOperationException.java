package io.hayloft.store;

/**
 * A failure of a store operation that is not an I/O error: the reason says what the client did or
 * what was found on disk. I/O errors stay {@link java.io.IOException}s, so that callers (e.g. the
 * compactor) can tell corruption, which may be skipped, from a failing disk, which must stop them.
 * The HTTP layer answers it with the reason's wire code; a caller of the store sees that answer as
 * the client's {@code io.hayloft.client.store.StoreException}.
 */
public final class StoreOperationException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Why the operation failed; mapped to stable wire codes by {@code StoreErrors}. */
    public enum Reason {
        NEEDLE_NOT_FOUND, VOLUME_NOT_FOUND, VOLUME_READ_ONLY, VOLUME_EXISTS, NEEDLE_CORRUPT, NEEDLE_TOO_LARGE,
        BAD_ARGUMENT, COMPACTION_RUNNING, BLOCK_NOT_FOUND, BLOCK_EXISTS, BAD_RANGE, UNSUPPORTED_FORMAT, CORRUPT_FILE,
        /** The volume has not yet applied the directory's delete log since the store started. */
        VOLUME_SYNCING
    }

    private final Reason reason;

    public StoreOperationException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
