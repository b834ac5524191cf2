package io.hayloft.s3.auth;

import io.hayloft.s3.S3Error;
import io.hayloft.s3.S3Exception;
import io.netty.handler.codec.http.HttpHeaders;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * Checks AWS Signature Version 4 on S3 requests: the {@code Authorization} header or a presigned URL's
 * query parameters, as S3 does (the path as sent, neither normalised nor encoded twice). Answers who
 * signed and how the body is signed ({@link Verified}), or throws an {@link S3Exception} with S3's code.
 * Never puts a secret in a message. Thread-safe: the users map is copied, signing keys are cached in
 * a concurrent map (per access key, date and region; cleared when it grows past {@value #MAX_KEYS}).
 */
public final class SigV4Verifier {
    /** How far a header-signed request's time may be from the clock. */
    public static final Duration MAX_SKEW = Duration.ofMinutes(15);
    /** Longest validity of a presigned URL (7 days). */
    public static final long MAX_EXPIRES_SECONDS = 604_800;
    static final int MAX_KEYS = 4096;
    private static final DateTimeFormatter AMZ_DATE = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'", Locale.ROOT);
    private static final Pattern HEX_SHA256 = Pattern.compile("[0-9a-fA-F]{64}");
    private static final Pattern SIGNATURE = Pattern.compile("[0-9a-fA-F]{64}");

    private final Map<String, String> users;
    private final String region;
    private final Clock clock;
    private final Map<String, byte[]> keys = new ConcurrentHashMap<>();

    /**
     * @param users  access key to secret key
     * @param region the region every signature's scope must name
     * @param clock  the time against which request times and presigned expiries are checked
     */
    public SigV4Verifier(Map<String, String> users, String region, Clock clock) {
        this.users = Map.copyOf(users);
        this.region = region;
        this.clock = clock;
    }

    /** The region signatures must name. */
    public String region() {
        return region;
    }

    /**
     * Verifies a request. {@code rawPath}: the path as sent (percent-encoded, without the query);
     * {@code rawQuery}: the query as sent, without '?' (null or empty: none).
     */
    public Verified verify(String method, String rawPath, String rawQuery, HttpHeaders headers) {
        List<SigV4.Param> params = SigV4.parseQuery(rawQuery);
        boolean presigned = false;
        for (SigV4.Param p : params) {
            if (p.name().equals("X-Amz-Algorithm") || p.name().equals("X-Amz-Signature")
                    || p.name().equals("X-Amz-Credential")) {
                presigned = true;
                break;
            }
        }
        String authorization = headers.get("authorization");
        if (presigned && authorization != null) {
            throw S3Error.INVALID_ARGUMENT.exception("Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, "
                    + "Signature query string parameter or the Authorization header should be specified");
        }
        if (presigned) {
            return verifyPresigned(method, rawPath, params, headers);
        }
        if (authorization == null) {
            throw S3Error.ACCESS_DENIED.exception("Access Denied");
        }
        return verifyHeader(method, rawPath, params, headers, authorization);
    }

    private Verified verifyHeader(String method, String rawPath, List<SigV4.Param> params, HttpHeaders headers,
                                  String authorization) {
        S3Error malformed = S3Error.AUTHORIZATION_HEADER_MALFORMED;
        String auth = authorization.trim();
        if (!auth.startsWith(SigV4.ALGORITHM + " ")) {
            throw malformed.exception("The authorization header is malformed; the authorization mechanism must be "
                    + SigV4.ALGORITHM + ".");
        }
        String credential = null;
        String signedHeaders = null;
        String signature = null;
        for (String part : auth.substring(SigV4.ALGORITHM.length() + 1).split(",")) {
            String kv = part.trim();
            int eq = kv.indexOf('=');
            if (eq < 0) {
                throw malformed.exception("The authorization header is malformed; '" + kv + "' is not a key=value pair.");
            }
            String k = kv.substring(0, eq).trim();
            String v = kv.substring(eq + 1).trim();
            switch (k) {
                case "Credential" -> credential = v;
                case "SignedHeaders" -> signedHeaders = v;
                case "Signature" -> signature = v;
                default -> throw malformed.exception("The authorization header is malformed; unknown component '" + k + "'.");
            }
        }
        if (credential == null || signedHeaders == null || signature == null) {
            throw malformed.exception("The authorization header is malformed; it needs Credential, SignedHeaders and Signature.");
        }
        Scope scope = scope(credential, malformed, "The authorization header is malformed");
        String amzDate = headers.get("x-amz-date");
        if (amzDate == null) {
            String date = headers.get("date");
            if (date == null) {
                throw S3Error.ACCESS_DENIED.exception("AWS authentication requires a valid Date or x-amz-date header");
            }
            try {
                amzDate = AMZ_DATE.format(ZonedDateTime.parse(date.trim(), DateTimeFormatter.RFC_1123_DATE_TIME)
                        .withZoneSameInstant(ZoneOffset.UTC));
            } catch (DateTimeParseException e) {
                throw S3Error.ACCESS_DENIED.exception("AWS authentication requires a valid Date or x-amz-date header");
            }
        }
        Instant time = parseAmzDate(amzDate, S3Error.ACCESS_DENIED, "AWS authentication requires a valid Date or x-amz-date header");
        if (!amzDate.startsWith(scope.date)) {
            throw malformed.exception("Invalid credential date \"" + scope.date + "\". This date is not the same as X-Amz-Date: \""
                    + amzDate.substring(0, 8) + "\".");
        }
        Instant now = clock.instant();
        if (Duration.between(time, now).abs().compareTo(MAX_SKEW) > 0) {
            throw S3Error.REQUEST_TIME_TOO_SKEWED.exception("The difference between the request time (" + amzDate
                    + ") and the server's time (" + AMZ_DATE.format(now.atOffset(ZoneOffset.UTC)) + ") is too large.");
        }
        String contentSha = headers.get("x-amz-content-sha256");
        if (contentSha == null) {
            throw S3Error.INVALID_REQUEST.exception("Missing required header for this request: x-amz-content-sha256");
        }
        contentSha = contentSha.trim();
        PayloadMode mode = payloadMode(contentSha);
        String[] names = signedHeaderNames(signedHeaders, malformed);
        if (!SIGNATURE.matcher(signature).matches()) {
            throw S3Error.SIGNATURE_DOES_NOT_MATCH.exception(S3Error.SIGNATURE_DOES_NOT_MATCH.message());
        }
        String canonical = canonicalRequest(method, rawPath, SigV4.canonicalQuery(params, null), headers, names, signedHeaders,
                contentSha);
        byte[] key = signingKey(scope);
        check(key, amzDate, scope, canonical, signature);
        return new Verified(scope.accessKey, mode, mode == PayloadMode.SIGNED ? contentSha.toLowerCase(Locale.ROOT) : null,
                signature.toLowerCase(Locale.ROOT), amzDate, scope.scope(), key.clone());
    }

    private Verified verifyPresigned(String method, String rawPath, List<SigV4.Param> params, HttpHeaders headers) {
        S3Error malformed = S3Error.AUTHORIZATION_QUERY_PARAMETERS_ERROR;
        String algorithm = param(params, "X-Amz-Algorithm");
        String credential = param(params, "X-Amz-Credential");
        String amzDate = param(params, "X-Amz-Date");
        String expires = param(params, "X-Amz-Expires");
        String signedHeaders = param(params, "X-Amz-SignedHeaders");
        String signature = param(params, "X-Amz-Signature");
        if (algorithm == null || credential == null || amzDate == null || expires == null || signedHeaders == null
                || signature == null) {
            throw malformed.exception("Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, "
                    + "X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.");
        }
        if (!algorithm.equals(SigV4.ALGORITHM)) {
            throw malformed.exception("X-Amz-Algorithm only supports \"" + SigV4.ALGORITHM + "\"");
        }
        long expiresSeconds;
        try {
            expiresSeconds = Long.parseLong(expires);
        } catch (NumberFormatException e) {
            throw malformed.exception("X-Amz-Expires should be a number");
        }
        if (expiresSeconds < 1) {
            throw malformed.exception("X-Amz-Expires must be non-negative");
        }
        if (expiresSeconds > MAX_EXPIRES_SECONDS) {
            throw malformed.exception("X-Amz-Expires must be less than a week (in seconds) that is 604800");
        }
        Scope scope = scope(credential, malformed, "Error parsing the X-Amz-Credential parameter");
        Instant time = parseAmzDate(amzDate, malformed, "X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"");
        if (!amzDate.startsWith(scope.date)) {
            throw malformed.exception("Invalid credential date \"" + scope.date + "\". This date is not the same as X-Amz-Date: \""
                    + amzDate.substring(0, 8) + "\".");
        }
        Instant now = clock.instant();
        if (now.isBefore(time.minus(MAX_SKEW))) {
            throw S3Error.ACCESS_DENIED.exception("Request is not valid yet");
        }
        if (now.isAfter(time.plusSeconds(expiresSeconds))) {
            throw S3Error.ACCESS_DENIED.exception("Request has expired");
        }
        String contentSha = param(params, "X-Amz-Content-Sha256");
        if (contentSha == null) {
            contentSha = "UNSIGNED-PAYLOAD";
        }
        PayloadMode mode = payloadMode(contentSha);
        if (mode.chunked()) {
            throw malformed.exception("A presigned URL cannot carry an aws-chunked payload");
        }
        String[] names = signedHeaderNames(signedHeaders, malformed);
        if (!SIGNATURE.matcher(signature).matches()) {
            throw S3Error.SIGNATURE_DOES_NOT_MATCH.exception(S3Error.SIGNATURE_DOES_NOT_MATCH.message());
        }
        String canonical = canonicalRequest(method, rawPath, SigV4.canonicalQuery(params, "X-Amz-Signature"), headers, names,
                signedHeaders, contentSha);
        byte[] key = signingKey(scope);
        check(key, amzDate, scope, canonical, signature);
        return new Verified(scope.accessKey, mode, mode == PayloadMode.SIGNED ? contentSha.toLowerCase(Locale.ROOT) : null,
                signature.toLowerCase(Locale.ROOT), amzDate, scope.scope(), key.clone());
    }

    private static String param(List<SigV4.Param> params, String name) {
        for (SigV4.Param p : params) {
            if (p.name().equals(name)) {
                return p.value();
            }
        }
        return null;
    }

    /** The payload mode an {@code x-amz-content-sha256} value names; S3Exception InvalidArgument when none. */
    public static PayloadMode payloadMode(String contentSha256) {
        return switch (contentSha256) {
            case "UNSIGNED-PAYLOAD" -> PayloadMode.UNSIGNED;
            case "STREAMING-AWS4-HMAC-SHA256-PAYLOAD" -> PayloadMode.STREAMING_SIGNED;
            case "STREAMING-UNSIGNED-PAYLOAD-TRAILER" -> PayloadMode.STREAMING_UNSIGNED_TRAILER;
            case "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER" -> PayloadMode.STREAMING_SIGNED_TRAILER;
            default -> {
                if (HEX_SHA256.matcher(contentSha256).matches()) {
                    yield PayloadMode.SIGNED;
                }
                throw S3Error.INVALID_ARGUMENT.exception("x-amz-content-sha256 must be UNSIGNED-PAYLOAD, "
                        + "STREAMING-UNSIGNED-PAYLOAD-TRAILER, STREAMING-AWS4-HMAC-SHA256-PAYLOAD, "
                        + "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER or a valid sha256 value.");
            }
        };
    }

    private record Scope(String accessKey, String date, String region) {
        String scope() {
            return date + "/" + region + "/s3/aws4_request";
        }
    }

    private Scope scope(String credential, S3Error malformed, String what) {
        // accessKey/yyyyMMdd/region/s3/aws4_request; split from the end (the key is the rest)
        String[] p = new String[5];
        int end = credential.length();
        for (int i = 4; i > 0; i--) {
            int slash = credential.lastIndexOf('/', end - 1);
            if (slash < 0) {
                throw malformed.exception(what + ": the Credential must be accessKey/date/region/s3/aws4_request.");
            }
            p[i] = credential.substring(slash + 1, end);
            end = slash;
        }
        p[0] = credential.substring(0, end);
        if (p[0].isEmpty()) {
            throw malformed.exception(what + ": the Credential has no access key.");
        }
        if (!users.containsKey(p[0])) {
            throw S3Error.INVALID_ACCESS_KEY_ID.exception(S3Error.INVALID_ACCESS_KEY_ID.message());
        }
        if (!p[1].matches("[0-9]{8}")) {
            throw malformed.exception(what + ": incorrect date format \"" + p[1] + "\". This date must be in yyyyMMdd format.");
        }
        if (!p[2].equals(region)) {
            throw S3Error.AUTHORIZATION_HEADER_MALFORMED.exception("The authorization header is malformed; the region '" + p[2]
                    + "' is wrong; expecting '" + region + "'");
        }
        if (!p[3].equals("s3")) {
            throw malformed.exception(what + ": incorrect service \"" + p[3] + "\". This endpoint belongs to \"s3\".");
        }
        if (!p[4].equals("aws4_request")) {
            throw malformed.exception(what + ": incorrect terminal \"" + p[4] + "\". This endpoint uses \"aws4_request\".");
        }
        return new Scope(p[0], p[1], p[2]);
    }

    private static Instant parseAmzDate(String amzDate, S3Error error, String message) {
        try {
            return LocalDateTime.parse(amzDate, AMZ_DATE).toInstant(ZoneOffset.UTC);
        } catch (DateTimeParseException e) {
            throw error.exception(message);
        }
    }

    private static String[] signedHeaderNames(String signedHeaders, S3Error malformed) {
        if (signedHeaders.isEmpty()) {
            throw malformed.exception("SignedHeaders is empty");
        }
        String[] names = signedHeaders.split(";", -1);
        boolean host = false;
        for (String n : names) {
            if (n.isEmpty() || !n.equals(n.toLowerCase(Locale.ROOT))) {
                throw malformed.exception("SignedHeaders must be lower-case header names separated by ';'");
            }
            host |= n.equals("host");
        }
        if (!host) {
            throw malformed.exception("SignedHeaders must include the host header");
        }
        return names;
    }

    private static String canonicalRequest(String method, String rawPath, String canonicalQuery, HttpHeaders headers,
                                           String[] names, String signedHeaders, String payloadHash) {
        StringBuilder sb = new StringBuilder(256);
        sb.append(method).append('\n');
        sb.append(rawPath == null || rawPath.isEmpty() ? "/" : rawPath).append('\n');
        sb.append(canonicalQuery).append('\n');
        for (String name : names) {
            sb.append(name).append(':');
            List<String> values = headers.getAll(name);
            for (int i = 0; i < values.size(); i++) {
                if (i > 0) {
                    sb.append(',');
                }
                SigV4.appendCanonicalValue(sb, values.get(i));
            }
            sb.append('\n');
        }
        sb.append('\n').append(signedHeaders).append('\n').append(payloadHash);
        return sb.toString();
    }

    /** The canonical request's string to sign. */
    static String stringToSign(String amzDate, String scope, String canonicalRequest) {
        return SigV4.ALGORITHM + "\n" + amzDate + "\n" + scope + "\n" + SigV4.sha256Hex(canonicalRequest);
    }

    private void check(byte[] key, String amzDate, Scope scope, String canonical, String signature) {
        String expected = SigV4.sign(key, stringToSign(amzDate, scope.scope(), canonical));
        if (!SigV4.sameSignature(expected, signature)) {
            throw S3Error.SIGNATURE_DOES_NOT_MATCH.exception(S3Error.SIGNATURE_DOES_NOT_MATCH.message());
        }
    }

    private byte[] signingKey(Scope scope) {
        String cacheKey = scope.accessKey + '\n' + scope.date + '\n' + scope.region;
        byte[] key = keys.get(cacheKey);
        if (key == null) {
            if (keys.size() >= MAX_KEYS) {
                keys.clear();
            }
            key = SigV4.signingKey(users.get(scope.accessKey), scope.date, scope.region, "s3");
            keys.put(cacheKey, key);
        }
        return key;
    }
}
