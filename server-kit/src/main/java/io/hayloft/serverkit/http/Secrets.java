package io.hayloft.serverkit.http;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;

/**
 * Comparing and showing secrets (admin tokens, MACs) without leaking them. Every comparison is
 * {@link MessageDigest#isEqual}, whose time does not depend on where the first differing byte is,
 * so an attacker cannot find a token a byte at a time by timing answers. Stateless and thread-safe.
 */
public final class Secrets {

    private Secrets() {
    }

    /** The bytes of a configured token, or null when none is configured (null or empty). */
    public static byte[] token(String configured) {
        return configured == null || configured.isEmpty() ? null : configured.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Whether an {@code Authorization} header carries {@code Bearer <expected>}, compared in
     * constant time. A missing header or another scheme never matches.
     *
     * @param expected the token's bytes, not null
     */
    public static boolean bearerMatches(String authorization, byte[] expected) {
        byte[] given = authorization != null && authorization.startsWith("Bearer ")
                ? authorization.substring(7).getBytes(StandardCharsets.UTF_8) : new byte[0];
        return MessageDigest.isEqual(given, expected);
    }

    /** What a log line or an error shows of a secret: whether it is set, never a character of it. */
    public static String redact(String secret) {
        return secret == null || secret.isEmpty() ? "(none)" : "(set)";
    }
}
