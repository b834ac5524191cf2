package io.hayloft.format.errors;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An {@link ApiError} with a message for the client; thrown by request handlers, sent as JSON. It may
 * carry extra string fields, sent beside {@code code}, {@code name} and {@code message} in the error
 * object (a directory follower's {@code NOT_LEADER} answer names the leader's address in {@code leader}).
 */
public final class ApiException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient ApiError error;
    private final transient Map<String, String> fields;

    public ApiException(ApiError error, String message) {
        this(error, message, Map.of());
    }

    private ApiException(ApiError error, String message, Map<String, String> fields) {
        super(message);
        this.error = error;
        this.fields = fields;
    }

    public ApiError error() {
        return error;
    }

    /** Extra fields of the error object, in order (empty for most errors). */
    public Map<String, String> fields() {
        return fields;
    }

    /** This error with one more field {@code name} (a null value is sent as JSON null). */
    public ApiException with(String name, String value) {
        Map<String, String> m = new LinkedHashMap<>(fields);
        m.put(name, value);
        return new ApiException(error, getMessage(), Collections.unmodifiableMap(m));
    }
}
