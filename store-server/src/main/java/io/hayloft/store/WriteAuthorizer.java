package io.hayloft.store;

import io.netty.handler.codec.http.HttpRequest;

/**
 * Decides whether a mutating request (needle write or delete, batch, block change, volume admin)
 * may proceed. The directory server will sign write tokens that an implementation checks; until
 * then {@link #ALLOW_ALL} is used. Implementations throw
 * {@link io.hayloft.format.errors.ApiException} with {@link io.hayloft.format.errors.CommonErrors#FORBIDDEN}
 * to refuse. Must be thread-safe: called concurrently from the disk threads.
 */
@FunctionalInterface
public interface WriteAuthorizer {
    /**
     * @param operation e.g. "needle.put", "needle.delete", "batch", "block.put", "admin.compact"
     * @param volumeId the volume concerned, or -1 for block and server-wide operations
     */
    void authorize(HttpRequest request, String operation, long volumeId);

    /**
     * Checks one key of a multi-write once its body is parsed (the request line names only the
     * volume). Allows everything by default.
     */
    default void authorizeKey(HttpRequest request, String operation, long volumeId, long key) {
    }

    WriteAuthorizer ALLOW_ALL = (request, operation, volumeId) -> { };
}
