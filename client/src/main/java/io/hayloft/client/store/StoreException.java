package io.hayloft.client.store;

import io.hayloft.client.RemoteException;
import io.hayloft.format.errors.CommonErrors;
import io.hayloft.format.errors.StoreErrors;

/**
 * A store call that failed: the store's error answer (HTTP status and the stable code, name and
 * message of its JSON error body; store codes are 100..199, shared codes 1..99), or no answer, a
 * timeout, or a garbage answer ({@link #kind()}). A missing needle or volume is the subclass
 * {@link NotFoundException}.
 *
 * <p>Immutable, hence thread-safe.
 */
public class StoreException extends RemoteException {
    private static final long serialVersionUID = 1L;

    /** Store error code: the needle does not exist, is deleted, or the cookie is wrong. */
    public static final int NEEDLE_NOT_FOUND = StoreErrors.NEEDLE_NOT_FOUND.code();
    /** Store error code: no such volume on this store. */
    public static final int VOLUME_NOT_FOUND = StoreErrors.VOLUME_NOT_FOUND.code();
    /** Store error code: the volume takes no more writes. */
    public static final int VOLUME_READ_ONLY = StoreErrors.VOLUME_READ_ONLY.code();
    /** Store error code: the volume to create exists already. */
    public static final int VOLUME_EXISTS = StoreErrors.VOLUME_EXISTS.code();
    /** Store error code: the needle's CRC or framing does not verify. */
    public static final int NEEDLE_CORRUPT = StoreErrors.NEEDLE_CORRUPT.code();
    /** Store error code: the needle is larger than a store accepts. */
    public static final int NEEDLE_TOO_LARGE = StoreErrors.NEEDLE_TOO_LARGE.code();
    /** Shared error code: the write token was missing or refused. */
    public static final int FORBIDDEN = CommonErrors.FORBIDDEN.code();

    public StoreException(String server, Kind kind, int httpStatus, int code, String errorName, String serverMessage,
                          String message, Throwable cause) {
        super(server, kind, httpStatus, code, errorName, serverMessage, message, cause);
    }

    /** Builds a {@link NotFoundException} for 404 answers, a {@link StoreException} otherwise. */
    public static StoreException of(String server, Kind kind, int httpStatus, int code, String errorName, String serverMessage,
                             String message, Throwable cause) {
        if (kind == Kind.ERROR && httpStatus == 404) {
            return new NotFoundException(server, httpStatus, code, errorName, serverMessage, message);
        }
        return new StoreException(server, kind, httpStatus, code, errorName, serverMessage, message, cause);
    }
}
