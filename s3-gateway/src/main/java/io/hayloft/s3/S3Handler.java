package io.hayloft.s3;

import io.hayloft.s3.Answers.Call;
import io.hayloft.s3.auth.PayloadDecoder;
import io.hayloft.s3.auth.Verified;
import io.hayloft.serverkit.http.StreamedRequestHandler;
import io.hayloft.serverkit.metrics.PrometheusEndpoint;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.Set;

/**
 * The gateway's request handler: gives each request an id, answers the gateway's own endpoints
 * ({@code /_hayloft/health}, {@code /_hayloft/metrics}, unauthenticated), authenticates every other
 * request from its head (before any body is read or the namespace is asked), finds its operation in
 * one table ({@link #ROUTES}: method, what is addressed, the query's sub-resource, a header), and
 * runs it; the bodies of PutObject and UploadPart are streamed ({@link #streamsBody}), all others
 * aggregated. Every answer carries {@code x-amz-request-id}; every failure is S3's XML error. Each
 * request is timed under its operation's name. Thread-safe: stateless beyond its (thread-safe) parts.
 */
public final class S3Handler implements StreamedRequestHandler {
    /** An operation on an aggregated request. */
    @FunctionalInterface
    interface Op {
        FullHttpResponse handle(Call c) throws Exception;
    }

    /** An operation whose body is streamed: opens what receives it. */
    @FunctionalInterface
    interface StreamOp {
        StreamedRequestHandler.RequestBody open(Call c) throws Exception;
    }

    /** What a request addresses. */
    enum Level { SERVICE, BUCKET, OBJECT }

    /**
     * One row of the table: {@code method} on {@code level}, with query parameter {@code sub} (null:
     * none of {@link #SUBRESOURCES}) and header {@code header} (null: any), is operation {@code name}.
     */
    record Route(String name, String method, Level level, String sub, String header, Op op, StreamOp stream) {
        boolean matches(S3Request r, Level l) {
            if (!method.equals(r.method()) || level != l) {
                return false;
            }
            if (header != null && r.header(header) == null) {
                return false;
            }
            if (sub == null) {
                for (String s : r.query().keySet()) {
                    if (SUBRESOURCES.contains(s)) {
                        return false;
                    }
                }
                return true;
            }
            return r.has(sub);
        }
    }

    /** Query parameters that name a sub-resource (another operation than the plain one). */
    static final Set<String> SUBRESOURCES = Set.of("acl", "tagging", "versioning", "policy", "lifecycle", "cors", "website",
            "logging", "notification", "replication", "encryption", "object-lock", "retention", "legal-hold", "torrent",
            "restore", "select", "accelerate", "requestPayment", "analytics", "inventory", "metrics", "intelligent-tiering",
            "ownershipControls", "publicAccessBlock", "versions", "attributes", "policyStatus", "location", "uploads",
            "uploadId", "delete", "list-type", "session", "renameObject", "metadataTable");

    private static Route op(String name, String method, Level level, String sub, String header, Op op) {
        return new Route(name, method, level, sub, header, op, null);
    }

    /** The operations, most specific first. */
    static final List<Route> ROUTES = List.of(
            op("ListBuckets", "GET", Level.SERVICE, null, null, BucketOps::listBuckets),
            op("GetBucketLocation", "GET", Level.BUCKET, "location", null, BucketOps::location),
            op("GetBucketVersioning", "GET", Level.BUCKET, "versioning", null, BucketOps::versioning),
            op("GetBucketAcl", "GET", Level.BUCKET, "acl", null, BucketOps::acl),
            op("ListMultipartUploads", "GET", Level.BUCKET, "uploads", null, MultipartOps::listUploads),
            op("ListObjectsV2", "GET", Level.BUCKET, "list-type", null, ListOps::listV2),
            op("ListObjects", "GET", Level.BUCKET, null, null, ListOps::listV1),
            op("HeadBucket", "HEAD", Level.BUCKET, null, null, BucketOps::head),
            op("CreateBucket", "PUT", Level.BUCKET, null, null, BucketOps::create),
            op("DeleteBucket", "DELETE", Level.BUCKET, null, null, BucketOps::delete),
            op("DeleteObjects", "POST", Level.BUCKET, "delete", null, ObjectOps::deleteObjects),
            op("GetObjectAcl", "GET", Level.OBJECT, "acl", null, BucketOps::acl),
            op("ListParts", "GET", Level.OBJECT, "uploadId", null, MultipartOps::listParts),
            op("GetObject", "GET", Level.OBJECT, null, null, ObjectOps::get),
            op("HeadObject", "HEAD", Level.OBJECT, null, null, ObjectOps::head),
            op("UploadPartCopy", "PUT", Level.OBJECT, "uploadId", "x-amz-copy-source", MultipartOps::uploadPartCopy),
            new Route("UploadPart", "PUT", Level.OBJECT, "uploadId", null, null, MultipartOps::uploadPart),
            op("CopyObject", "PUT", Level.OBJECT, null, "x-amz-copy-source", ObjectOps::copy),
            new Route("PutObject", "PUT", Level.OBJECT, null, null, null, PutOps::putObject),
            op("DeleteObject", "DELETE", Level.OBJECT, null, null, ObjectOps::delete),
            op("AbortMultipartUpload", "DELETE", Level.OBJECT, "uploadId", null, MultipartOps::abort),
            op("CreateMultipartUpload", "POST", Level.OBJECT, "uploads", null, MultipartOps::create),
            op("CompleteMultipartUpload", "POST", Level.OBJECT, "uploadId", null, MultipartOps::complete));

    private final Gateway g;
    private final Authenticator auth;
    private final PrometheusEndpoint prometheus;

    public S3Handler(Gateway g, Authenticator auth, PrometheusEndpoint prometheus) {
        this.g = g;
        this.auth = auth;
        this.prometheus = prometheus;
    }

    /** The route of {@code r}, or null. */
    static Route route(S3Request r) {
        Level l = r.key() != null ? Level.OBJECT : r.bucket() != null ? Level.BUCKET : Level.SERVICE;
        for (Route route : ROUTES) {
            if (route.matches(r, l)) {
                return route;
            }
        }
        return null;
    }

    /** The sub-resources some route serves: another method or level on one of them is a wrong request, not a missing feature. */
    private static final Set<String> SERVED = ROUTES.stream().map(Route::sub).filter(java.util.Objects::nonNull)
            .collect(java.util.stream.Collectors.toUnmodifiableSet());

    /** Served sub-resources whose PUT is a real S3 operation the gateway does not have (PutBucketAcl, PutBucketVersioning). */
    private static final Set<String> CONFIG = Set.of("acl", "versioning");

    /**
     * The route of {@code r}. NotImplemented (501, S3's answer) for a sub-resource of S3 the gateway
     * serves for no method (tagging, policies...) or a PUT of one it only reads (acl, versioning); MethodNotAllowed (405) for any
     * other request no route takes, such as a served sub-resource with the wrong method or on the wrong level.
     */
    static Route require(S3Request r) {
        Route route = route(r);
        if (route != null) {
            return route;
        }
        for (String s : r.query().keySet()) {
            if (SUBRESOURCES.contains(s) && (!SERVED.contains(s) || "PUT".equals(r.method()) && CONFIG.contains(s))) {
                throw S3Error.NOT_IMPLEMENTED.exception("The gateway does not implement ?" + s);
            }
        }
        throw S3Error.METHOD_NOT_ALLOWED.exception("The specified method is not allowed against this resource");
    }

    @Override
    public boolean streamsBody(HttpRequest head) {
        if (!"PUT".equals(head.method().name()) || head.uri().startsWith(S3Request.ADMIN_PREFIX)) {
            return false;
        }
        try {
            Route r = route(S3Request.parse(head, g.config().domain, ""));
            return r != null && r.stream() != null;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** Parses a request; the request id is set in its head. */
    private S3Request parse(HttpRequest head, String id) {
        head.headers().set(S3Request.REQUEST_ID_HEADER, id);
        return S3Request.parse(head, g.config().domain, id);
    }

    /** The operation's name for the metrics, known before the request is authenticated ("Unknown" when none). */
    private static String name(S3Request r) {
        Route route = route(r);
        return route == null ? "Unknown" : route.name();
    }

    /** Authenticates a parsed request and checks its names. */
    private Call begin(S3Request r, byte[] body) {
        if (r.header("Authorization") == null && !r.has("X-Amz-Signature")) {
            if (r.has("Signature") && r.has("AWSAccessKeyId")) {
                // aws CLI v1's "s3 presign" signs with version 2 unless configured otherwise (docs/s3.md)
                throw S3Error.ACCESS_DENIED.exception("Signature Version 2 is not supported: presign with AWS Signature Version 4"
                        + " (aws CLI v1: aws configure set default.s3.signature_version s3v4)");
            }
            throw S3Error.ACCESS_DENIED.exception("Anonymous access is not allowed: sign the request (AWS Signature Version 4)");
        }
        Verified who;
        try {
            who = auth.verify(r.method(), r.rawPath(), r.rawQuery(), r.headers());
        } catch (S3Exception e) {
            // The path as sent first; then as the client may have signed it (decoded, encoded again: "/%2F" is "//")
            String canonical = S3Request.canonicalPath(r.rawPath());
            if (e.error() != S3Error.SIGNATURE_DOES_NOT_MATCH || canonical == null || canonical.equals(r.rawPath())) {
                throw e;
            }
            who = auth.verify(r.method(), canonical, r.rawQuery(), r.headers());
        }
        if (r.bucket() != null) {
            S3Request.checkBucket(r.bucket());
        }
        if (r.key() != null) {
            S3Request.checkKey(r.key());
        }
        return new Call(g, r, who, body);
    }

    @Override
    public StreamedRequestHandler.RequestBody openBody(HttpRequest head) throws Exception {
        long start = System.nanoTime();
        String id = S3Errors.newRequestId();
        String name = "PutObject";
        try {
            S3Request r = parse(head, id);
            name = name(r);
            Call c = begin(r, new byte[0]);
            Route route = require(c.req());
            if (route.stream() == null) { // not expected: streamsBody chose it
                throw S3Error.INVALID_REQUEST.exception("unexpected streamed body");
            }
            return new Timed(route.stream().open(c), name, start, c.req());
        } catch (Exception | Error e) {
            g.metrics().request(name, S3Errors.classify(e, head.method() + " " + head.uri()).status(), System.nanoTime() - start);
            throw e;
        }
    }

    @Override
    public FullHttpResponse handle(FullHttpRequest request) {
        long start = System.nanoTime();
        String uri = request.uri();
        if (uri.startsWith(S3Request.ADMIN_PREFIX)) {
            return admin(request);
        }
        String id = S3Errors.newRequestId();
        String name = "Unknown";
        S3Request req = null;
        FullHttpResponse r;
        try {
            req = parse(request, id);
            name = name(req);
            Call c = begin(req, null);
            Route route = require(req);
            if (route.op() == null) {
                throw S3Error.INVALID_REQUEST.exception("unexpected aggregated body");
            }
            c = new Call(g, req, c.who(), decode(c.who(), request));
            r = route.op().handle(c);
        } catch (Throwable e) {
            if (req == null) {
                request.headers().set(S3Request.REQUEST_ID_HEADER, id);
                r = new S3Errors().failure(request, e);
            } else {
                r = S3Errors.response(e, req);
            }
        }
        S3Errors.stamp(r, id);
        g.metrics().request(name, r.status().code(), System.nanoTime() - start);
        return r;
    }

    /** The body of an aggregated request as the payload mode says (aws-chunked decoded; a signed body's hash checked). */
    private static byte[] decode(Verified who, FullHttpRequest request) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(request.content().readableBytes());
        String decodedLength = request.headers().get("x-amz-decoded-content-length");
        long n = -1;
        if (decodedLength != null) {
            try {
                n = Long.parseLong(decodedLength.trim());
            } catch (NumberFormatException e) {
                throw S3Error.INVALID_ARGUMENT.exception("x-amz-decoded-content-length is not a number");
            }
        }
        PayloadDecoder d = PayloadDecoder.of(who, n, b -> out.writeBytes(ByteBufUtil.getBytes(b)));
        ByteBuf content = request.content();
        if (content.isReadable()) {
            d.feed(content.duplicate());
        }
        HttpHeaders trailers = request.trailingHeaders();
        d.finish(trailers).forEach((name, value) -> {
            if (!request.headers().contains(name)) {
                request.headers().set(name, value); // an aws-chunked body's trailing checksum, for the operation
            }
        });
        return out.toByteArray();
    }

    /** {@code /_hayloft/health} and {@code /_hayloft/metrics}: no authentication, never a bucket (its name is not valid). */
    private FullHttpResponse admin(FullHttpRequest request) {
        String path = request.uri();
        int q = path.indexOf('?');
        path = q < 0 ? path : path.substring(0, q);
        String id = S3Errors.newRequestId();
        FullHttpResponse r;
        if (!"GET".equals(request.method().name()) && !"HEAD".equals(request.method().name())) {
            r = S3Errors.response(new S3Errors.Failure(405, S3Error.METHOD_NOT_ALLOWED.code(), "GET only"), path, id, false);
        } else if (path.equals(S3Request.ADMIN_PREFIX + "metrics")) {
            r = prometheus.response();
        } else if (path.equals(S3Request.ADMIN_PREFIX + "health")) {
            r = io.hayloft.serverkit.http.HttpResponses.json(HttpResponseStatus.OK, java.util.Map.of("status", "ok"));
        } else {
            r = S3Errors.response(new S3Errors.Failure(404, "NoSuchKey", "no such gateway endpoint"), path, id, false);
        }
        S3Errors.stamp(r, id);
        return r;
    }

    /** A streamed body that times its request under its operation and stamps its answer. */
    private final class Timed implements StreamedRequestHandler.RequestBody {
        private final StreamedRequestHandler.RequestBody body;
        private final String name;
        private final long start;
        private final S3Request req;
        private boolean recorded;

        Timed(StreamedRequestHandler.RequestBody body, String name, long start, S3Request req) {
            this.body = body;
            this.name = name;
            this.start = start;
            this.req = req;
        }

        @Override
        public void content(ByteBuf chunk) throws Exception {
            try {
                body.content(chunk);
            } catch (Exception | Error e) {
                record(S3Errors.classify(e, req.toString()).status());
                throw e;
            }
        }

        @Override
        public FullHttpResponse end(HttpHeaders trailers) throws Exception {
            try {
                FullHttpResponse r = body.end(trailers);
                S3Errors.stamp(r, req.requestId());
                record(r.status().code());
                return r;
            } catch (Exception | Error e) {
                record(S3Errors.classify(e, req.toString()).status());
                throw e;
            }
        }

        @Override
        public void abort() {
            body.abort();
            record(499); // the client went away (or the request failed: recorded already)
        }

        private void record(int status) {
            if (!recorded) {
                recorded = true;
                g.metrics().request(name, status, System.nanoTime() - start);
            }
        }
    }
}
