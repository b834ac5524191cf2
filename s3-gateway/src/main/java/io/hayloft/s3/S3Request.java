package io.hayloft.s3;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One S3 request as the gateway sees it: its method, its raw path and query (as sent, for the
 * signature), the bucket and key it addresses (path style {@code /bucket/key}, or virtual-host style
 * {@code bucket.domain} when a domain is configured), its decoded query parameters and its headers.
 * Also S3's rules for bucket names and keys. Immutable after {@link #parse}; thread-safe as far as its
 * headers are not changed.
 */
public final class S3Request {
    /** The request header the gateway sets to the request id, so the pipeline's error renderer finds it. */
    public static final String REQUEST_ID_HEADER = "X-Hayloft-S3-Request-Id";
    /** The path prefix of the gateway's own endpoints ({@code /_hayloft/metrics}, {@code /_hayloft/health}): never a bucket. */
    public static final String ADMIN_PREFIX = "/_hayloft/";
    public static final int MAX_KEY_BYTES = 1024;

    private static final Pattern BUCKET = Pattern.compile("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]");
    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}");

    private final String method;
    private final String rawPath;
    private final String rawQuery;
    private final String bucket;
    private final String key;
    private final Map<String, String> query;
    private final HttpHeaders headers;
    private final String requestId;

    private S3Request(String method, String rawPath, String rawQuery, String bucket, String key, Map<String, String> query,
                      HttpHeaders headers, String requestId) {
        this.method = method;
        this.rawPath = rawPath;
        this.rawQuery = rawQuery;
        this.bucket = bucket;
        this.key = key;
        this.query = query;
        this.headers = headers;
        this.requestId = requestId;
    }

    /**
     * Parses a request's head. {@code domain}: the virtual-host domain (null or empty: path style
     * only). The bucket name and key are not checked here (see {@link #checkBucket}, {@link #checkKey}):
     * their errors need the request to be authenticated first. Throws S3Exception InvalidURI-like
     * {@code InvalidArgument} when the path is not valid percent-encoded UTF-8.
     */
    public static S3Request parse(HttpRequest head, String domain, String requestId) {
        String uri = head.uri();
        if (uri.startsWith("http://") || uri.startsWith("https://")) { // absolute form: keep the path
            int slash = uri.indexOf('/', uri.indexOf("//") + 2);
            uri = slash < 0 ? "/" : uri.substring(slash);
        }
        int q = uri.indexOf('?');
        String rawPath = q < 0 ? uri : uri.substring(0, q);
        String rawQuery = q < 0 ? "" : uri.substring(q + 1);
        int hash = rawQuery.indexOf('#');
        if (hash >= 0) {
            rawQuery = rawQuery.substring(0, hash);
        }
        if (rawPath.isEmpty()) {
            rawPath = "/";
        }
        String path = decode(rawPath, false);
        String vhostBucket = virtualHostBucket(head.headers().get(HttpHeaderNames.HOST), domain);
        String bucket;
        String key;
        if (vhostBucket != null) {
            bucket = vhostBucket;
            key = path.length() > 1 ? path.substring(1) : null;
        } else {
            String p = path.startsWith("/") ? path.substring(1) : path;
            int slash = p.indexOf('/');
            if (slash < 0) {
                bucket = p.isEmpty() ? null : p;
                key = null;
            } else {
                bucket = p.substring(0, slash);
                key = p.substring(slash + 1);
                if (key.isEmpty()) {
                    key = null;
                }
            }
        }
        return new S3Request(head.method().name(), rawPath, rawQuery, bucket, key, parseQuery(rawQuery), head.headers(),
                requestId);
    }

    /** The bucket a Host header names in virtual-host style under {@code domain}, or null (path style). */
    static String virtualHostBucket(String host, String domain) {
        if (host == null || domain == null || domain.isEmpty()) {
            return null;
        }
        String h = stripPort(host.trim()).toLowerCase(Locale.ROOT);
        String d = stripPort(domain).toLowerCase(Locale.ROOT);
        if (h.length() > d.length() + 1 && h.endsWith("." + d)) {
            return h.substring(0, h.length() - d.length() - 1);
        }
        return null;
    }

    private static String stripPort(String host) {
        if (host.startsWith("[")) {
            return host;
        }
        int colon = host.lastIndexOf(':');
        return colon < 0 ? host : host.substring(0, colon);
    }

    /** Query parameters decoded ('+' is a space there); a parameter without value maps to "". First value wins. */
    static Map<String, String> parseQuery(String rawQuery) {
        if (rawQuery == null || rawQuery.isEmpty()) {
            return Map.of();
        }
        Map<String, String> m = new LinkedHashMap<>();
        for (String pair : rawQuery.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String name = decode(eq < 0 ? pair : pair.substring(0, eq), true);
            String value = eq < 0 ? "" : decode(pair.substring(eq + 1), true);
            m.putIfAbsent(name, value);
        }
        return Collections.unmodifiableMap(m);
    }

    /**
     * Percent-decodes {@code s} as UTF-8 ({@code plusIsSpace}: '+' means ' ', as in a query). Throws
     * S3Exception InvalidArgument on a bad escape or bytes that are not UTF-8.
     */
    static String decode(String s, boolean plusIsSpace) {
        if (s.indexOf('%') < 0 && (!plusIsSpace || s.indexOf('+') < 0)) {
            return s;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '%') {
                if (i + 2 >= s.length() || Character.digit(s.charAt(i + 1), 16) < 0 || Character.digit(s.charAt(i + 2), 16) < 0) {
                    throw S3Error.INVALID_ARGUMENT.exception("malformed percent-escape in the request URI");
                }
                out.write(Character.digit(s.charAt(i + 1), 16) << 4 | Character.digit(s.charAt(i + 2), 16));
                i += 2;
            } else if (c == '+' && plusIsSpace) {
                out.write(' ');
            } else if (c < 0x80) {
                out.write(c);
            } else {
                byte[] b = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
                if (Character.isHighSurrogate(c) && i + 1 < s.length()) {
                    b = s.substring(i, i + 2).getBytes(StandardCharsets.UTF_8);
                    i++;
                }
                out.write(b, 0, b.length);
            }
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(out.toByteArray())).toString();
        } catch (CharacterCodingException e) {
            throw S3Error.INVALID_ARGUMENT.exception("the request URI is not valid UTF-8");
        }
    }

    /**
     * {@code rawPath} decoded and encoded again as SigV4 encodes a path (unreserved characters and
     * '/' as they are, every other byte of UTF-8 as %XX): the path a client signed when what it sent
     * differs (the AWS SDK sends the slashes of a key's "//" as "/%2F"). Null when it does not parse.
     */
    public static String canonicalPath(String rawPath) {
        String decoded;
        try {
            decoded = decode(rawPath, false);
        } catch (S3Exception e) {
            return null;
        }
        StringBuilder b = new StringBuilder(rawPath.length() + 16);
        for (byte x : decoded.getBytes(StandardCharsets.UTF_8)) {
            int c = x & 0xff;
            if (c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_'
                    || c == '~' || c == '/') {
                b.append((char) c);
            } else {
                b.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 15, 16)));
            }
        }
        return b.toString();
    }

    /** Whether {@code name} follows S3's bucket naming rules. */
    public static boolean validBucketName(String name) {
        return name != null && BUCKET.matcher(name).matches() && !name.contains("..") && !name.contains(".-")
                && !name.contains("-.") && !IPV4.matcher(name).matches() && !name.startsWith("xn--")
                && !name.endsWith("-s3alias") && !name.endsWith("--ol-s3");
    }

    /** Throws InvalidBucketName unless {@code name} follows S3's rules. */
    public static void checkBucket(String name) {
        if (!validBucketName(name)) {
            throw S3Error.INVALID_BUCKET_NAME.exception("The specified bucket is not valid: " + name);
        }
    }

    /** Throws KeyTooLongError over 1024 UTF-8 bytes, InvalidArgument for an empty key or one with a NUL. */
    public static void checkKey(String key) {
        if (key == null || key.isEmpty()) {
            throw S3Error.INVALID_ARGUMENT.exception("the object key must not be empty");
        }
        if (key.length() > MAX_KEY_BYTES / 3 && key.getBytes(StandardCharsets.UTF_8).length > MAX_KEY_BYTES) {
            throw S3Error.KEY_TOO_LONG.exception("Your key is too long: at most " + MAX_KEY_BYTES + " bytes of UTF-8");
        }
        if (key.indexOf('\u0000') >= 0) {
            throw S3Error.INVALID_ARGUMENT.exception("the object key must not contain U+0000 (no XML answer could name it)");
        }
    }

    public String method() {
        return method;
    }

    /** The path as sent (percent-encoded), for the signature. */
    public String rawPath() {
        return rawPath;
    }

    /** The query as sent, without '?' ("" when none). */
    public String rawQuery() {
        return rawQuery;
    }

    /** The bucket addressed, or null (the service: ListBuckets). */
    public String bucket() {
        return bucket;
    }

    /** The key addressed, or null (a bucket or the service). */
    public String key() {
        return key;
    }

    public Map<String, String> query() {
        return query;
    }

    public boolean has(String param) {
        return query.containsKey(param);
    }

    /** A query parameter, or null. */
    public String param(String name) {
        return query.get(name);
    }

    public HttpHeaders headers() {
        return headers;
    }

    /** A header, or null. */
    public String header(String name) {
        return headers.get(name);
    }

    public String requestId() {
        return requestId;
    }

    /** The resource named in error bodies: {@code /bucket/key}. */
    public String resource() {
        if (bucket == null) {
            return "/";
        }
        return key == null ? "/" + bucket : "/" + bucket + "/" + key;
    }

    @Override
    public String toString() {
        return method + " " + resource();
    }
}
