package io.hayloft.store.cluster;

import io.hayloft.format.errors.CommonErrors;
import io.hayloft.format.wire.WriteToken;
import io.hayloft.store.WriteAuthorizer;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Clock;

/**
 * The store's side of the cluster's write protection. Needle writes and deletes need a write token
 * signed by the directory ({@link WriteToken}) that covers the volume and key; a batch needs one that
 * covers the volume here, and every key of its body is checked by {@link #authorizeKey}. Volume admin
 * and block operations need the admin bearer token. With no cluster secret configured everything is
 * allowed (the embedded default; the directory warns loudly at start-up). Thread-safe.
 */
public final class ClusterAuthorizer implements WriteAuthorizer {

    private final WriteToken tokens;
    private final byte[] adminToken;
    private final Clock clock;

    /**
     * @param clusterSecret the directory's HMAC secret, or null/empty for an open cluster
     * @param adminToken    bearer token for admin and block operations, or null/empty for none
     */
    public ClusterAuthorizer(String clusterSecret, String adminToken, Clock clock) {
        this.tokens = clusterSecret == null || clusterSecret.isEmpty() ? null : new WriteToken(clusterSecret);
        this.adminToken = adminToken == null || adminToken.isEmpty() ? null : adminToken.getBytes(StandardCharsets.UTF_8);
        this.clock = clock;
    }

    @Override
    public void authorize(HttpRequest request, String operation, long volumeId) {
        if (operation.startsWith("admin.") || operation.startsWith("block.")) {
            checkAdmin(request, operation);
            return;
        }
        if (tokens == null) {
            return;
        }
        if (operation.equals("batch")) {
            return; // each key of the body is checked by authorizeKey once the body is parsed
        }
        String[] seg = new QueryStringDecoder(request.uri()).path().split("/");
        long key;
        try {
            key = Long.parseLong(seg[2]);
        } catch (RuntimeException e) {
            throw CommonErrors.FORBIDDEN.exception(operation + ": cannot tell which key the request is for");
        }
        authorizeKey(request, operation, volumeId, key);
    }

    /** Checks that the request's write token covers {@code key} on {@code volumeId}. */
    @Override
    public void authorizeKey(HttpRequest request, String operation, long volumeId, long key) {
        if (tokens == null) {
            return;
        }
        String why = volumeId > Integer.MAX_VALUE ? "volume out of range"
                : tokens.check(request.headers().get(WriteToken.HEADER), (int) volumeId, key, clock.millis());
        if (why != null) {
            throw CommonErrors.FORBIDDEN.exception(operation + " of key " + key + " on volume " + volumeId + " refused: " + why);
        }
    }

    private void checkAdmin(HttpRequest request, String operation) {
        if (adminToken == null) {
            return;
        }
        String h = request.headers().get(HttpHeaderNames.AUTHORIZATION);
        byte[] given = h != null && h.startsWith("Bearer ") ? h.substring(7).getBytes(StandardCharsets.UTF_8) : new byte[0];
        if (!MessageDigest.isEqual(given, adminToken)) {
            throw CommonErrors.FORBIDDEN.exception(operation + " needs 'Authorization: Bearer <admin token>'");
        }
    }
}
