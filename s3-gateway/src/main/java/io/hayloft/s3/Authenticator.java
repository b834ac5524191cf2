package io.hayloft.s3;

import io.hayloft.s3.auth.Verified;
import io.netty.handler.codec.http.HttpHeaders;

/**
 * Checks who sent a request, from its head alone (before any body is read): SigV4 in the
 * {@code Authorization} header or a presigned URL ({@code io.hayloft.s3.auth}). Throws
 * {@link S3Exception} (AccessDenied, SignatureDoesNotMatch, RequestTimeTooSkewed ...) when it does
 * not check out. Implementations are thread-safe.
 */
@FunctionalInterface
public interface Authenticator {
    /** {@code rawPath}: the path as sent; {@code rawQuery}: the query as sent, without '?' ("" when none). */
    Verified verify(String method, String rawPath, String rawQuery, HttpHeaders headers);
}
