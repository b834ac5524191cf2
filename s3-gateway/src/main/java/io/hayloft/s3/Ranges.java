package io.hayloft.s3;

/**
 * The {@code Range} header of GetObject (one range, as S3 serves: {@code bytes=a-b}, {@code bytes=a-},
 * {@code bytes=-n}) and UploadPartCopy's {@code x-amz-copy-source-range} ({@code bytes=a-b} only).
 * Stateless; thread-safe.
 */
public final class Ranges {
    private Ranges() {
    }

    /** The bytes {@code [first, last]} (inclusive) of an object of {@code size} bytes. */
    public record Range(long first, long last, long size) {
        public long length() {
            return last - first + 1;
        }

        /** {@code bytes first-last/size}, the Content-Range of a 206. */
        public String contentRange() {
            return "bytes " + first + "-" + last + "/" + size;
        }
    }

    /**
     * The range {@code header} asks of an object of {@code size} bytes: null when there is no header or
     * it is not one well-formed byte range (S3 then serves the whole object, as HTTP says); S3Exception
     * InvalidRange (416) when it is well-formed but not satisfiable (it starts at or past the end, or
     * asks the last 0 bytes, or the object is empty).
     */
    public static Range parse(String header, long size) {
        if (header == null) {
            return null;
        }
        String h = header.trim();
        if (!h.regionMatches(true, 0, "bytes=", 0, 6)) {
            return null;
        }
        String spec = h.substring(6).trim();
        if (spec.indexOf(',') >= 0) {
            return null; // several ranges: S3 answers the whole object
        }
        int dash = spec.indexOf('-');
        if (dash < 0) {
            return null;
        }
        String a = spec.substring(0, dash).trim();
        String b = spec.substring(dash + 1).trim();
        if (a.isEmpty()) {
            long n = number(b);
            if (n < 0) {
                return null;
            }
            if (n == 0 || size == 0) {
                throw unsatisfiable(size);
            }
            return new Range(Math.max(0, size - n), size - 1, size);
        }
        long first = number(a);
        long last = b.isEmpty() ? Long.MAX_VALUE : number(b);
        if (first < 0 || last < 0 || last < first) {
            return null;
        }
        if (first >= size) {
            throw unsatisfiable(size);
        }
        return new Range(first, Math.min(last, size - 1), size);
    }

    /**
     * UploadPartCopy's {@code x-amz-copy-source-range: bytes=a-b} over a source of {@code size} bytes:
     * InvalidArgument when malformed, InvalidRange when outside the source.
     */
    public static Range copyRange(String header, long size) {
        String h = header.trim();
        int dash = h.indexOf('-');
        if (!h.startsWith("bytes=") || dash < 0) {
            throw S3Error.INVALID_ARGUMENT.exception("The x-amz-copy-source-range value must be of the form bytes=first-last");
        }
        long first = number(h.substring(6, dash));
        long last = number(h.substring(dash + 1));
        if (first < 0 || last < 0 || last < first) {
            throw S3Error.INVALID_ARGUMENT.exception("The x-amz-copy-source-range value must be of the form bytes=first-last");
        }
        if (last >= size) {
            throw S3Error.INVALID_RANGE.exception("Range specified is not valid for source object of size: " + size);
        }
        return new Range(first, last, size);
    }

    private static S3Exception unsatisfiable(long size) {
        return S3Error.INVALID_RANGE.exception("The requested range is not satisfiable (object size " + size + ")");
    }

    /** A decimal number of at most 18 digits, or -1. */
    private static long number(String s) {
        if (s.isEmpty() || s.length() > 18) {
            return -1;
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return -1;
            }
        }
        return Long.parseLong(s);
    }
}
