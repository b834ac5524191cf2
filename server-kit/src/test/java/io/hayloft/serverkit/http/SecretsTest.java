package io.hayloft.serverkit.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class SecretsTest {

    private static final byte[] TOKEN = Secrets.token("admin-token-0123");

    @Test
    void onlyTheExactBearerTokenMatches() {
        assertTrue(Secrets.bearerMatches("Bearer admin-token-0123", TOKEN));
        assertFalse(Secrets.bearerMatches("Bearer admin-token-012", TOKEN), "a prefix");
        assertFalse(Secrets.bearerMatches("Bearer admin-token-01234", TOKEN), "longer");
        assertFalse(Secrets.bearerMatches("Bearer admin-token-0124", TOKEN), "last byte differs");
        assertFalse(Secrets.bearerMatches("bearer admin-token-0123", TOKEN), "scheme is case-sensitive");
        assertFalse(Secrets.bearerMatches("Basic admin-token-0123", TOKEN), "another scheme");
        assertFalse(Secrets.bearerMatches("admin-token-0123", TOKEN), "no scheme");
        assertFalse(Secrets.bearerMatches("Bearer ", TOKEN), "empty");
        assertFalse(Secrets.bearerMatches(null, TOKEN), "missing");
    }

    @Test
    void anUnsetTokenIsNullAndRedactionNeverShowsTheSecret() {
        assertNull(Secrets.token(null));
        assertNull(Secrets.token(""));
        assertEquals("(none)", Secrets.redact(null));
        assertEquals("(set)", Secrets.redact("admin-token-0123"));
    }
}
