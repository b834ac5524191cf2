package io.hayloft.s3;

import io.hayloft.s3.checksum.ChecksumAlgorithm;
import io.hayloft.s3.checksum.RunningChecksum;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The digests of one body as it passes: its MD5 (the ETag, {@code Content-MD5}) and the S3
 * checksums asked for, each with the value the client claims (a header, or a trailer named in
 * {@code x-amz-trailer}, known only at the end). {@link #verify} then checks them all. Not
 * thread-safe: one per body.
 */
public final class Digests {
    private final MessageDigest md5 = md5();
    private final Map<ChecksumAlgorithm, RunningChecksum> running = new EnumMap<>(ChecksumAlgorithm.class);
    private final Map<ChecksumAlgorithm, String> claimed = new EnumMap<>(ChecksumAlgorithm.class);
    private ChecksumAlgorithm trailer;
    private final byte[] contentMd5;
    private Map<ChecksumAlgorithm, byte[]> results;
    private byte[] md5Result;

    /**
     * The digests a request asks for: {@code Content-MD5}, one {@code x-amz-checksum-<alg>} header,
     * or {@code x-amz-trailer: x-amz-checksum-<alg>}, or {@code x-amz-sdk-checksum-algorithm};
     * {@code also}: algorithms computed whatever the request says (a multipart upload's; null: none).
     * InvalidDigest for a malformed Content-MD5; InvalidRequest for two checksum headers or an
     * unknown algorithm.
     */
    public static Digests of(S3Request r, ChecksumAlgorithm also) {
        Digests d = new Digests(contentMd5(r.header("Content-MD5")));
        for (ChecksumAlgorithm a : ChecksumAlgorithm.values()) {
            String v = r.header(a.header());
            if (v != null) {
                if (!d.claimed.isEmpty()) {
                    throw S3Error.INVALID_REQUEST.exception("Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.");
                }
                d.claimed.put(a, v.trim());
                d.running.put(a, a.start());
            }
        }
        String trailer = r.header("x-amz-trailer");
        if (trailer != null) {
            for (String t : trailer.split(",")) {
                String name = t.trim().toLowerCase(Locale.ROOT);
                if (name.startsWith("x-amz-checksum-")) {
                    ChecksumAlgorithm a = algorithm(name.substring("x-amz-checksum-".length()));
                    d.trailer = a;
                    d.running.putIfAbsent(a, a.start());
                }
            }
        }
        String sdk = r.header("x-amz-sdk-checksum-algorithm");
        if (sdk != null) {
            ChecksumAlgorithm a = algorithm(sdk.trim());
            d.running.putIfAbsent(a, a.start());
        }
        if (also != null) {
            d.running.putIfAbsent(also, also.start());
        }
        return d;
    }

    private Digests(byte[] contentMd5) {
        this.contentMd5 = contentMd5;
    }

    /** A new digest set computing {@code algorithms} (no claims: a copy's data). */
    public static Digests computing(Iterable<ChecksumAlgorithm> algorithms) {
        Digests d = new Digests(null);
        for (ChecksumAlgorithm a : algorithms) {
            d.running.putIfAbsent(a, a.start());
        }
        return d;
    }

    /** An algorithm by its S3 name ({@code CRC32}, {@code crc64nvme} ...); InvalidRequest when unknown. */
    public static ChecksumAlgorithm algorithm(String name) {
        try {
            return ChecksumAlgorithm.valueOf(name.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw S3Error.INVALID_REQUEST.exception("Checksum algorithm provided is unsupported: " + name);
        }
    }

    /** A Content-MD5 header's 16 bytes, null when absent; InvalidDigest when it is not base64 of 16 bytes. */
    static byte[] contentMd5(String header) {
        if (header == null) {
            return null;
        }
        try {
            byte[] b = Base64.getDecoder().decode(header.trim());
            if (b.length == 16) {
                return b;
            }
        } catch (IllegalArgumentException e) {
            // below
        }
        throw S3Error.INVALID_DIGEST.exception("The Content-MD5 you specified is not valid");
    }

    public static MessageDigest md5() {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Whether any S3 checksum is computed. */
    public boolean any() {
        return !running.isEmpty();
    }

    /** Adds a checksum computed whatever the request says (CRC64NVME when none was asked: S3's default). */
    public void add(ChecksumAlgorithm a) {
        running.putIfAbsent(a, a.start());
    }

    public void update(byte[] b, int off, int len) {
        md5.update(b, off, len);
        for (RunningChecksum c : running.values()) {
            c.update(b, off, len);
        }
    }

    /**
     * Ends the computation and checks every claim: Content-MD5 and the checksum header or trailer
     * ({@code trailers}: the payload's trailing headers, lower-case names). BadDigest when one does not
     * hold; InvalidRequest when a trailer named in {@code x-amz-trailer} did not come.
     */
    public void verify(Map<String, String> trailers) {
        md5Result = md5.digest();
        results = new EnumMap<>(ChecksumAlgorithm.class);
        running.forEach((a, c) -> results.put(a, c.digest()));
        if (contentMd5 != null && !MessageDigest.isEqual(contentMd5, md5Result)) {
            throw S3Error.BAD_DIGEST.exception("The Content-MD5 you specified did not match what we received.");
        }
        if (trailer != null) {
            String v = trailers == null ? null : trailers.get(trailer.header());
            if (v == null) {
                throw S3Error.INVALID_REQUEST.exception("The trailer " + trailer.header() + " named in x-amz-trailer was not sent");
            }
            claimed.put(trailer, v.trim());
        }
        claimed.forEach((a, v) -> {
            String mine = Base64.getEncoder().encodeToString(results.get(a));
            if (!mine.equals(v)) {
                throw S3Error.BAD_DIGEST.exception("The " + a.name() + " you specified did not match the calculated checksum.");
            }
        });
    }

    /** Hex MD5 (the ETag of a single-part body); after {@link #verify}. */
    public String etag() {
        return HexFormat.of().formatHex(md5Result);
    }

    /** The raw digests computed, after {@link #verify}. */
    public Map<ChecksumAlgorithm, byte[]> raw() {
        return results;
    }

    /** Algorithm name to base64 value, as stored; after {@link #verify}. */
    public Map<String, String> checksums() {
        Map<String, String> m = new LinkedHashMap<>();
        results.forEach((a, d) -> m.put(a.name(), Base64.getEncoder().encodeToString(d)));
        return m;
    }
}
