package io.hayloft.s3.sdk;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32;
import java.util.zip.CRC32C;

/**
 * What S3 computes over bytes, computed independently of the gateway for the tests to compare with:
 * MD5 ETags (single-part and multipart), the five checksums in the base64 form of their headers,
 * multipart composite checksums, and test data. Stateless; thread-safe.
 */
public final class Digests {
    private static final long[] CRC64NVME_TABLE = new long[256];

    static {
        // CRC-64/NVME: reflected polynomial 0x9a6c9329ac4bc9b5 (0xad93d23594c93659), init and xorout all ones.
        for (int i = 0; i < 256; i++) {
            long c = i;
            for (int k = 0; k < 8; k++) {
                c = (c & 1) != 0 ? (c >>> 1) ^ 0x9a6c9329ac4bc9b5L : c >>> 1;
            }
            CRC64NVME_TABLE[i] = c;
        }
    }

    private Digests() {
    }

    /** {@code "md5hex"} with the quotes, as S3 answers the ETag of a single-part object. */
    public static String etag(byte[] data) {
        return '"' + HexFormat.of().formatHex(digest("MD5", data)) + '"';
    }

    /** {@code "md5hex(md5(part1) || md5(part2) ...)-N"}: the ETag of a multipart object. */
    public static String multipartEtag(List<byte[]> parts) {
        ByteArrayOutputStream md5s = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            md5s.writeBytes(digest("MD5", p));
        }
        return '"' + HexFormat.of().formatHex(digest("MD5", md5s.toByteArray())) + "-" + parts.size() + '"';
    }

    public static String md5Base64(byte[] data) {
        return b64(digest("MD5", data));
    }

    public static String crc32(byte[] data) {
        CRC32 c = new CRC32();
        c.update(data);
        return b64(ByteBuffer.allocate(4).putInt((int) c.getValue()).array());
    }

    public static String crc32c(byte[] data) {
        CRC32C c = new CRC32C();
        c.update(data);
        return b64(ByteBuffer.allocate(4).putInt((int) c.getValue()).array());
    }

    public static long crc64nvmeValue(byte[] data) {
        long crc = -1L;
        for (byte b : data) {
            crc = CRC64NVME_TABLE[(int) ((crc ^ b) & 0xff)] ^ (crc >>> 8);
        }
        return ~crc;
    }

    public static String crc64nvme(byte[] data) {
        return b64(ByteBuffer.allocate(8).putLong(crc64nvmeValue(data)).array());
    }

    public static String sha1(byte[] data) {
        return b64(digest("SHA-1", data));
    }

    public static String sha256(byte[] data) {
        return b64(digest("SHA-256", data));
    }

    /**
     * S3's composite checksum of a multipart object: the checksum (named as in {@link #checksum}) of the
     * concatenated raw checksums of the parts, then {@code -N}.
     */
    public static String composite(String algorithm, List<byte[]> parts) {
        ByteArrayOutputStream raw = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            raw.writeBytes(Base64.getDecoder().decode(checksum(algorithm, p)));
        }
        return checksum(algorithm, raw.toByteArray()) + "-" + parts.size();
    }

    /** The checksum of {@code data} named like the SDK's ChecksumAlgorithm ({@code CRC32}, ...), base64. */
    public static String checksum(String algorithm, byte[] data) {
        return switch (algorithm) {
            case "CRC32" -> crc32(data);
            case "CRC32C" -> crc32c(data);
            case "CRC64NVME" -> crc64nvme(data);
            case "SHA1" -> sha1(data);
            case "SHA256" -> sha256(data);
            default -> throw new IllegalArgumentException(algorithm);
        };
    }

    public static byte[] digest(String algorithm, byte[] data) {
        try {
            return MessageDigest.getInstance(algorithm).digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    public static String b64(byte[] b) {
        return Base64.getEncoder().encodeToString(b);
    }

    /** {@code n} pseudo-random bytes from {@code seed}. */
    public static byte[] bytes(long seed, int n) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    public static byte[] concat(List<byte[]> parts) {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        parts.forEach(all::writeBytes);
        return all.toByteArray();
    }
}
