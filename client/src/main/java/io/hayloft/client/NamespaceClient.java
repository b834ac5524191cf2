package io.hayloft.client;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.core.type.TypeReference;
import io.hayloft.format.s3.Bucket;
import io.hayloft.format.s3.Chunk;
import io.hayloft.format.s3.Listing;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.format.s3.Part;
import io.hayloft.format.s3.Pending;
import io.hayloft.format.s3.Replaced;
import io.hayloft.format.s3.Upload;
import io.hayloft.format.s3.UploadListing;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The S3 namespace kept by the directory (docs/directory-api.md "S3 namespace"): buckets, objects,
 * multipart uploads and the pending records of needles no key refers to. Every call goes to the leader
 * and is linearizable (a change is committed through the directory's log; a read sees every change
 * committed before it). Errors complete the future with a {@link DirectoryException} whose
 * {@code errorName} is one of {@code io.hayloft.format.errors.DirectoryErrors}' namespace errors
 * ({@code NO_SUCH_BUCKET}, {@code PRECONDITION_FAILED}, ...). Thread-safe: share one instance.
 */
public final class NamespaceClient {
    private final DirectoryClient directory;

    public NamespaceClient(DirectoryClient directory) {
        this.directory = directory;
    }

    /** Conditions of a conditional write, checked against the object as the change is applied. */
    public record Condition(String ifMatch, boolean ifNoneMatch) {
        public static final Condition NONE = new Condition(null, false);
    }

    // --- buckets

    /** {@code PUT /v1/s3/buckets/{name}}: BUCKET_EXISTS when it exists. */
    public CompletableFuture<Bucket> createBucket(String name, String region) {
        return directory.adminCall("PUT", "/v1/s3/buckets/" + seg(name), new CreateBucket(region), BUCKET);
    }

    /** {@code GET /v1/s3/buckets/{name}}: NO_SUCH_BUCKET when absent. */
    public CompletableFuture<Bucket> bucket(String name) {
        return directory.adminCall("GET", "/v1/s3/buckets/" + seg(name), null, BUCKET);
    }

    /** {@code GET /v1/s3/buckets}: every bucket, by name. */
    public CompletableFuture<List<Bucket>> buckets() {
        return directory.adminCall("GET", "/v1/s3/buckets", null, BUCKETS);
    }

    /** {@code DELETE /v1/s3/buckets/{name}}: NO_SUCH_BUCKET, BUCKET_NOT_EMPTY (objects or uploads). */
    public CompletableFuture<Void> deleteBucket(String name) {
        return directory.adminCall("DELETE", "/v1/s3/buckets/" + seg(name), null, EMPTY).thenApply(m -> null);
    }

    // --- objects

    /** {@code GET /v1/s3/objects/{bucket}?key=K}: NO_SUCH_BUCKET, NO_SUCH_KEY. */
    public CompletableFuture<ObjectRecord> object(String bucket, String key) {
        return directory.adminCall("GET", "/v1/s3/objects/" + seg(bucket) + "?key=" + q(key), null, OBJECT);
    }

    /**
     * {@code POST /v1/s3/objects/{bucket}/put}: commits {@code object} (its {@code modified} is stamped
     * by the leader) if {@code condition} holds on the key's current object, and removes the WRITING
     * record {@code pending} (may be null when the object has no chunk) in the same change. The chunks
     * of the object it replaces go to a new DOOMED record, named in the answer.
     * NO_SUCH_BUCKET, PRECONDITION_FAILED, PENDING_GONE; NO_SUCH_KEY for an If-Match on a key without an
     * object (S3's 404). A repeat of a put that was applied (its answer lost) answers its success.
     */
    public CompletableFuture<Replaced> putObject(ObjectRecord object, String pending, Condition condition) {
        Condition c = condition == null ? Condition.NONE : condition;
        return directory.adminCall("POST", "/v1/s3/objects/" + seg(object.bucket()) + "/put",
                new PutObject(object, pending, c.ifMatch(), c.ifNoneMatch()), REPLACED);
    }

    /**
     * {@code POST /v1/s3/objects/{bucket}/delete}: removes the key (nothing when absent; S3's delete
     * answers 204 either way) if {@code ifMatch} (null: always) holds; its chunks go to a DOOMED record.
     */
    public CompletableFuture<Replaced> deleteObject(String bucket, String key, String ifMatch) {
        return directory.adminCall("POST", "/v1/s3/objects/" + seg(bucket) + "/delete", new DeleteObject(key, ifMatch), REPLACED);
    }

    /**
     * {@code GET /v1/s3/objects/{bucket}?prefix&delimiter&after&max}: one page of keys in UTF-8 byte
     * order after {@code after} (exclusive; null: from the start), at most {@code max} objects and
     * common prefixes together, found by seeking in the database, not scanning.
     */
    public CompletableFuture<Listing> list(String bucket, String prefix, String delimiter, String after, int max) {
        StringBuilder path = new StringBuilder("/v1/s3/objects/").append(seg(bucket)).append("?max=").append(max);
        param(path, "prefix", prefix);
        param(path, "delimiter", delimiter);
        param(path, "after", after);
        return directory.adminCall("GET", path.toString(), null, LISTING);
    }

    // --- multipart uploads

    /** {@code POST /v1/s3/uploads/{bucket}}: a new upload; the directory gives its id. NO_SUCH_BUCKET. */
    public CompletableFuture<Upload> createUpload(Upload upload) {
        return directory.adminCall("POST", "/v1/s3/uploads/" + seg(upload.bucket()), upload, UPLOAD);
    }

    /** {@code GET /v1/s3/uploads/{bucket}/{uploadId}}: NO_SUCH_UPLOAD (also when it belongs to another bucket or key). */
    public CompletableFuture<Upload> upload(String bucket, String key, String uploadId) {
        return directory.adminCall("GET", uploadPath(bucket, uploadId) + "?key=" + q(key), null, UPLOAD);
    }

    /**
     * {@code POST /v1/s3/uploads/{bucket}/{uploadId}/parts}: records {@code part} (modified stamped by
     * the leader), removing WRITING record {@code pending} (null when the part has no chunk); a part of
     * the same number uploaded before goes to a DOOMED record. NO_SUCH_UPLOAD, PENDING_GONE.
     */
    public CompletableFuture<Replaced> putPart(String bucket, String key, String uploadId, Part part, String pending) {
        return directory.adminCall("POST", uploadPath(bucket, uploadId) + "/parts", new PutPart(key, part, pending), REPLACED);
    }

    /** {@code GET /v1/s3/uploads/{bucket}/{uploadId}/parts?after&max}: parts by number. NO_SUCH_UPLOAD. */
    public CompletableFuture<List<Part>> parts(String bucket, String key, String uploadId, int after, int max) {
        return directory.adminCall("GET", uploadPath(bucket, uploadId) + "/parts?key=" + q(key) + "&after=" + after + "&max=" + max,
                null, PARTS);
    }

    /**
     * {@code POST /v1/s3/uploads/{bucket}/{uploadId}/complete}: makes {@code object} (whose chunks are
     * the chosen parts' chunks in order) the key's object, if every part in {@code parts} (number and
     * ETag) is still the one uploaded, no chosen part but the last is under 5 MiB, and
     * {@code condition} holds; parts left out go to a DOOMED record with the replaced object's chunks.
     * A second complete of a completed upload answers NO_SUCH_UPLOAD. NO_SUCH_UPLOAD, INVALID_PART,
     * ENTITY_TOO_SMALL, PRECONDITION_FAILED (NO_SUCH_KEY for an If-Match on a key without an object).
     * The object's chunks, size and part sizes are taken from the stored parts.
     */
    public CompletableFuture<Replaced> complete(String uploadId, ObjectRecord object, List<Part> parts, Condition condition) {
        Condition c = condition == null ? Condition.NONE : condition;
        return directory.adminCall("POST", uploadPath(object.bucket(), uploadId) + "/complete",
                new Complete(object, parts, c.ifMatch(), c.ifNoneMatch()), REPLACED);
    }

    /** {@code DELETE /v1/s3/uploads/{bucket}/{uploadId}}: every part's chunks go to a DOOMED record. NO_SUCH_UPLOAD. */
    public CompletableFuture<Replaced> abort(String bucket, String key, String uploadId) {
        return directory.adminCall("DELETE", uploadPath(bucket, uploadId) + "?key=" + q(key), null, REPLACED);
    }

    /** {@code GET /v1/s3/uploads/{bucket}?prefix&delimiter&keyMarker&uploadIdMarker&max}. */
    public CompletableFuture<UploadListing> uploads(String bucket, String prefix, String delimiter, String keyMarker,
                                                    String uploadIdMarker, int max) {
        StringBuilder path = new StringBuilder("/v1/s3/uploads/").append(seg(bucket)).append("?max=").append(max);
        param(path, "prefix", prefix);
        param(path, "delimiter", delimiter);
        param(path, "keyMarker", keyMarker);
        param(path, "uploadIdMarker", uploadIdMarker);
        return directory.adminCall("GET", path.toString(), null, UPLOAD_LISTING);
    }

    /** Uploads of every bucket initiated before {@code before} (epoch ms): the sweep aborts abandoned ones. */
    public CompletableFuture<List<Upload>> uploadsBefore(long before, int max) {
        return directory.adminCall("GET", "/v1/s3/uploads?before=" + before + "&max=" + max, null, UPLOADS);
    }

    // --- pending records: needles no key refers to

    /**
     * {@code POST /v1/s3/pending}: appends {@code chunks} to WRITING record {@code id}, or makes a new
     * record when {@code id} is null; answers the record's id. Called before the needles are written.
     * PENDING_GONE when the record is gone or doomed.
     */
    public CompletableFuture<String> pend(String id, List<Chunk> chunks) {
        return directory.adminCall("POST", "/v1/s3/pending", new Pend(id, chunks), PEND).thenApply(Pend::id);
    }

    /** {@code POST /v1/s3/pending/{id}/doom}: a WRITING record becomes DOOMED (a failed upload; the sweep). Idempotent. */
    public CompletableFuture<Void> doom(String id) {
        return directory.adminCall("POST", "/v1/s3/pending/" + seg(id) + "/doom", null, EMPTY).thenApply(m -> null);
    }

    /** {@code DELETE /v1/s3/pending/{id}}: drops a DOOMED record once its needles are deleted. Idempotent. */
    public CompletableFuture<Void> drop(String id) {
        return directory.adminCall("DELETE", "/v1/s3/pending/" + seg(id), null, EMPTY).thenApply(m -> null);
    }

    /** {@code GET /v1/s3/pending/{id}}: the record, or null when it is gone (PENDING_GONE). */
    public CompletableFuture<Pending> pending(String id) {
        return directory.adminCall("GET", "/v1/s3/pending/" + seg(id), null, PENDING).handle((p, t) -> {
            if (t == null) {
                return p;
            }
            Throwable c = t instanceof java.util.concurrent.CompletionException && t.getCause() != null ? t.getCause() : t;
            if (c instanceof DirectoryException d && "PENDING_GONE".equals(d.errorName())) {
                return null;
            }
            throw t instanceof java.util.concurrent.CompletionException ce ? ce : new java.util.concurrent.CompletionException(t);
        });
    }

    /** {@code GET /v1/s3/pending?after&max}: records by id after {@code after} (null: first). */
    public CompletableFuture<List<Pending>> pendings(String after, int max) {
        StringBuilder path = new StringBuilder("/v1/s3/pending?max=").append(max);
        param(path, "after", after);
        return directory.adminCall("GET", path.toString(), null, PENDINGS);
    }

    // --- the routes' JSON (docs/directory-api.md "S3 namespace")

    private static final TypeReference<Bucket> BUCKET = new TypeReference<>() { };
    private static final TypeReference<List<Bucket>> BUCKETS = new TypeReference<>() { };
    private static final TypeReference<ObjectRecord> OBJECT = new TypeReference<>() { };
    private static final TypeReference<Replaced> REPLACED = new TypeReference<>() { };
    private static final TypeReference<Listing> LISTING = new TypeReference<>() { };
    private static final TypeReference<Upload> UPLOAD = new TypeReference<>() { };
    private static final TypeReference<List<Upload>> UPLOADS = new TypeReference<>() { };
    private static final TypeReference<UploadListing> UPLOAD_LISTING = new TypeReference<>() { };
    private static final TypeReference<List<Part>> PARTS = new TypeReference<>() { };
    private static final TypeReference<Pend> PEND = new TypeReference<>() { };
    private static final TypeReference<Pending> PENDING = new TypeReference<>() { };
    private static final TypeReference<List<Pending>> PENDINGS = new TypeReference<>() { };
    private static final TypeReference<Map<String, Object>> EMPTY = new TypeReference<>() { };

    record CreateBucket(String region) {
    }

    record PutObject(ObjectRecord object, String pending, String ifMatch, boolean ifNoneMatch) {
    }

    record DeleteObject(String key, String ifMatch) {
    }

    record PutPart(String key, Part part, String pending) {
    }

    record Complete(ObjectRecord object, List<Part> parts, String ifMatch, boolean ifNoneMatch) {
    }

    @JsonIgnoreProperties(ignoreUnknown = true)
    record Pend(String id, List<Chunk> chunks) {
    }

    private static String uploadPath(String bucket, String uploadId) {
        return "/v1/s3/uploads/" + seg(bucket) + "/" + seg(uploadId);
    }

    /** A path segment: percent-encoded UTF-8 (a space as %20). */
    private static String seg(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** A query value: URLEncoder's form encoding, which the directory's decoder reads back exactly ('+' as %2B). */
    private static String q(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static void param(StringBuilder path, String name, String value) {
        if (value != null) {
            path.append('&').append(name).append('=').append(q(value));
        }
    }
}
