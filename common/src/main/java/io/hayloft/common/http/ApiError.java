package io.hayloft.common.http;

import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.Objects;

/**
 * One wire error: a stable numeric {@code code} that never changes meaning once released, a stable
 * {@code name}, and the HTTP status it is sent with. Servers declare their errors as constants
 * (see {@link CommonErrors}); the numbers, not the Java names, are the contract with clients.
 *
 * <p>Immutable and thread-safe.
 */
public final class ApiError {
    private final int code;
    private final String name;
    private final HttpResponseStatus status;

    public ApiError(int code, String name, HttpResponseStatus status) {
        if (code <= 0) {
            throw new IllegalArgumentException("error code must be positive, got " + code);
        }
        this.code = code;
        this.name = Objects.requireNonNull(name, "name");
        this.status = Objects.requireNonNull(status, "status");
    }

    public int code() {
        return code;
    }

    public String name() {
        return name;
    }

    public HttpResponseStatus status() {
        return status;
    }

    /** An exception carrying this error and a message naming the bad value. */
    public ApiException exception(String message) {
        return new ApiException(this, message);
    }

    @Override
    public String toString() {
        return code + " " + name + " (" + status.code() + ")";
    }
}
