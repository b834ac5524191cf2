package io.hayloft.s3;

import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.s3.auth.Verified;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.util.Map;

/**
 * Building the gateway's answers: XML bodies, empty answers, and the headers an object carries
 * (ETag, checksums, Content-Type, user metadata ...). Stateless; thread-safe.
 */
public final class Answers {
    /** The stored headers S3 returns as they were given at upload. */
    static final String[] STORED_HEADERS = {"Content-Encoding", "Content-Disposition", "Content-Language", "Cache-Control",
            "Expires"};

    private Answers() {
    }

    /** One request being served: the gateway, the parsed request, who sent it, and its decoded body (aggregated requests; empty otherwise). */
    public record Call(Gateway g, S3Request req, Verified who, byte[] body) {
    }

    public static FullHttpResponse xml(HttpResponseStatus status, byte[] body) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(body));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, Xml.CONTENT_TYPE);
        r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        return r;
    }

    /** An answer with {@code body} (owned by the answer from here on). */
    public static FullHttpResponse bytes(HttpResponseStatus status, byte[] body, String contentType) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(body));
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
        return r;
    }

    public static FullHttpResponse xml(Xml.Writer w) {
        return xml(HttpResponseStatus.OK, w.bytes());
    }

    public static FullHttpResponse empty(HttpResponseStatus status) {
        FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, Unpooled.EMPTY_BUFFER);
        r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
        return r;
    }

    /** {@code "etag"}: S3 quotes ETags in headers and XML. */
    public static String quote(String etag) {
        return "\"" + etag + "\"";
    }

    /** The checksum headers of an object or part: {@code x-amz-checksum-crc32: ...}, and the type when given. */
    static void checksumHeaders(FullHttpResponse r, Map<String, String> checksums, String type) {
        checksums.forEach((alg, value) -> r.headers().set("x-amz-checksum-" + alg.toLowerCase(java.util.Locale.ROOT), value));
        if (type != null && !checksums.isEmpty()) {
            r.headers().set("x-amz-checksum-type", type);
        }
    }

    /** The headers GET and HEAD answer for {@code o}: ETag, Last-Modified, type, stored headers, metadata, parts count. */
    static void objectHeaders(FullHttpResponse r, ObjectRecord o) {
        r.headers().set(HttpHeaderNames.ETAG, quote(o.etag()));
        r.headers().set(HttpHeaderNames.LAST_MODIFIED, Conditions.httpDate(o.modified()));
        r.headers().set(HttpHeaderNames.ACCEPT_RANGES, "bytes");
        r.headers().set(HttpHeaderNames.CONTENT_TYPE, o.contentType() == null ? "binary/octet-stream" : o.contentType());
        for (String h : STORED_HEADERS) {
            String v = o.headers().get(h);
            if (v != null) {
                r.headers().set(h, v);
            }
        }
        o.metadata().forEach((k, v) -> r.headers().set("x-amz-meta-" + k, v));
        if (!o.partSizes().isEmpty()) {
            r.headers().set("x-amz-mp-parts-count", o.partSizes().size());
        }
    }
}
