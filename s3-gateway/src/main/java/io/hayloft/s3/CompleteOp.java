package io.hayloft.s3;

import io.hayloft.format.s3.Chunk;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.format.s3.Part;
import io.hayloft.format.s3.Replaced;
import io.hayloft.format.s3.Upload;
import io.hayloft.s3.Answers.Call;
import io.hayloft.s3.checksum.ChecksumAlgorithm;
import io.hayloft.s3.checksum.Checksums;
import io.hayloft.s3.checksum.RunningChecksum;
import io.netty.handler.codec.http.FullHttpResponse;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * CompleteMultipartUpload: the parts the body lists (ascending, else InvalidPartOrder; each the one
 * uploaded, by ETag and any checksum given, else InvalidPart; every part but the last at least
 * 5 MiB, else EntityTooSmall) become the object. Its ETag is the hex MD5 of the parts' binary MD5s
 * followed by {@code -N}; with a checksum algorithm chosen at creation, its checksum is COMPOSITE
 * (the checksum of the parts' checksums, {@code -N}) or FULL_OBJECT (the parts' CRCs combined).
 * The directory re-checks parts, sizes and the write condition atomically. Stateless; thread-safe.
 */
final class CompleteOp {
    /** Smallest part but the last, as S3. */
    static final long MIN_PART_BYTES = 5L << 20;

    private CompleteOp() {
    }

    /** A part the client lists: number, ETag (unquoted), the checksums it names (algorithm name to base64). */
    record Listed(int number, String etag, Map<String, String> checksums) {
    }

    /** The parts listed in a CompleteMultipartUpload body; MalformedXML, InvalidPartOrder. */
    static List<Listed> parse(byte[] body) {
        Xml.Element root = Xml.parse(body, "CompleteMultipartUpload");
        List<Listed> parts = new ArrayList<>();
        int last = 0;
        for (Xml.Element p : root.all("Part")) {
            String n = p.childText("PartNumber");
            String etag = p.childText("ETag");
            if (n == null || etag == null) {
                throw S3Error.MALFORMED_XML.exception();
            }
            int number = MultipartOps.partNumber(n);
            if (number <= last) {
                throw S3Error.INVALID_PART_ORDER.exception("The list of parts was not in ascending order. Parts must be ordered by part number.");
            }
            last = number;
            Map<String, String> sums = new HashMap<>();
            for (ChecksumAlgorithm a : ChecksumAlgorithm.values()) {
                String v = p.childText("Checksum" + a.name());
                if (v != null) {
                    sums.put(a.name(), v.trim());
                }
            }
            parts.add(new Listed(number, Conditions.unquote(etag), sums));
        }
        if (parts.isEmpty()) {
            throw S3Error.MALFORMED_XML.exception("You must specify at least one part");
        }
        return parts;
    }

    /** The multipart ETag: hex MD5 of the parts' binary MD5s, then {@code -N}. */
    static String etag(List<String> partEtags) {
        MessageDigest md5 = Digests.md5();
        for (String e : partEtags) {
            md5.update(HexFormat.of().parseHex(e));
        }
        return HexFormat.of().formatHex(md5.digest()) + "-" + partEtags.size();
    }

    /** A COMPOSITE checksum: the digest of the parts' digests concatenated, base64, then {@code -N}. */
    static String composite(ChecksumAlgorithm a, List<byte[]> partDigests) {
        RunningChecksum c = a.start();
        for (byte[] d : partDigests) {
            c.update(d, 0, d.length);
        }
        return Base64.getEncoder().encodeToString(c.digest()) + "-" + partDigests.size();
    }

    static FullHttpResponse complete(Call c) {
        S3Request r = c.req();
        var condition = PutOps.condition(r);
        Upload u = MultipartOps.upload(c);
        List<Listed> listed = parse(c.body());
        Map<Integer, Part> stored = new HashMap<>();
        int after = 0;
        for (;;) {
            List<Part> page = Gateway.await(c.g().namespace().parts(u.bucket(), u.key(), u.uploadId(), after, 1000));
            for (Part p : page) {
                stored.put(p.number(), p);
                after = Math.max(after, p.number());
            }
            if (page.size() < 1000) {
                break;
            }
        }
        List<Part> chosen = new ArrayList<>();
        for (Listed l : listed) {
            Part p = stored.get(l.number());
            if (p == null || !p.etag().equals(l.etag())) {
                throw S3Error.INVALID_PART.exception("One or more of the specified parts could not be found. The part may not "
                        + "have been uploaded, or the specified entity tag may not match the part's entity tag.");
            }
            l.checksums().forEach((alg, v) -> {
                String mine = p.checksums().get(alg);
                if (mine != null && !mine.equals(v)) {
                    throw S3Error.INVALID_PART.exception("The checksum of part " + l.number() + " does not match the part's");
                }
            });
            chosen.add(p);
        }
        long size = 0;
        List<Chunk> chunks = new ArrayList<>();
        List<Long> sizes = new ArrayList<>();
        List<String> etags = new ArrayList<>();
        for (int i = 0; i < chosen.size(); i++) {
            Part p = chosen.get(i);
            if (i < chosen.size() - 1 && p.size() < MIN_PART_BYTES) {
                throw S3Error.ENTITY_TOO_SMALL.exception("Your proposed upload is smaller than the minimum allowed object size: "
                        + "part " + p.number() + " has " + p.size() + " bytes, every part but the last needs at least 5 MiB");
            }
            size += p.size();
            chunks.addAll(p.chunks());
            sizes.add(p.size());
            etags.add(p.etag());
        }
        if (size > c.g().config().maxObjectBytes) {
            throw S3Error.ENTITY_TOO_LARGE.exception("The object would exceed the maximum allowed size");
        }
        Map<String, String> checksums = new HashMap<>();
        ChecksumAlgorithm a = MultipartOps.algorithm(u);
        if (a != null) {
            checksums.put(a.name(), checksum(a, u.checksumType(), chosen));
            String claimed = r.header(a.header());
            if (claimed != null && "FULL_OBJECT".equals(u.checksumType()) && !claimed.trim().equals(checksums.get(a.name()))) {
                throw S3Error.BAD_DIGEST.exception("The " + a.name() + " you specified did not match the calculated checksum.");
            }
        }
        ObjectRecord o = new ObjectRecord(u.bucket(), u.key(), size, etag(etags), chunks, sizes, checksums,
                a == null ? null : u.checksumType(), u.contentType(), u.headers(), u.metadata(), 0);
        Replaced replaced = Gateway.await(c.g().namespace().complete(u.uploadId(), o, chosen, condition));
        c.g().free(replaced.doomed());
        Xml.Writer w = new Xml.Writer("CompleteMultipartUploadResult").text("Location", "/" + u.bucket() + "/" + u.key())
                .text("Bucket", u.bucket()).text("Key", u.key()).text("ETag", Answers.quote(o.etag()));
        CopyOps.checksumElements(w, checksums);
        if (a != null) {
            w.text("ChecksumType", u.checksumType());
        }
        return Answers.xml(w);
    }

    /** The object's checksum from its parts': COMPOSITE or FULL_OBJECT (CRCs combined). InvalidPart when a part has none. */
    static String checksum(ChecksumAlgorithm a, String type, List<Part> parts) {
        List<byte[]> digests = new ArrayList<>();
        for (Part p : parts) {
            String v = p.checksums().get(a.name());
            if (v == null) {
                throw S3Error.INVALID_PART.exception("Part " + p.number() + " has no " + a.name() + " checksum");
            }
            digests.add(Base64.getDecoder().decode(v));
        }
        if (!"FULL_OBJECT".equals(type)) {
            return composite(a, digests);
        }
        byte[] whole = digests.get(0);
        for (int i = 1; i < digests.size(); i++) {
            whole = combine(a, whole, digests.get(i), parts.get(i).size());
        }
        return Base64.getEncoder().encodeToString(whole);
    }

    /** The CRC of A then B from theirs and B's length. */
    static byte[] combine(ChecksumAlgorithm a, byte[] crcA, byte[] crcB, long lengthB) {
        return Checksums.combine(a, crcA, crcB, lengthB);
    }
}
