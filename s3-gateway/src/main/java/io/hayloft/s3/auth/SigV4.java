package io.hayloft.s3.auth;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The pieces of AWS Signature Version 4 that the verifier and the chunk decoders share: HMAC-SHA256,
 * SHA-256, the signing key, RFC 3986 encoding and the canonical query string. Stateless; thread-safe.
 */
public final class SigV4 {
    public static final String ALGORITHM = "AWS4-HMAC-SHA256";
    /** Hex SHA-256 of no bytes. */
    public static final String EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    private static final HexFormat HEX = HexFormat.of();
    private static final char[] UPPER_HEX = "0123456789ABCDEF".toCharArray();

    private SigV4() {
    }

    public static byte[] hmac(byte[] key, String data) {
        return mac(key).doFinal(data.getBytes(StandardCharsets.UTF_8));
    }

    /** An HMAC-SHA256 keyed with {@code key} (not thread-safe: one user at a time). */
    public static Mac mac(byte[] key) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return mac;
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    public static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
    }

    public static String sha256Hex(String s) {
        return hex(sha256().digest(s.getBytes(StandardCharsets.UTF_8)));
    }

    public static String hex(byte[] b) {
        return HEX.formatHex(b);
    }

    /** The signing key of a secret for a date (yyyyMMdd), region and service. */
    public static byte[] signingKey(String secretKey, String date, String region, String service) {
        byte[] k = hmac(("AWS4" + secretKey).getBytes(StandardCharsets.UTF_8), date);
        k = hmac(k, region);
        k = hmac(k, service);
        return hmac(k, "aws4_request");
    }

    /** Hex HMAC-SHA256 of a string to sign. */
    public static String sign(byte[] signingKey, String stringToSign) {
        return hex(hmac(signingKey, stringToSign));
    }

    /** Whether two hex signatures are equal (case-insensitively), in time independent of where they differ. */
    public static boolean sameSignature(String expected, String given) {
        byte[] a = expected.getBytes(StandardCharsets.US_ASCII);
        byte[] b = given.toLowerCase(java.util.Locale.ROOT).getBytes(StandardCharsets.US_ASCII);
        return MessageDigest.isEqual(a, b);
    }

    /** RFC 3986 encoding of a string's UTF-8 bytes: unreserved characters kept, the rest %XX (upper case). */
    public static String uriEncode(String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        StringBuilder sb = new StringBuilder(bytes.length + 8);
        for (byte b : bytes) {
            int c = b & 0xff;
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'
                    || c == '.' || c == '~') {
                sb.append((char) c);
            } else {
                sb.append('%').append(UPPER_HEX[c >> 4]).append(UPPER_HEX[c & 15]);
            }
        }
        return sb.toString();
    }

    /** Percent-decoding (only %XX; '+' stays '+'); an invalid escape is kept literally. */
    public static String uriDecode(String s) {
        if (s.indexOf('%') < 0) {
            return s;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(s.length());
        byte[] in = s.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < in.length; i++) {
            int c = in[i];
            if (c == '%' && i + 2 < in.length && hexValue(in[i + 1]) >= 0 && hexValue(in[i + 2]) >= 0) {
                out.write(hexValue(in[i + 1]) << 4 | hexValue(in[i + 2]));
                i += 2;
            } else {
                out.write(c);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static int hexValue(byte c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }

    /** A query parameter, decoded. */
    public record Param(String name, String value) {
    }

    /** The parameters of a raw query string (null or empty: none), decoded, in order. */
    public static List<Param> parseQuery(String rawQuery) {
        List<Param> out = new ArrayList<>();
        if (rawQuery == null || rawQuery.isEmpty()) {
            return out;
        }
        for (String part : rawQuery.split("&", -1)) {
            if (part.isEmpty()) {
                continue;
            }
            int eq = part.indexOf('=');
            String name = eq < 0 ? part : part.substring(0, eq);
            String value = eq < 0 ? "" : part.substring(eq + 1);
            out.add(new Param(uriDecode(name), uriDecode(value)));
        }
        return out;
    }

    /** The canonical query string: names and values encoded, sorted by name then value; {@code exclude} left out. */
    public static String canonicalQuery(List<Param> params, String exclude) {
        List<String[]> enc = new ArrayList<>(params.size());
        for (Param p : params) {
            if (exclude != null && p.name().equals(exclude)) {
                continue;
            }
            enc.add(new String[] {uriEncode(p.name()), uriEncode(p.value())});
        }
        enc.sort((a, b) -> {
            int c = a[0].compareTo(b[0]);
            return c != 0 ? c : a[1].compareTo(b[1]);
        });
        StringBuilder sb = new StringBuilder();
        for (String[] e : enc) {
            if (sb.length() > 0) {
                sb.append('&');
            }
            sb.append(e[0]).append('=').append(e[1]);
        }
        return sb.toString();
    }

    /** A header value as canonical headers take it: trimmed, each run of white space made one space. */
    public static void appendCanonicalValue(StringBuilder sb, String value) {
        int start = sb.length();
        boolean pendingSpace = false;
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == ' ' || c == '\t' || c == '\n' || c == '\u000b' || c == '\r' || c == '\f') {
                pendingSpace = sb.length() > start;
            } else {
                if (pendingSpace) {
                    sb.append(' ');
                    pendingSpace = false;
                }
                sb.append(c);
            }
        }
    }
}
