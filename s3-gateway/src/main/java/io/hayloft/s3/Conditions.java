package io.hayloft.s3;

import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Locale;

/**
 * Conditional headers, with S3's precedence (RFC 7232's): {@code If-Match} decides over
 * {@code If-Unmodified-Since} (412 when false), then {@code If-None-Match} over
 * {@code If-Modified-Since} (304 for GET and HEAD when false). A date that does not parse is
 * ignored, as S3 does; times compare to the second (Last-Modified carries no more). The same rules
 * serve CopyObject's {@code x-amz-copy-source-if-*}, where every false condition is 412.
 * Stateless; thread-safe.
 */
public final class Conditions {
    private static final DateTimeFormatter RFC_1123 = DateTimeFormatter.RFC_1123_DATE_TIME.withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter RFC_850 = DateTimeFormatter.ofPattern("EEEE, dd-MMM-yy HH:mm:ss zzz", Locale.US);
    private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US)
            .withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter ASCTIME = DateTimeFormatter.ofPattern("EEE MMM d HH:mm:ss yyyy", Locale.US)
            .withZone(ZoneOffset.UTC);

    /** What the conditions say. */
    public enum Outcome { PROCEED, NOT_MODIFIED, PRECONDITION_FAILED }

    private Conditions() {
    }

    /**
     * Evaluates the four conditions (each null when absent) against an object with {@code etag}
     * (without quotes) last modified at {@code modifiedMillis}.
     */
    public static Outcome evaluate(String ifMatch, String ifNoneMatch, String ifModifiedSince, String ifUnmodifiedSince,
                                   String etag, long modifiedMillis) {
        long modified = modifiedMillis / 1000;
        if (ifMatch != null) {
            if (!etagMatches(ifMatch, etag)) {
                return Outcome.PRECONDITION_FAILED;
            }
        } else if (ifUnmodifiedSince != null) {
            long t = parseDate(ifUnmodifiedSince);
            if (t >= 0 && modified > t) {
                return Outcome.PRECONDITION_FAILED;
            }
        }
        if (ifNoneMatch != null) {
            if (etagMatches(ifNoneMatch, etag)) {
                return Outcome.NOT_MODIFIED;
            }
        } else if (ifModifiedSince != null) {
            long t = parseDate(ifModifiedSince);
            if (t >= 0 && modified <= t) {
                return Outcome.NOT_MODIFIED;
            }
        }
        return Outcome.PROCEED;
    }

    /** Whether a list of entity tags ({@code "a", W/"b"}, or {@code *}) names {@code etag}. */
    public static boolean etagMatches(String header, String etag) {
        for (String part : header.split(",")) {
            String t = part.trim();
            if (t.equals("*")) {
                return true;
            }
            if (t.startsWith("W/")) {
                t = t.substring(2);
            }
            if (unquote(t).equals(etag)) {
                return true;
            }
        }
        return false;
    }

    /** {@code "abc"} to {@code abc}; anything else as it is. */
    public static String unquote(String s) {
        String t = s.trim();
        if (t.length() >= 2 && t.startsWith("\"") && t.endsWith("\"")) {
            return t.substring(1, t.length() - 1);
        }
        return t;
    }

    /** An HTTP date (RFC 1123, RFC 850 or asctime) as epoch seconds, or -1 when it does not parse. */
    public static long parseDate(String s) {
        String t = s.trim();
        try {
            return ZonedDateTime.parse(t, RFC_1123).toEpochSecond();
        } catch (DateTimeParseException e) {
            // try the others
        }
        try {
            return ZonedDateTime.parse(t, RFC_850).toEpochSecond();
        } catch (DateTimeParseException e) {
            // try the last
        }
        try {
            return ZonedDateTime.parse(t, ASCTIME).toEpochSecond();
        } catch (DateTimeParseException e) {
            return -1;
        }
    }

    /** Last-Modified's format: {@code Wed, 12 Oct 2009 17:50:00 GMT}. */
    public static String httpDate(long epochMillis) {
        return HTTP_DATE.format(java.time.Instant.ofEpochMilli(epochMillis));
    }
}
