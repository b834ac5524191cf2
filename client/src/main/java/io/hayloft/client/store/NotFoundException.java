package io.hayloft.client.store;

/**
 * The store answered 404: no such needle (missing, deleted, or a wrong cookie, which a store makes
 * look exactly like a missing needle), or no such volume ({@link #code()} tells which).
 *
 * <p>Immutable, hence thread-safe.
 */
public class NotFoundException extends StoreException {
    private static final long serialVersionUID = 1L;

    public NotFoundException(String server, int httpStatus, int code, String errorName, String serverMessage,
                             String message) {
        super(server, Kind.ERROR, httpStatus, code, errorName, serverMessage, message, null);
    }
}
