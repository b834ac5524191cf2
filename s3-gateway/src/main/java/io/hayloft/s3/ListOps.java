package io.hayloft.s3;

import io.hayloft.format.s3.Listing;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.s3.Answers.Call;
import io.hayloft.s3.checksum.ChecksumAlgorithm;
import io.netty.handler.codec.http.FullHttpResponse;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * ListObjectsV2 and ListObjects (v1): prefix, delimiter, start-after / marker, continuation token
 * (opaque to clients: base64url of the key the next page starts after), max-keys 0 to 1000,
 * fetch-owner, and {@code encoding-type=url} (Key, Prefix, Delimiter, StartAfter, Marker, NextMarker
 * and CommonPrefixes URL-encoded in the answer). Stateless; thread-safe.
 */
final class ListOps {
    static final int MAX_KEYS = 1000;

    private ListOps() {
    }

    static FullHttpResponse listV2(Call c) {
        S3Request r = c.req();
        if (!"2".equals(r.param("list-type"))) {
            throw S3Error.INVALID_ARGUMENT.exception("list-type must be 2");
        }
        boolean url = encodeUrl(r);
        String prefix = emptyToNull(r.param("prefix"));
        String delimiter = emptyToNull(r.param("delimiter"));
        String startAfter = emptyToNull(r.param("start-after"));
        String token = emptyToNull(r.param("continuation-token"));
        int max = maxKeys(r.param("max-keys"));
        String after = token != null ? decodeToken(token) : startAfter;
        Listing l = page(c, prefix, delimiter, after, max);
        boolean owner = "true".equalsIgnoreCase(r.param("fetch-owner"));
        Xml.Writer w = new Xml.Writer("ListBucketResult").text("Name", r.bucket())
                .text("Prefix", enc(prefix == null ? "" : prefix, url)).text("Delimiter", enc(delimiter, url))
                .text("MaxKeys", max).text("KeyCount", l.objects().size() + l.commonPrefixes().size())
                .text("IsTruncated", l.truncated()).text("ContinuationToken", token);
        if (l.truncated() && l.next() != null) {
            w.text("NextContinuationToken", encodeToken(l.next()));
        }
        w.text("StartAfter", enc(startAfter, url)).text("EncodingType", url ? "url" : null);
        contents(w, c.g(), l, url, owner);
        return Answers.xml(w);
    }

    static FullHttpResponse listV1(Call c) {
        S3Request r = c.req();
        boolean url = encodeUrl(r);
        String prefix = emptyToNull(r.param("prefix"));
        String delimiter = emptyToNull(r.param("delimiter"));
        String marker = emptyToNull(r.param("marker"));
        int max = maxKeys(r.param("max-keys"));
        Listing l = page(c, prefix, delimiter, marker, max);
        Xml.Writer w = new Xml.Writer("ListBucketResult").text("Name", r.bucket())
                .text("Prefix", enc(prefix == null ? "" : prefix, url)).text("Marker", enc(marker == null ? "" : marker, url))
                .text("MaxKeys", max).text("Delimiter", enc(delimiter, url)).text("IsTruncated", l.truncated());
        if (l.truncated() && delimiter != null && l.next() != null) {
            w.text("NextMarker", enc(l.next(), url));
        }
        w.text("EncodingType", url ? "url" : null);
        contents(w, c.g(), l, url, true);
        return Answers.xml(w);
    }

    /** One page from the namespace (max-keys 0: none, but the bucket must exist). */
    private static Listing page(Call c, String prefix, String delimiter, String after, int max) {
        String bucket = c.req().bucket();
        if (max == 0) {
            Gateway.await(c.g().namespace().bucket(bucket));
            return new Listing(null, null, false, null);
        }
        return Gateway.await(c.g().namespace().list(bucket, prefix, delimiter, after, max));
    }

    private static void contents(Xml.Writer w, Gateway g, Listing l, boolean url, boolean owner) {
        for (ObjectRecord o : l.objects()) {
            w.start("Contents").text("Key", enc(o.key(), url)).text("LastModified", Xml.time(o.modified()))
                    .text("ETag", Answers.quote(o.etag())).text("Size", o.size()).text("StorageClass", "STANDARD");
            for (ChecksumAlgorithm a : ChecksumAlgorithm.values()) {
                if (o.checksums().containsKey(a.name())) {
                    w.text("ChecksumAlgorithm", a.name());
                }
            }
            if (o.checksumType() != null && !o.checksums().isEmpty()) {
                w.text("ChecksumType", o.checksumType());
            }
            if (owner) {
                BucketOps.owner(w, g);
            }
            w.end();
        }
        for (String p : l.commonPrefixes()) {
            w.start("CommonPrefixes").text("Prefix", enc(p, url)).end();
        }
    }

    /** {@code encoding-type}: absent, or "url"; anything else is InvalidArgument. */
    static boolean encodeUrl(S3Request r) {
        String e = r.param("encoding-type");
        if (e == null || e.isEmpty()) {
            return false;
        }
        if (!e.equalsIgnoreCase("url")) {
            throw S3Error.INVALID_ARGUMENT.exception("Invalid Encoding Method specified in Request");
        }
        return true;
    }

    /** max-keys: 0 to 1000 (more is 1000, as S3), default 1000; not a number or negative is InvalidArgument. */
    static int maxKeys(String v) {
        if (v == null || v.isEmpty()) {
            return MAX_KEYS;
        }
        try {
            long n = Long.parseLong(v.trim());
            if (n < 0) {
                throw new NumberFormatException();
            }
            return (int) Math.min(n, MAX_KEYS);
        } catch (NumberFormatException e) {
            throw S3Error.INVALID_ARGUMENT.exception("Provided max-keys not an integer or within integer range");
        }
    }

    /** A continuation token for the page after {@code key}. */
    static String encodeToken(String key) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(key.getBytes(StandardCharsets.UTF_8));
    }

    /** The key a continuation token names; InvalidArgument when it is not one of ours. */
    static String decodeToken(String token) {
        try {
            String key = new String(Base64.getUrlDecoder().decode(token.trim()), StandardCharsets.UTF_8);
            if (key.isEmpty() || key.contains("\uFFFD")) {
                throw new IllegalArgumentException();
            }
            return key;
        } catch (IllegalArgumentException e) {
            throw S3Error.INVALID_ARGUMENT.exception("The continuation token provided is incorrect");
        }
    }

    /** {@code s} URL-encoded when {@code url} (space as '+', as S3), null stays null. */
    static String enc(String s, boolean url) {
        if (s == null || !url) {
            return s;
        }
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }
}
