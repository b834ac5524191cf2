package io.hayloft.s3;

import io.hayloft.client.NamespaceClient;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.format.s3.Replaced;
import io.hayloft.s3.Answers.Call;
import io.hayloft.s3.checksum.ChecksumAlgorithm;
import io.hayloft.serverkit.http.StreamedRequestHandler;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * PutObject (streamed, see {@link UploadBody}) and what an upload's head says about the object it
 * makes: Content-Type, the stored headers, user metadata, the write condition. Stateless; thread-safe.
 */
final class PutOps {
    /** Most bytes of user metadata (names and values), as S3. */
    static final int MAX_METADATA_BYTES = 2048;

    private PutOps() {
    }

    /**
     * PutObject: the body streamed into chunks, then committed under the request's condition; a body of
     * at most {@code inlineBytes} is committed inline, in the one directory change that names it.
     */
    static StreamedRequestHandler.RequestBody putObject(Call c) {
        S3Request r = c.req();
        NamespaceClient.Condition condition = condition(r);
        String contentType = contentType(r);
        Map<String, String> headers = storedHeaders(r);
        Map<String, String> metadata = metadata(r);
        Digests digests = Digests.of(r, null);
        if (!digests.any()) {
            digests.add(ChecksumAlgorithm.CRC64NVME); // S3 gives every object a full-object CRC64NVME
        }
        return new UploadBody(c, "PutObject", c.g().config().maxObjectBytes, c.g().config().inlineBytes, digests,
                (chunks, inline, pending, size, d, trailers) -> {
            ObjectRecord o = new ObjectRecord(r.bucket(), r.key(), size, d.etag(), chunks, List.of(), d.checksums(),
                    "FULL_OBJECT", contentType, headers, metadata, 0, inline);
            Replaced replaced = Gateway.await(c.g().namespace().putObject(o, pending, condition));
            c.g().free(replaced.doomed());
            FullHttpResponse answer = Answers.empty(HttpResponseStatus.OK);
            answer.headers().set(HttpHeaderNames.ETAG, Answers.quote(o.etag()));
            Answers.checksumHeaders(answer, o.checksums(), "FULL_OBJECT");
            return answer;
        });
    }

    /**
     * The write condition of PutObject and CompleteMultipartUpload: {@code If-None-Match: *} (no
     * object under the key) and {@code If-Match: "etag"}; another If-None-Match is NotImplemented, as on S3.
     */
    static NamespaceClient.Condition condition(S3Request r) {
        String ifNoneMatch = r.header("If-None-Match");
        String ifMatch = r.header("If-Match");
        if (ifNoneMatch == null && ifMatch == null) {
            return NamespaceClient.Condition.NONE;
        }
        if (ifNoneMatch != null && !ifNoneMatch.trim().equals("*")) {
            throw S3Error.NOT_IMPLEMENTED.exception("If-None-Match on a write takes only *");
        }
        return new NamespaceClient.Condition(ifMatch == null ? null : Conditions.unquote(ifMatch), ifNoneMatch != null);
    }

    /** The Content-Type to store (S3's default binary/octet-stream). */
    static String contentType(S3Request r) {
        String t = r.header("Content-Type");
        return t == null || t.isBlank() ? "binary/octet-stream" : t;
    }

    /** The stored headers of an upload; Content-Encoding without the {@code aws-chunked} framing token. */
    static Map<String, String> storedHeaders(S3Request r) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String h : Answers.STORED_HEADERS) {
            String v = r.header(h);
            if (v == null) {
                continue;
            }
            if (h.equals("Content-Encoding")) {
                StringBuilder b = new StringBuilder();
                for (String t : v.split(",")) {
                    if (!t.trim().equalsIgnoreCase("aws-chunked") && !t.isBlank()) {
                        b.append(b.length() == 0 ? "" : ",").append(t.trim());
                    }
                }
                v = b.toString();
                if (v.isEmpty()) {
                    continue;
                }
            }
            m.put(h, v);
        }
        return m;
    }

    /** The {@code x-amz-meta-*} headers: names lower case without the prefix. MetadataTooLarge-like InvalidArgument over 2 KiB. */
    static Map<String, String> metadata(S3Request r) {
        Map<String, String> m = new LinkedHashMap<>();
        int bytes = 0;
        for (Map.Entry<String, String> e : r.headers()) {
            String name = e.getKey().toLowerCase(Locale.ROOT);
            if (name.startsWith("x-amz-meta-") && name.length() > "x-amz-meta-".length()) {
                String k = name.substring("x-amz-meta-".length());
                m.merge(k, e.getValue(), (a, b) -> a + "," + b);
                bytes += k.length() + e.getValue().length();
            }
        }
        if (bytes > MAX_METADATA_BYTES) {
            throw S3Error.INVALID_ARGUMENT.exception("Your metadata headers exceed the maximum allowed metadata size of "
                    + MAX_METADATA_BYTES + " bytes");
        }
        return m;
    }
}
