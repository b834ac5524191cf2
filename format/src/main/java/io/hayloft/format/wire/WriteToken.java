package io.hayloft.format.wire;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Short-lived write permission for a range of photo keys on one logical volume, signed by the
 * directory with the cluster secret and checked by every store before it appends a needle. One
 * allocator lease hands out consecutive keys {@code [first, first + count)} and one token for them all, so a
 * batch needs one token. The MAC is HMAC-SHA256 over
 * {@code "w:" + volume + ":" + first + ":" + count + ":" + expiresMillis}; the text form is
 * {@code first.count.expiresMillis.hexMac}, sent in the {@value #HEADER} header. Thread-safe.
 */
public final class WriteToken {

    /** The HTTP header that carries a write token. */
    public static final String HEADER = "X-Hayloft-Token";

    private final byte[] secret;

    public WriteToken(String secret) {
        if (secret == null || secret.length() < 16) {
            throw new IllegalArgumentException("cluster secret must be at least 16 characters");
        }
        this.secret = secret.getBytes(StandardCharsets.UTF_8);
    }

    /** A token for keys {@code [first, first + count)} on {@code volume}, valid until {@code expiresMillis}. */
    public String sign(int volume, long first, int count, long expiresMillis) {
        if (count < 1) {
            throw new IllegalArgumentException("count must be >= 1, was " + count);
        }
        return first + "." + count + "." + expiresMillis + "." + HexFormat.of().formatHex(mac(volume, first, count, expiresMillis));
    }

    /**
     * Checks that a token allows writing {@code key} on {@code volume} at {@code nowMillis}.
     *
     * @return null when valid, else why not (for the 403 body)
     */
    public String check(String token, int volume, long key, long nowMillis) {
        if (token == null || token.isEmpty()) {
            return "missing write token";
        }
        String[] p = token.split("\\.", -1);
        if (p.length != 4) {
            return "malformed write token";
        }
        long first;
        int count;
        long expires;
        byte[] given;
        try {
            first = Long.parseLong(p[0]);
            count = Integer.parseInt(p[1]);
            expires = Long.parseLong(p[2]);
            given = HexFormat.of().parseHex(p[3]);
        } catch (IllegalArgumentException e) {
            return "malformed write token";
        }
        if (!MessageDigest.isEqual(given, mac(volume, first, count, expires))) {
            return "write token is not valid for volume " + volume;
        }
        if (key < first || key - first >= count) {
            return "write token covers keys " + first + ".." + (first + count - 1) + ", not key " + key;
        }
        if (expires < nowMillis) {
            return "write token expired";
        }
        return null;
    }

    private byte[] mac(int volume, long first, int count, long expires) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            return mac.doFinal(("w:" + volume + ":" + first + ":" + count + ":" + expires).getBytes(StandardCharsets.UTF_8));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }
}
