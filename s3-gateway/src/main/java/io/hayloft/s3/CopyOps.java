package io.hayloft.s3;

import io.hayloft.format.s3.Chunk;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.format.s3.Replaced;
import io.hayloft.s3.Answers.Call;
import io.hayloft.s3.checksum.ChecksumAlgorithm;
import io.hayloft.s3.data.ChunkStore;
import io.netty.handler.codec.http.FullHttpResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * CopyObject, and what UploadPartCopy shares with it: the copy source ({@code x-amz-copy-source},
 * URL-decoded, {@code ?versionId} ignored), its conditions ({@code x-amz-copy-source-if-*}: 412 when
 * one fails), and copying data by reading the source's chunks and writing new ones (an object's
 * needles belong to one key only, so a copy never shares them). Stateless; thread-safe.
 */
final class CopyOps {
    private CopyOps() {
    }

    /** A copy source: bucket and key. */
    record Source(String bucket, String key) {
    }

    /** The data written by a copy: its chunks (or its bytes, kept inline), the pending record naming them, its digests (verified). */
    record Copied(List<Chunk> chunks, byte[] inline, String pending, long size, Digests digests) {
    }

    /** Parses {@code x-amz-copy-source}: {@code [/]bucket/key[?versionId=...]}, URL-encoded. InvalidArgument when malformed. */
    static Source source(String header) {
        String h = header.trim();
        int q = h.indexOf('?');
        if (q >= 0) {
            h = h.substring(0, q); // versionId: there are no versions here
        }
        String s = S3Request.decode(h, false);
        if (s.startsWith("/")) {
            s = s.substring(1);
        }
        int slash = s.indexOf('/');
        if (slash <= 0 || slash == s.length() - 1) {
            throw S3Error.INVALID_ARGUMENT.exception("Copy Source must mention the source bucket and key: sourcebucket/sourcekey");
        }
        Source src = new Source(s.substring(0, slash), s.substring(slash + 1));
        S3Request.checkBucket(src.bucket());
        S3Request.checkKey(src.key());
        return src;
    }

    /** The source object, its {@code x-amz-copy-source-if-*} conditions checked (412 when one fails). */
    static ObjectRecord sourceObject(Call c, Source src) {
        ObjectRecord o = Gateway.await(c.g().namespace().object(src.bucket(), src.key()));
        S3Request r = c.req();
        Conditions.Outcome out = Conditions.evaluate(r.header("x-amz-copy-source-if-match"),
                r.header("x-amz-copy-source-if-none-match"), r.header("x-amz-copy-source-if-modified-since"),
                r.header("x-amz-copy-source-if-unmodified-since"), o.etag(), o.modified());
        if (out != Conditions.Outcome.PROCEED) {
            throw S3Error.PRECONDITION_FAILED.exception();
        }
        return o;
    }

    /**
     * Copies {@code [offset, offset + length)} of {@code src} into new chunks, computing {@code digests};
     * kept inline when at most {@code inlineBytes} long (0: never).
     */
    static Copied copyData(Gateway g, ObjectRecord src, long offset, long length, int inlineBytes, Digests digests) {
        ChunkStore.Writer w = g.chunks().writer(inlineBytes);
        boolean ok = false;
        try {
            if (length > 0) {
                byte[] buf = new byte[256 * 1024];
                try (InputStream in = g.chunks().read(src, offset, length)) {
                    long left = length;
                    while (left > 0) {
                        int n = in.read(buf, 0, (int) Math.min(buf.length, left));
                        if (n < 0) {
                            throw new IOException("the source's data ended " + left + " bytes early");
                        }
                        digests.update(buf, 0, n);
                        w.write(buf, 0, n);
                        left -= n;
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            List<Chunk> chunks = w.finish();
            digests.verify(Map.of());
            ok = true;
            return new Copied(chunks, w.inline(), w.pending(), length, digests);
        } finally {
            if (!ok) {
                w.abort();
            }
        }
    }

    /** CopyObject: COPY (the source's type, headers and metadata) or REPLACE (the request's). */
    static FullHttpResponse copyObject(Call c) {
        S3Request r = c.req();
        Source src = source(r.header("x-amz-copy-source"));
        String directive = r.header("x-amz-metadata-directive");
        boolean replace = directive != null && directive.trim().equalsIgnoreCase("REPLACE");
        if (directive != null && !replace && !directive.trim().equalsIgnoreCase("COPY")) {
            throw S3Error.INVALID_ARGUMENT.exception("Unknown metadata directive: " + directive);
        }
        String newAlgorithm = r.header("x-amz-checksum-algorithm");
        if (src.bucket().equals(r.bucket()) && src.key().equals(r.key()) && !replace && newAlgorithm == null) {
            throw S3Error.INVALID_REQUEST.exception("This copy request is illegal because it is trying to copy an object to "
                    + "itself without changing the object's metadata, storage class, website redirect location or encryption attributes.");
        }
        var condition = PutOps.condition(r);
        ObjectRecord o = sourceObject(c, src);
        Set<ChecksumAlgorithm> algs = new LinkedHashSet<>();
        if (newAlgorithm != null) {
            algs.add(Digests.algorithm(newAlgorithm.trim()));
        } else {
            for (String a : o.checksums().keySet()) {
                algs.add(Digests.algorithm(a.toUpperCase(Locale.ROOT)));
            }
        }
        if (algs.isEmpty()) {
            algs.add(ChecksumAlgorithm.CRC64NVME);
        }
        Copied data = copyData(c.g(), o, 0, o.size(), c.g().config().inlineBytes, Digests.computing(algs));
        ObjectRecord copy = new ObjectRecord(r.bucket(), r.key(), o.size(), data.digests().etag(), data.chunks(), List.of(),
                data.digests().checksums(), "FULL_OBJECT", replace ? PutOps.contentType(r) : o.contentType(),
                replace ? PutOps.storedHeaders(r) : o.headers(), replace ? PutOps.metadata(r) : o.metadata(), 0, data.inline());
        Replaced replaced;
        try {
            replaced = Gateway.await(c.g().namespace().putObject(copy, data.pending(), condition));
        } catch (RuntimeException e) {
            abandon(c.g(), data.pending());
            throw e;
        }
        c.g().free(replaced.doomed());
        long modified = replaced.object() == null ? c.g().clock().millis() : replaced.object().modified();
        Xml.Writer w = new Xml.Writer("CopyObjectResult").text("LastModified", Xml.time(modified))
                .text("ETag", Answers.quote(copy.etag()));
        checksumElements(w, copy.checksums());
        if (!copy.checksums().isEmpty()) {
            w.text("ChecksumType", "FULL_OBJECT");
        }
        return Answers.xml(w);
    }

    /** {@code <ChecksumCRC32>...} elements of a result. */
    static void checksumElements(Xml.Writer w, Map<String, String> checksums) {
        for (ChecksumAlgorithm a : ChecksumAlgorithm.values()) {
            String v = checksums.get(a.name());
            if (v != null) {
                w.text("Checksum" + a.name(), v);
            }
        }
    }

    /** A pending record whose commit failed: doomed, its needles freed (in the background). Never throws. */
    static void abandon(Gateway g, String pending) {
        if (pending == null) {
            return;
        }
        try {
            Gateway.await(g.namespace().doom(pending));
            g.free(pending);
        } catch (RuntimeException e) {
            org.slf4j.LoggerFactory.getLogger(CopyOps.class).warn("dooming {} failed; the sweep will", pending, e);
        }
    }

    static List<Long> sizes(List<Chunk> chunks) {
        List<Long> l = new ArrayList<>();
        for (Chunk ch : chunks) {
            l.add(ch.size());
        }
        return l;
    }
}
