package io.hayloft.s3;

import io.hayloft.client.RemoteException;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.format.s3.Replaced;
import io.hayloft.s3.Answers.Call;
import io.hayloft.serverkit.http.StreamedResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * GetObject, HeadObject, DeleteObject and DeleteObjects. GET and HEAD: conditional headers (304 /
 * 412), one Range (206, 416), {@code partNumber}, the {@code response-*} overrides and, with
 * {@code x-amz-checksum-mode: ENABLED}, the stored checksums of whole-object answers; the body is
 * streamed from the chunks. Stateless; thread-safe.
 */
final class ObjectOps {
    /** {@code response-*} query parameters and the headers they set. */
    private static final String[][] OVERRIDES = {{"response-content-type", "Content-Type"},
            {"response-content-disposition", "Content-Disposition"}, {"response-content-encoding", "Content-Encoding"},
            {"response-content-language", "Content-Language"}, {"response-cache-control", "Cache-Control"},
            {"response-expires", "Expires"}};
    static final int MAX_DELETE_KEYS = 1000;

    private ObjectOps() {
    }

    static FullHttpResponse get(Call c) {
        return read(c, false);
    }

    static FullHttpResponse head(Call c) {
        return read(c, true);
    }

    private static FullHttpResponse read(Call c, boolean head) {
        S3Request r = c.req();
        ObjectRecord o = Gateway.await(c.g().namespace().object(r.bucket(), r.key()));
        Conditions.Outcome outcome = Conditions.evaluate(r.header("If-Match"), r.header("If-None-Match"),
                r.header("If-Modified-Since"), r.header("If-Unmodified-Since"), o.etag(), o.modified());
        if (outcome == Conditions.Outcome.PRECONDITION_FAILED) {
            throw S3Error.PRECONDITION_FAILED.exception();
        }
        if (outcome == Conditions.Outcome.NOT_MODIFIED) {
            FullHttpResponse nm = Answers.empty(HttpResponseStatus.NOT_MODIFIED);
            nm.headers().remove(HttpHeaderNames.CONTENT_LENGTH);
            nm.headers().set(HttpHeaderNames.ETAG, Answers.quote(o.etag()));
            nm.headers().set(HttpHeaderNames.LAST_MODIFIED, Conditions.httpDate(o.modified()));
            return nm;
        }
        Ranges.Range range = null;
        String partNumber = r.param("partNumber");
        int partsCount = o.partSizes().size();
        if (partNumber != null) {
            if (r.header("Range") != null) {
                throw S3Error.INVALID_REQUEST.exception("Cannot specify both Range header and partNumber query parameter");
            }
            int n = MultipartOps.partNumber(partNumber);
            range = partRange(o, n);
        } else {
            range = Ranges.parse(r.header("Range"), o.size());
        }
        long offset = range == null ? 0 : range.first();
        long length = range == null ? o.size() : range.length();
        HttpResponseStatus status = range == null ? HttpResponseStatus.OK : HttpResponseStatus.PARTIAL_CONTENT;
        FullHttpResponse answer;
        if (head || length == 0) {
            answer = Answers.empty(status);
            answer.headers().set(HttpHeaderNames.CONTENT_LENGTH, length);
        } else if (length <= StreamedResponse.CHUNK_SIZE) {
            // one piece: read now (a failure is then an S3 error, not a cut connection), one write, no executor hops
            answer = Answers.bytes(status, readFully(c.g(), o, offset, (int) length), "binary/octet-stream");
            c.g().metrics().sent("GetObject", length);
        } else {
            answer = StreamedResponse.stream(status, counted(c.g(), c.g().chunks().read(o, offset, length)), length,
                    "binary/octet-stream");
        }
        Answers.objectHeaders(answer, o);
        if (range != null) {
            answer.headers().set(HttpHeaderNames.CONTENT_RANGE, range.contentRange());
        }
        boolean whole = range == null || partNumber != null && partsCount == 0;
        if ("ENABLED".equalsIgnoreCase(r.header("x-amz-checksum-mode")) && whole) {
            Answers.checksumHeaders(answer, o.checksums(), o.checksumType());
        }
        for (String[] ov : OVERRIDES) {
            String v = r.param(ov[0]);
            if (v != null) {
                answer.headers().set(ov[1], v);
            }
        }
        return answer;
    }

    /** {@code [offset, offset + length)} of {@code o}'s data, read whole (at most one piece). */
    /** {@code in}, whose bytes read are counted in the metrics as sent by GetObject when it is closed. */
    private static java.io.InputStream counted(Gateway g, java.io.InputStream in) {
        return new java.io.FilterInputStream(in) {
            private long sent;

            @Override
            public int read(byte[] b, int off, int len) throws java.io.IOException {
                int r = super.read(b, off, len);
                sent += Math.max(r, 0);
                return r;
            }

            @Override
            public void close() throws java.io.IOException {
                g.metrics().sent("GetObject", sent);
                super.close();
            }
        };
    }

    private static byte[] readFully(Gateway g, ObjectRecord o, long offset, int length) {
        byte[] b = new byte[length];
        try (java.io.InputStream in = g.chunks().read(o, offset, length)) {
            int got = 0;
            while (got < length) {
                int n = in.read(b, got, length - got);
                if (n < 0) {
                    throw new java.io.EOFException("the object's data ended at " + got + " of " + length + " bytes");
                }
                got += n;
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return b;
    }

    /**
     * The bytes of part {@code n} of {@code o} (an object of one PUT has one part, its whole self:
     * partNumber=1 is a 206 of all of it). InvalidPartNumber-like InvalidRange past the last part.
     */
    static Ranges.Range partRange(ObjectRecord o, int n) {
        List<Long> sizes = o.partSizes().isEmpty() ? List.of(o.size()) : o.partSizes();
        if (n > sizes.size()) {
            throw S3Error.INVALID_RANGE.exception("The requested partnumber is not satisfiable");
        }
        long first = 0;
        for (int i = 0; i < n - 1; i++) {
            first += sizes.get(i);
        }
        long len = sizes.get(n - 1);
        if (len == 0) {
            return null; // an empty object: answered whole
        }
        return new Ranges.Range(first, first + len - 1, o.size());
    }

    /** DeleteObject: 204 whether or not the key existed; its chunks freed. */
    static FullHttpResponse delete(Call c) {
        S3Request r = c.req();
        String ifMatch = r.header("If-Match");
        Replaced replaced = Gateway.await(c.g().namespace().deleteObject(r.bucket(), r.key(),
                ifMatch == null ? null : Conditions.unquote(ifMatch)));
        c.g().free(replaced.doomed());
        return Answers.empty(HttpResponseStatus.NO_CONTENT);
    }

    /** DeleteObjects: up to 1000 keys; Quiet answers only the errors. Content-MD5 or a checksum header checked when sent. */
    static FullHttpResponse deleteObjects(Call c) {
        byte[] body = c.body();
        checkBodyDigests(c.req(), body);
        Xml.Element root = Xml.parse(body, "Delete");
        boolean quiet = "true".equalsIgnoreCase(String.valueOf(root.childText("Quiet")).trim());
        List<Xml.Element> objects = root.all("Object");
        if (objects.isEmpty() || objects.size() > MAX_DELETE_KEYS) {
            throw S3Error.MALFORMED_XML.exception();
        }
        List<String> keys = new ArrayList<>();
        for (Xml.Element o : objects) {
            String key = o.childText("Key");
            if (key == null) {
                throw S3Error.MALFORMED_XML.exception();
            }
            keys.add(key);
        }
        String bucket = c.req().bucket();
        Gateway.await(c.g().namespace().bucket(bucket)); // NoSuchBucket for the whole request
        Xml.Writer w = new Xml.Writer("DeleteResult");
        for (String key : keys) {
            try {
                S3Request.checkKey(key);
                Replaced replaced = Gateway.await(c.g().namespace().deleteObject(bucket, key, null));
                c.g().free(replaced.doomed());
                if (!quiet) {
                    w.start("Deleted").text("Key", key).end();
                }
            } catch (S3Exception | RemoteException e) {
                S3Errors.Failure f = S3Errors.classify(e, "DeleteObjects " + bucket + "/" + key);
                w.start("Error").text("Key", key).text("Code", f.code()).text("Message", f.message()).end();
            }
        }
        return Answers.xml(w);
    }

    /**
     * Checks an aggregated body's Content-MD5 and {@code x-amz-checksum-<alg>} (a header, or a trailer of
     * an aws-chunked body, which {@link S3Handler} copies into the headers), each when sent.
     */
    static void checkBodyDigests(S3Request r, byte[] body) {
        Digests d = Digests.of(r, null);
        d.update(body, 0, body.length);
        Map<String, String> trailers = new java.util.HashMap<>();
        String t = r.header("x-amz-trailer");
        if (t != null) {
            for (String name : t.split(",")) {
                String v = r.header(name.trim());
                if (v != null) {
                    trailers.put(name.trim().toLowerCase(java.util.Locale.ROOT), v);
                }
            }
        }
        d.verify(trailers);
    }

    /** CopyObject: see {@link CopyOps}. */
    static FullHttpResponse copy(Call c) {
        return CopyOps.copyObject(c);
    }

    /** Base64 of raw bytes. */
    static String base64(byte[] b) {
        return Base64.getEncoder().encodeToString(b);
    }
}
