package io.hayloft.format.errors;

import java.util.Objects;

/**
 * One wire error: a stable numeric {@code code} that never changes meaning once released, a stable
 * {@code name}, and the HTTP status it is sent with. Servers declare their errors as constants
 * (see {@link CommonErrors}); the numbers, not the Java names, are the contract with clients. No Netty
 * here: the client decodes the same constants the servers send.
 *
 * <p>Immutable and thread-safe.
 */
public final class ApiError {
    private final int code;
    private final String name;
    private final int status;

    public ApiError(int code, String name, int status) {
        if (code <= 0) {
            throw new IllegalArgumentException("error code must be positive, got " + code);
        }
        this.code = code;
        this.name = Objects.requireNonNull(name, "name");
        if (status < 100 || status > 599) {
            throw new IllegalArgumentException("HTTP status must be 100..599, got " + status);
        }
        this.status = status;
    }

    public int code() {
        return code;
    }

    public String name() {
        return name;
    }

    /** The HTTP status code the error is sent with. */
    public int status() {
        return status;
    }

    /** An exception carrying this error and a message naming the bad value. */
    public ApiException exception(String message) {
        return new ApiException(this, message);
    }

    @Override
    public String toString() {
        return code + " " + name + " (" + status + ")";
    }
}
