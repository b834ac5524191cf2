package io.hayloft.directory;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import io.hayloft.format.s3.Chunk;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.format.s3.Part;
import io.hayloft.format.s3.Upload;
import io.hayloft.serverkit.http.HttpResponses;
import io.hayloft.serverkit.http.RouteParams;
import io.hayloft.serverkit.http.Router;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The routes of the S3 namespace ({@code /v1/s3/...}, docs/directory-api.md "S3 namespace") on
 * {@link Namespace}: JSON bodies of the {@code io.hayloft.format.s3} records, errors as the directory's
 * JSON errors. Every route needs the admin token when the directory has one; on a replica of a Raft
 * group only the leader answers ({@link DirectoryHttp#handle}). Stateless and thread-safe.
 */
final class NamespaceHttp {

    /** Most (and default) entries of one listing page. */
    static final int DEFAULT_MAX = 1000;

    private NamespaceHttp() {
    }

    /** Body of {@code PUT /v1/s3/buckets/{bucket}}. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record CreateBucket(String region) {
    }

    /** Body of {@code POST /v1/s3/objects/{bucket}/put}. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record PutObject(ObjectRecord object, String pending, String ifMatch, boolean ifNoneMatch) {
    }

    /** Body of {@code POST /v1/s3/objects/{bucket}/delete}. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record DeleteObject(String key, String ifMatch) {
    }

    /** Body of {@code POST /v1/s3/uploads/{bucket}/{uploadId}/parts}. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record PutPart(String key, Part part, String pending) {
    }

    /** Body of {@code POST /v1/s3/uploads/{bucket}/{uploadId}/complete}. */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record Complete(ObjectRecord object, List<Part> parts, String ifMatch, boolean ifNoneMatch) {
    }

    /** Body of {@code POST /v1/s3/pending}, and its answer (the id only). */
    @JsonIgnoreProperties(ignoreUnknown = true)
    record Pend(String id, List<Chunk> chunks) {
    }

    /** Adds the namespace routes to {@code b}; {@code admin} throws UNAUTHORIZED for a request without the admin token. */
    static Router.Builder routes(Router.Builder b, Directory directory, Consumer<FullHttpRequest> admin) {
        Namespace ns = directory.namespace();
        return b
                .route("s3.buckets", "GET /v1/s3/buckets", (req, p) -> {
                    admin.accept(req);
                    return ok(ns.buckets());
                })
                .route("s3.bucket", "GET PUT DELETE /v1/s3/buckets/{bucket}", (req, p) -> {
                    admin.accept(req);
                    String bucket = p.string("bucket");
                    if (req.method().equals(HttpMethod.GET)) {
                        return ok(ns.bucket(bucket));
                    }
                    if (req.method().equals(HttpMethod.PUT)) {
                        String region = req.content().isReadable() ? DirectoryHttp.body(req, CreateBucket.class).region() : null;
                        return ok(ns.createBucket(bucket, region));
                    }
                    ns.deleteBucket(bucket);
                    return ok(Map.of());
                })
                .route("s3.objects", "GET /v1/s3/objects/{bucket}", (req, p) -> {
                    admin.accept(req);
                    String bucket = p.string("bucket");
                    String key = p.query("key");
                    if (key != null) {
                        return ok(ns.object(bucket, key));
                    }
                    return ok(ns.list(bucket, p.query("prefix"), p.query("delimiter"), p.query("after"), intQuery(p, "max", DEFAULT_MAX)));
                })
                .route("s3.object.put", "POST /v1/s3/objects/{bucket}/put", (req, p) -> {
                    admin.accept(req);
                    PutObject put = DirectoryHttp.body(req, PutObject.class);
                    if (put.object() == null) {
                        throw DirectoryHttp.badRequest("a put needs {\"object\": ObjectRecord, \"pending\", \"ifMatch\", \"ifNoneMatch\"}");
                    }
                    sameBucket(p, put.object().bucket());
                    return ok(ns.putObject(put.object(), put.pending(), put.ifMatch(), put.ifNoneMatch()));
                })
                .route("s3.object.delete", "POST /v1/s3/objects/{bucket}/delete", (req, p) -> {
                    admin.accept(req);
                    DeleteObject d = DirectoryHttp.body(req, DeleteObject.class);
                    return ok(ns.deleteObject(p.string("bucket"), d.key(), d.ifMatch()));
                })
                .route("s3.uploads.before", "GET /v1/s3/uploads", (req, p) -> {
                    admin.accept(req);
                    return ok(ns.uploadsBefore(longQuery(p, "before"), intQuery(p, "max", DEFAULT_MAX)));
                })
                .route("s3.uploads", "GET POST /v1/s3/uploads/{bucket}", (req, p) -> {
                    admin.accept(req);
                    String bucket = p.string("bucket");
                    if (req.method().equals(HttpMethod.POST)) {
                        Upload u = DirectoryHttp.body(req, Upload.class);
                        sameBucket(p, u.bucket());
                        return ok(ns.createUpload(u));
                    }
                    return ok(ns.uploads(bucket, p.query("prefix"), p.query("delimiter"), p.query("keyMarker"),
                            p.query("uploadIdMarker"), intQuery(p, "max", DEFAULT_MAX)));
                })
                .route("s3.upload", "GET DELETE /v1/s3/uploads/{bucket}/{uploadId}", (req, p) -> {
                    admin.accept(req);
                    String bucket = p.string("bucket");
                    String id = p.string("uploadId");
                    String key = requiredQuery(p, "key");
                    if (req.method().equals(HttpMethod.GET)) {
                        return ok(ns.upload(bucket, key, id));
                    }
                    return ok(ns.abort(bucket, key, id));
                })
                .route("s3.parts", "GET POST /v1/s3/uploads/{bucket}/{uploadId}/parts", (req, p) -> {
                    admin.accept(req);
                    String bucket = p.string("bucket");
                    String id = p.string("uploadId");
                    if (req.method().equals(HttpMethod.POST)) {
                        PutPart put = DirectoryHttp.body(req, PutPart.class);
                        if (put.part() == null) {
                            throw DirectoryHttp.badRequest("a part needs {\"key\", \"part\": Part, \"pending\"}");
                        }
                        return ok(ns.putPart(bucket, put.key(), id, put.part(), put.pending()));
                    }
                    return ok(ns.parts(bucket, requiredQuery(p, "key"), id, intQuery(p, "after", 0), intQuery(p, "max", DEFAULT_MAX)));
                })
                .route("s3.complete", "POST /v1/s3/uploads/{bucket}/{uploadId}/complete", (req, p) -> {
                    admin.accept(req);
                    Complete c = DirectoryHttp.body(req, Complete.class);
                    if (c.object() == null) {
                        throw DirectoryHttp.badRequest("a completion needs {\"object\": ObjectRecord, \"parts\": [Part], ...}");
                    }
                    sameBucket(p, c.object().bucket());
                    return ok(ns.complete(p.string("uploadId"), c.object(), c.parts(), c.ifMatch(), c.ifNoneMatch()));
                })
                .route("s3.pending", "GET POST /v1/s3/pending", (req, p) -> {
                    admin.accept(req);
                    if (req.method().equals(HttpMethod.POST)) {
                        Pend pend = DirectoryHttp.body(req, Pend.class);
                        return ok(new Namespace.PendAnswer(ns.pend(pend.id(), pend.chunks())));
                    }
                    return ok(ns.pendings(p.query("after"), intQuery(p, "max", DEFAULT_MAX)));
                })
                .route("s3.pending.doom", "POST /v1/s3/pending/{id}/doom", (req, p) -> {
                    admin.accept(req);
                    ns.doom(p.string("id"));
                    return ok(Map.of());
                })
                .route("s3.pending.one", "GET DELETE /v1/s3/pending/{id}", (req, p) -> {
                    admin.accept(req);
                    if (req.method().equals(HttpMethod.GET)) {
                        return ok(ns.pending(p.string("id")));
                    }
                    ns.drop(p.string("id"));
                    return ok(Map.of());
                });
    }

    private static void sameBucket(RouteParams p, String bucket) {
        if (!p.string("bucket").equals(bucket)) {
            throw DirectoryHttp.badRequest("the body names bucket " + bucket + " but was sent to bucket " + p.string("bucket"));
        }
    }

    private static String requiredQuery(RouteParams p, String name) {
        String v = p.query(name);
        if (v == null) {
            throw DirectoryHttp.badRequest("query parameter '" + name + "' is required");
        }
        return v;
    }

    private static int intQuery(RouteParams p, String name, int dflt) {
        String v = p.query(name);
        if (v == null) {
            return dflt;
        }
        try {
            int x = Integer.parseInt(v);
            if (x < 0) {
                throw new NumberFormatException();
            }
            return x;
        } catch (NumberFormatException e) {
            throw DirectoryHttp.badRequest("query parameter '" + name + "' must be an integer >= 0, was '"
                    + (v.length() > 40 ? v.substring(0, 40) + "..." : v) + "'");
        }
    }

    private static long longQuery(RouteParams p, String name) {
        String v = requiredQuery(p, name);
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw DirectoryHttp.badRequest("query parameter '" + name + "' must be an integer, was '"
                    + (v.length() > 40 ? v.substring(0, 40) + "..." : v) + "'");
        }
    }

    private static FullHttpResponse ok(Object body) {
        return HttpResponses.json(HttpResponseStatus.OK, body);
    }
}
