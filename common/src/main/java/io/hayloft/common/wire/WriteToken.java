package io.hayloft.common.wire;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Short-lived write permission for one photo key on one logical volume, signed by the directory with
 * the cluster secret and checked by every store before it appends a needle: HMAC-SHA256 over
 * {@code "w:" + volume + ":" + key + ":" + expiresMillis}. Text form: {@code expiresMillis.hexMac}.
 * Thread-safe (a new {@link Mac} per call).
 */
public final class WriteToken {

    private final byte[] secret;

    public WriteToken(String secret) {
        if (secret == null || secret.length() < 16) {
            throw new IllegalArgumentException("cluster secret must be at least 16 characters");
        }
        this.secret = secret.getBytes(StandardCharsets.UTF_8);
    }

    /** A token for {@code key} on {@code volume} valid until {@code expiresMillis}. */
    public String sign(int volume, long key, long expiresMillis) {
        return expiresMillis + "." + HexFormat.of().formatHex(mac(volume, key, expiresMillis));
    }

    /**
     * Checks a token.
     *
     * @return null when valid, else why not (for the 403 body)
     */
    public String check(String token, int volume, long key, long nowMillis) {
        if (token == null || token.isEmpty()) {
            return "missing write token";
        }
        int dot = token.indexOf('.');
        if (dot <= 0) {
            return "malformed write token";
        }
        long expires;
        byte[] given;
        try {
            expires = Long.parseLong(token.substring(0, dot));
            given = HexFormat.of().parseHex(token.substring(dot + 1));
        } catch (IllegalArgumentException e) {
            return "malformed write token";
        }
        if (!MessageDigest.isEqual(given, mac(volume, key, expires))) {
            return "write token does not match volume " + volume + " key " + key;
        }
        if (expires < nowMillis) {
            return "write token expired";
        }
        return null;
    }

    private byte[] mac(int volume, long key, long expires) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            return mac.doFinal(("w:" + volume + ":" + key + ":" + expires).getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }
}
