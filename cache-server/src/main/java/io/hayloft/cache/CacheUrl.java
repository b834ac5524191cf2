package io.hayloft.cache;

import io.hayloft.format.errors.ApiException;
import io.hayloft.format.errors.CacheErrors;
import io.hayloft.format.wire.PhotoId;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.util.List;
import java.util.Map;

/**
 * A parsed cache URL, {@code /<store>/<volume>/<key>/<alt>?cookie=<hex>}: the store the cache would
 * fetch from (Haystack's cache URLs name it, so any cache node can fill from it) and the needle.
 * The store part {@value #COLD} marks a needle of an erasure-coded volume, read through the
 * directory and the stripes ({@link ColdFetcher}) instead of from one store.
 * The cookie is optional only where {@code cookieRequired} is false (invalidation).
 *
 * @param store {@code host:port} of the store
 * @param needle the needle's volume, key and alternate key
 * @param cookie the cookie, or -1 with {@code hasCookie} false when absent
 *
 * <p>Immutable and thread-safe.
 */
public record CacheUrl(String store, NeedleKey needle, long cookie, boolean hasCookie) {
    /** The store part of a cold URL: {@code /cold/<volume>/<key>/<alt>?cookie=<hex>}. */
    public static final String COLD = "cold";

    /** True for a needle of an erasure-coded volume ({@code /cold/...}). */
    public boolean cold() {
        return COLD.equals(store);
    }

    /** A needle's identity in the cache: volume, key, alternate key (the cookie is checked, not keyed). */
    public record NeedleKey(int volume, long key, int alt) {
        /** The store's path for this needle with {@code cookie}: {@code /<volume>/<key>/<alt>?cookie=<hex>}. */
        public String storePath(long cookie) {
            return "/" + volume + "/" + Long.toUnsignedString(key) + "/" + Integer.toUnsignedString(alt) + "?cookie="
                    + PhotoId.hex16(cookie);
        }

        @Override
        public String toString() {
            return volume + "/" + Long.toUnsignedString(key) + "/" + Integer.toUnsignedString(alt);
        }
    }

    /** The store URL of this needle, e.g. {@code https://s1:8080/3/17/0?cookie=...}; {@code scheme} is {@code http://} or {@code https://}. */
    public String storeUrl(String scheme) {
        return scheme + store + needle.storePath(cookie);
    }

    /**
     * Parses a request URI.
     *
     * @throws ApiException {@link CacheErrors#BAD_CACHE_URL} naming the bad part
     */
    public static CacheUrl parse(String uri, boolean cookieRequired) {
        return parse(new QueryStringDecoder(uri), cookieRequired);
    }

    /** Parses an already decoded request URI. */
    public static CacheUrl parse(QueryStringDecoder q, boolean cookieRequired) {
        List<String> seg = List.of(q.path().split("/", -1));
        if (seg.size() != 5 || !seg.get(0).isEmpty()) {
            throw bad("cache URL must be /<store host:port>/<volume>/<key>/<alt>?cookie=<hex> (or /cold/...), got '"
                    + q.path() + "'");
        }
        String store = seg.get(1);
        String why = COLD.equals(store) ? null : storeProblem(store);
        if (why != null) {
            throw bad(why);
        }
        long volume = unsigned(seg.get(2), "volume", 10);
        if (volume < 1 || volume > Integer.MAX_VALUE) {
            throw bad("volume must be in 1.." + Integer.MAX_VALUE + ", got '" + seg.get(2) + "'");
        }
        String keyText = seg.get(3);
        if (keyText.isEmpty() || keyText.length() > 20 || !keyText.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw bad("key must be an unsigned decimal number, got '" + keyText + "'");
        }
        long key;
        try {
            key = Long.parseUnsignedLong(keyText);
        } catch (NumberFormatException e) {
            throw bad("key must be an unsigned 64-bit number, got '" + keyText + "'");
        }
        long alt = unsigned(seg.get(4), "alt", 10);
        if (alt > 0xFFFFFFFFL) {
            throw bad("alt must be an unsigned 32-bit number, got '" + seg.get(4) + "'");
        }
        Map<String, List<String>> params = q.parameters();
        List<String> c = params.get("cookie");
        if (c == null || c.isEmpty()) {
            if (cookieRequired) {
                throw bad("missing query parameter 'cookie' (16 hex digits)");
            }
            return new CacheUrl(store, new NeedleKey((int) volume, key, (int) alt), -1, false);
        }
        String ck = c.get(0);
        if (ck.isEmpty() || ck.length() > 16 || !ck.chars().allMatch(ch -> Character.digit(ch, 16) >= 0)) {
            throw bad("cookie must be 1..16 hex digits, got '" + ck + "'");
        }
        return new CacheUrl(store, new NeedleKey((int) volume, key, (int) alt), Long.parseUnsignedLong(ck, 16), true);
    }

    /** Checks a {@code host:port} store address; for config validation. */
    public static void checkStore(String store) {
        String why = storeProblem(store);
        if (why != null) {
            throw new IllegalArgumentException(why);
        }
    }

    private static String storeProblem(String store) {
        int colon = store == null ? -1 : store.lastIndexOf(':');
        if (colon <= 0 || colon == store.length() - 1) {
            return "store must be host:port, got '" + store + "'";
        }
        String host = store.substring(0, colon);
        boolean ipv6 = host.startsWith("[") && host.endsWith("]") && host.length() > 2
                && host.substring(1, host.length() - 1).chars().allMatch(ch -> Character.digit(ch, 16) >= 0 || ch == ':' || ch == '.');
        boolean name = host.chars().allMatch(ch -> (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')
                || (ch >= '0' && ch <= '9') || ch == '.' || ch == '-');
        if (!(ipv6 || name) || host.length() > 253) {
            return "store host must be a host name or address, got '" + host + "'";
        }
        String port = store.substring(colon + 1);
        if (port.length() > 5 || !port.chars().allMatch(ch -> ch >= '0' && ch <= '9') || Integer.parseInt(port) < 1
                || Integer.parseInt(port) > 65535) {
            return "store port must be in 1..65535, got '" + port + "'";
        }
        return null;
    }

    private static long unsigned(String s, String what, int maxDigits) {
        if (s.isEmpty() || s.length() > maxDigits || !s.chars().allMatch(ch -> ch >= '0' && ch <= '9')) {
            throw bad(what + " must be an unsigned decimal number, got '" + s + "'");
        }
        return Long.parseLong(s);
    }

    private static ApiException bad(String message) {
        return CacheErrors.BAD_CACHE_URL.exception(message);
    }
}
