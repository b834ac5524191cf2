package io.hayloft.format.errors;

/** An {@link ApiError} with a message for the client; thrown by request handlers, sent as JSON. */
public final class ApiException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient ApiError error;

    public ApiException(ApiError error, String message) {
        super(message);
        this.error = error;
    }

    public ApiError error() {
        return error;
    }
}
