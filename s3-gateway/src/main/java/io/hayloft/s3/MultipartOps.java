package io.hayloft.s3;

import io.hayloft.format.s3.Chunk;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.format.s3.Part;
import io.hayloft.format.s3.Replaced;
import io.hayloft.format.s3.Upload;
import io.hayloft.format.s3.UploadListing;
import io.hayloft.s3.Answers.Call;
import io.hayloft.s3.checksum.ChecksumAlgorithm;
import io.hayloft.serverkit.http.StreamedRequestHandler;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Multipart uploads: CreateMultipartUpload, UploadPart (streamed), UploadPartCopy, ListParts,
 * AbortMultipartUpload, ListMultipartUploads; CompleteMultipartUpload is {@link CompleteOp}.
 * Stateless; thread-safe.
 */
final class MultipartOps {
    static final int MAX_PARTS = 10_000;
    /** Largest part (5 GiB), as S3. */
    static final long MAX_PART_BYTES = 5L << 30;

    private MultipartOps() {
    }

    /** A part number 1..10000; InvalidArgument otherwise. */
    static int partNumber(String v) {
        try {
            int n = Integer.parseInt(v == null ? "" : v.trim());
            if (n >= 1 && n <= MAX_PARTS) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw S3Error.INVALID_ARGUMENT.exception("Part number must be an integer between 1 and 10000, inclusive");
    }

    static FullHttpResponse create(Call c) {
        S3Request r = c.req();
        String alg = r.header("x-amz-checksum-algorithm");
        String type = r.header("x-amz-checksum-type");
        ChecksumAlgorithm a = alg == null ? null : Digests.algorithm(alg.trim());
        if (type != null && a == null) {
            throw S3Error.INVALID_REQUEST.exception("x-amz-checksum-type needs x-amz-checksum-algorithm");
        }
        String t = null;
        if (a != null) {
            t = type == null ? (a == ChecksumAlgorithm.CRC64NVME ? "FULL_OBJECT" : "COMPOSITE") : type.trim().toUpperCase(Locale.ROOT);
            if (!t.equals("FULL_OBJECT") && !t.equals("COMPOSITE")) {
                throw S3Error.INVALID_REQUEST.exception("x-amz-checksum-type must be FULL_OBJECT or COMPOSITE");
            }
            if (t.equals("FULL_OBJECT") && !a.crc() || t.equals("COMPOSITE") && a == ChecksumAlgorithm.CRC64NVME) {
                throw S3Error.INVALID_REQUEST.exception("The " + a.name() + " checksum algorithm does not support checksum type " + t);
            }
        }
        Upload u = Gateway.await(c.g().namespace().createUpload(new Upload(r.bucket(), r.key(), null, 0,
                PutOps.contentType(r), PutOps.storedHeaders(r), PutOps.metadata(r), a == null ? null : a.name(), t)));
        FullHttpResponse answer = Answers.xml(new Xml.Writer("InitiateMultipartUploadResult").text("Bucket", r.bucket())
                .text("Key", r.key()).text("UploadId", u.uploadId()));
        if (a != null) {
            answer.headers().set("x-amz-checksum-algorithm", a.name());
            answer.headers().set("x-amz-checksum-type", t);
        }
        return answer;
    }

    /** The upload a request names ({@code uploadId}); NoSuchUpload when it is not this key's. */
    static Upload upload(Call c) {
        return Gateway.await(c.g().namespace().upload(c.req().bucket(), c.req().key(), uploadId(c.req())));
    }

    /** The request's {@code uploadId}; NoSuchUpload when it is empty (no directory path names an empty id). */
    private static String uploadId(S3Request r) {
        String id = r.param("uploadId");
        if (id == null || id.isEmpty()) {
            throw S3Error.NO_SUCH_UPLOAD.exception();
        }
        return id;
    }

    static ChecksumAlgorithm algorithm(Upload u) {
        return u.checksumAlgorithm() == null ? null : Digests.algorithm(u.checksumAlgorithm());
    }

    /** UploadPart: streamed like PutObject; the upload's checksum algorithm is always computed. */
    static StreamedRequestHandler.RequestBody uploadPart(Call c) {
        S3Request r = c.req();
        int number = partNumber(r.param("partNumber"));
        Upload u = upload(c);
        Digests digests = Digests.of(r, algorithm(u));
        return new UploadBody(c, "UploadPart", MAX_PART_BYTES, 0, digests, (chunks, inline, pending, size, d, trailers) ->
                putPart(c, u, number, chunks, pending, size, d));
    }

    private static FullHttpResponse putPart(Call c, Upload u, int number, List<Chunk> chunks, String pending, long size,
                                            Digests d) {
        Part p = new Part(number, size, d.etag(), chunks, d.checksums(), 0);
        Replaced replaced = Gateway.await(c.g().namespace().putPart(u.bucket(), u.key(), u.uploadId(), p, pending));
        c.g().free(replaced.doomed());
        FullHttpResponse answer = Answers.empty(HttpResponseStatus.OK);
        answer.headers().set(HttpHeaderNames.ETAG, Answers.quote(p.etag()));
        Answers.checksumHeaders(answer, p.checksums(), null);
        return answer;
    }

    /** UploadPartCopy: a part made of (a range of) another object. */
    static FullHttpResponse uploadPartCopy(Call c) {
        S3Request r = c.req();
        int number = partNumber(r.param("partNumber"));
        CopyOps.Source src = CopyOps.source(r.header("x-amz-copy-source"));
        Upload u = upload(c);
        ObjectRecord o = CopyOps.sourceObject(c, src);
        String rangeHeader = r.header("x-amz-copy-source-range");
        Ranges.Range range = rangeHeader == null ? null : Ranges.copyRange(rangeHeader, o.size());
        long offset = range == null ? 0 : range.first();
        long length = range == null ? o.size() : range.length();
        if (length > MAX_PART_BYTES) {
            throw S3Error.ENTITY_TOO_LARGE.exception("A part may hold at most 5 GiB");
        }
        Set<ChecksumAlgorithm> algs = new LinkedHashSet<>();
        if (algorithm(u) != null) {
            algs.add(algorithm(u));
        }
        CopyOps.Copied data = CopyOps.copyData(c.g(), o, offset, length, 0, Digests.computing(algs));
        Part p = new Part(number, length, data.digests().etag(), data.chunks(), data.digests().checksums(), 0);
        Replaced replaced;
        try {
            replaced = Gateway.await(c.g().namespace().putPart(u.bucket(), u.key(), u.uploadId(), p, data.pending()));
        } catch (RuntimeException e) {
            CopyOps.abandon(c.g(), data.pending());
            throw e;
        }
        c.g().free(replaced.doomed());
        Xml.Writer w = new Xml.Writer("CopyPartResult").text("LastModified", Xml.time(c.g().clock().millis()))
                .text("ETag", Answers.quote(p.etag()));
        CopyOps.checksumElements(w, p.checksums());
        return Answers.xml(w);
    }

    static FullHttpResponse complete(Call c) {
        return CompleteOp.complete(c);
    }

    static FullHttpResponse abort(Call c) {
        S3Request r = c.req();
        Replaced replaced = Gateway.await(c.g().namespace().abort(r.bucket(), r.key(), uploadId(r)));
        c.g().free(replaced.doomed());
        return Answers.empty(HttpResponseStatus.NO_CONTENT);
    }

    static FullHttpResponse listParts(Call c) {
        S3Request r = c.req();
        Upload u = upload(c);
        int marker = 0;
        String m = r.param("part-number-marker");
        if (m != null && !m.isEmpty()) {
            try {
                marker = Integer.parseInt(m.trim());
            } catch (NumberFormatException e) {
                throw S3Error.INVALID_ARGUMENT.exception("part-number-marker must be a number");
            }
        }
        int max = Math.min(ListOps.maxKeys(r.param("max-parts")), 1000);
        List<Part> parts = max == 0 ? List.of() : Gateway.await(c.g().namespace().parts(u.bucket(), u.key(), u.uploadId(),
                marker, max + 1));
        boolean truncated = parts.size() > max;
        List<Part> page = truncated ? parts.subList(0, max) : parts;
        Xml.Writer w = new Xml.Writer("ListPartsResult").text("Bucket", u.bucket()).text("Key", u.key())
                .text("UploadId", u.uploadId()).text("PartNumberMarker", marker);
        if (!page.isEmpty()) {
            w.text("NextPartNumberMarker", page.get(page.size() - 1).number());
        }
        w.text("MaxParts", max).text("IsTruncated", truncated);
        w.start("Initiator").text("ID", c.g().owner()).text("DisplayName", "hayloft").end();
        BucketOps.owner(w, c.g());
        w.text("StorageClass", "STANDARD").text("ChecksumAlgorithm", u.checksumAlgorithm()).text("ChecksumType", u.checksumType());
        for (Part p : page) {
            w.start("Part").text("PartNumber", p.number()).text("LastModified", Xml.time(p.modified()))
                    .text("ETag", Answers.quote(p.etag())).text("Size", p.size());
            CopyOps.checksumElements(w, p.checksums());
            w.end();
        }
        return Answers.xml(w);
    }

    static FullHttpResponse listUploads(Call c) {
        S3Request r = c.req();
        boolean url = ListOps.encodeUrl(r);
        String prefix = ListOps.emptyToNull(r.param("prefix"));
        String delimiter = ListOps.emptyToNull(r.param("delimiter"));
        String keyMarker = ListOps.emptyToNull(r.param("key-marker"));
        String idMarker = ListOps.emptyToNull(r.param("upload-id-marker"));
        int max = ListOps.maxKeys(r.param("max-uploads"));
        UploadListing l = max == 0 ? new UploadListing(null, null, false, null, null)
                : Gateway.await(c.g().namespace().uploads(r.bucket(), prefix, delimiter, keyMarker, idMarker, max));
        if (max == 0) {
            Gateway.await(c.g().namespace().bucket(r.bucket()));
        }
        Xml.Writer w = new Xml.Writer("ListMultipartUploadsResult").text("Bucket", r.bucket())
                .text("KeyMarker", ListOps.enc(keyMarker == null ? "" : keyMarker, url))
                .text("UploadIdMarker", idMarker == null ? "" : idMarker);
        if (l.truncated()) {
            w.text("NextKeyMarker", ListOps.enc(l.nextKey(), url)).text("NextUploadIdMarker", l.nextUploadId());
        }
        w.text("Prefix", ListOps.enc(prefix == null ? "" : prefix, url)).text("Delimiter", ListOps.enc(delimiter, url))
                .text("MaxUploads", max).text("IsTruncated", l.truncated()).text("EncodingType", url ? "url" : null);
        for (Upload u : l.uploads()) {
            w.start("Upload").text("Key", ListOps.enc(u.key(), url)).text("UploadId", u.uploadId());
            w.start("Initiator").text("ID", c.g().owner()).text("DisplayName", "hayloft").end();
            BucketOps.owner(w, c.g());
            w.text("StorageClass", "STANDARD").text("Initiated", Xml.time(u.initiated()))
                    .text("ChecksumAlgorithm", u.checksumAlgorithm()).text("ChecksumType", u.checksumType()).end();
        }
        for (String p : l.commonPrefixes()) {
            w.start("CommonPrefixes").text("Prefix", ListOps.enc(p, url)).end();
        }
        return Answers.xml(w);
    }
}
