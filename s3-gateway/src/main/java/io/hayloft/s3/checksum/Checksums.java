package io.hayloft.s3.checksum;

import io.hayloft.s3.S3Error;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;

/**
 * Checksum helpers of the S3 gateway: base64 header values and their validation, CRC combination
 * (FULL_OBJECT multipart checksums), COMPOSITE multipart checksums, and MD5 for ETags and Content-MD5.
 * Stateless; thread-safe.
 */
public final class Checksums {
    private static final HexFormat HEX = HexFormat.of();

    private Checksums() {
    }

    /** Base64 (standard alphabet, padded) as S3 writes checksum headers. */
    public static String base64(byte[] digest) {
        return Base64.getEncoder().encodeToString(digest);
    }

    /** Lower-case hex. */
    public static String hex(byte[] bytes) {
        return HEX.formatHex(bytes);
    }

    /**
     * The digest a header {@code value} of {@code alg} carries: base64 of exactly
     * {@link ChecksumAlgorithm#digestBytes()} bytes. Throws S3Exception InvalidRequest when it is not.
     */
    public static byte[] decode(ChecksumAlgorithm alg, String value) {
        byte[] d = value == null ? null : decodeBase64(value.trim());
        if (d == null || d.length != alg.digestBytes()) {
            throw S3Error.INVALID_REQUEST.exception("Value for " + alg.header() + " header is invalid.");
        }
        return d;
    }

    /** Base64 of a digest's bytes, or null when {@code value} is not valid base64. */
    public static byte[] decodeBase64(String value) {
        try {
            return Base64.getDecoder().decode(value);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** A CRC's value as its {@code bytes} (4 or 8) big-endian bytes. */
    public static byte[] crcBytes(long crc, int bytes) {
        byte[] b = new byte[bytes];
        for (int i = bytes - 1; i >= 0; i--) {
            b[i] = (byte) crc;
            crc >>>= 8;
        }
        return b;
    }

    /** The value of a CRC digest's big-endian bytes (4 or 8). */
    public static long crcValue(byte[] digest) {
        long v = 0;
        for (byte b : digest) {
            v = v << 8 | (b & 0xff);
        }
        return v;
    }

    /**
     * The CRC of A followed by B from the CRC of A, the CRC of B and B's length (zlib's crc32_combine,
     * for any of the three CRCs: their initial value and final xor are equal, so they cancel).
     */
    public static long combine(ChecksumAlgorithm alg, long crcA, long crcB, long lengthB) {
        if (lengthB < 0) {
            throw new IllegalArgumentException("lengthB " + lengthB);
        }
        int width = alg == ChecksumAlgorithm.CRC64NVME ? 64 : 32;
        long poly = switch (alg) {
            case CRC32 -> 0xEDB88320L;
            case CRC32C -> 0x82F63B78L;
            case CRC64NVME -> Crc64Nvme.POLY;
            default -> throw new IllegalArgumentException(alg + " is not a CRC");
        };
        long mask = width == 64 ? -1L : 0xFFFFFFFFL;
        return (multiply(xPow8n(lengthB, poly, width), crcA & mask, poly, width) ^ (crcB & mask)) & mask;
    }

    /** The combined digest (big-endian bytes) of two CRC digests. */
    public static byte[] combine(ChecksumAlgorithm alg, byte[] digestA, byte[] digestB, long lengthB) {
        return crcBytes(combine(alg, crcValue(digestA), crcValue(digestB), lengthB), alg.digestBytes());
    }

    /** a * b modulo the polynomial, in the reflected representation (x^0 is the top bit). */
    private static long multiply(long a, long b, long poly, int width) {
        long p = 0;
        long top = 1L << (width - 1);
        for (int i = 0; i < width; i++) {
            if ((a & (top >>> i)) != 0) {
                p ^= b;
            }
            b = (b & 1) != 0 ? (b >>> 1) ^ poly : b >>> 1;
        }
        return p;
    }

    /** x^(8n) modulo the polynomial, reflected. */
    private static long xPow8n(long n, long poly, int width) {
        long p = 1L << (width - 1); // x^0
        long sq = 1L << (width - 9); // x^8
        while (n != 0) {
            if ((n & 1) != 0) {
                p = multiply(sq, p, poly, width);
            }
            sq = multiply(sq, sq, poly, width);
            n >>>= 1;
        }
        return p;
    }

    /**
     * A COMPOSITE multipart checksum: base64 of the digest of the parts' digests concatenated, then
     * "-N" (N the number of parts).
     */
    public static String composite(ChecksumAlgorithm alg, List<byte[]> partDigests) {
        RunningChecksum c = alg.start();
        for (byte[] d : partDigests) {
            c.update(d, 0, d.length);
        }
        return base64(c.digest()) + "-" + partDigests.size();
    }

    /** A new MD5 computation (ETags, Content-MD5). */
    public static MessageDigest md5() {
        return ChecksumAlgorithm.digest("MD5");
    }

    /** A new SHA-256 computation. */
    public static MessageDigest sha256() {
        return ChecksumAlgorithm.digest("SHA-256");
    }

    /** Hex SHA-256 of bytes. */
    public static String sha256Hex(byte[] b) {
        return hex(sha256().digest(b));
    }

    /** Hex SHA-256 of a string's UTF-8 bytes. */
    public static String sha256Hex(String s) {
        return sha256Hex(s.getBytes(StandardCharsets.UTF_8));
    }

    /** An ETag's hex (no quotes) of an MD5 digest. */
    public static String etag(byte[] md5) {
        return hex(md5);
    }

    /** The ETag of a multipart upload: hex MD5 of the parts' MD5 digests concatenated, then "-N". */
    public static String multipartEtag(List<byte[]> partMd5s) {
        MessageDigest md = md5();
        for (byte[] d : partMd5s) {
            md.update(d);
        }
        return hex(md.digest()) + "-" + partMd5s.size();
    }

    /**
     * The MD5 a {@code Content-MD5} header promises: base64 of 16 bytes. Throws S3Exception InvalidDigest
     * when it is not.
     */
    public static byte[] contentMd5(String header) {
        byte[] d = header == null ? null : decodeBase64(header.trim());
        if (d == null || d.length != 16) {
            throw S3Error.INVALID_DIGEST.exception("The Content-MD5 you specified was invalid.");
        }
        return d;
    }

    /** Checks a computed MD5 against a Content-MD5 header's: S3Exception BadDigest when they differ. */
    public static void checkContentMd5(String header, byte[] computed) {
        if (!MessageDigest.isEqual(contentMd5(header), computed)) {
            throw S3Error.BAD_DIGEST.exception("The Content-MD5 you specified did not match what we received.");
        }
    }

    /** Checks a computed digest against a checksum header's value: S3Exception BadDigest when they differ. */
    public static void check(ChecksumAlgorithm alg, String headerValue, byte[] computed) {
        if (!MessageDigest.isEqual(decode(alg, headerValue), computed)) {
            throw S3Error.BAD_DIGEST.exception("The " + alg.name() + " you specified did not match the calculated checksum.");
        }
    }
}
