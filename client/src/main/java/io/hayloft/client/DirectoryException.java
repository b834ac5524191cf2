package io.hayloft.client;

import io.hayloft.format.errors.DirectoryErrors;

/**
 * A directory call that failed: the directory's error answer (HTTP status and the stable code, name
 * and message of its JSON error body; directory codes are 200..299, shared codes 1..99), or no
 * answer, a timeout, or a garbage answer ({@link #kind()}).
 *
 * <p>Immutable, hence thread-safe.
 */
public class DirectoryException extends RemoteException {
    private static final long serialVersionUID = 1L;

    /** Not enough healthy stores on distinct racks for a new volume (503). */
    public static final int NO_PLACEMENT = DirectoryErrors.NO_PLACEMENT.code();
    /** No logical volume can take writes now (503). */
    public static final int NO_WRITABLE_VOLUME = DirectoryErrors.NO_WRITABLE_VOLUME.code();
    /**
     * The photo key was never assigned (404). No longer sent: the directory keeps no per-photo state
     * (a missing photo is the stores' 404 NEEDLE_NOT_FOUND); kept because codes never change.
     */
    public static final int UNKNOWN_PHOTO = DirectoryErrors.UNKNOWN_PHOTO.code();
    /** No such logical volume (404). */
    public static final int UNKNOWN_VOLUME = DirectoryErrors.UNKNOWN_VOLUME.code();
    /** No such store (404). */
    public static final int UNKNOWN_STORE = DirectoryErrors.UNKNOWN_STORE.code();
    /** The admin token is missing or wrong (401). */
    public static final int UNAUTHORIZED = DirectoryErrors.UNAUTHORIZED.code();

    public DirectoryException(String server, Kind kind, int httpStatus, int code, String errorName, String serverMessage,
                              String message, Throwable cause) {
        super(server, kind, httpStatus, code, errorName, serverMessage, message, cause);
    }
}
