package io.hayloft.format.s3;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;
import java.util.Map;

/**
 * One object: its key, its bytes as a list of chunks, and what S3 returns about it. Immutable;
 * thread-safe.
 *
 * @param bucket       bucket name
 * @param key          object key (UTF-8, 1 to 1024 bytes)
 * @param size         bytes; the sum of the chunks' sizes (0: no chunk)
 * @param etag         the ETag without quotes: hex MD5 of the data, or {@code hexMD5(part MD5s)-N} for a multipart object
 * @param chunks       the data, in order
 * @param partSizes    sizes of the parts of a multipart object, in order (empty for a single PUT)
 * @param checksums    checksum algorithm name ({@code CRC32}, {@code CRC32C}, {@code CRC64NVME}, {@code SHA1},
 *                     {@code SHA256}) to its base64 value as S3 returns it (with {@code -N} for a composite one)
 * @param checksumType {@code FULL_OBJECT} or {@code COMPOSITE}; null when no checksum is stored
 * @param contentType  the Content-Type to answer
 * @param headers      other stored headers: Content-Encoding, Content-Disposition, Content-Language,
 *                     Cache-Control, Expires (names as S3 spells them)
 * @param metadata     user metadata: the {@code x-amz-meta-} names (lower case, without the prefix) to values
 * @param modified     Last-Modified, epoch milliseconds (the directory leader's clock)
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record ObjectRecord(String bucket, String key, long size, String etag, List<Chunk> chunks, List<Long> partSizes,
                           Map<String, String> checksums, String checksumType, String contentType,
                           Map<String, String> headers, Map<String, String> metadata, long modified) {
    public ObjectRecord {
        chunks = chunks == null ? List.of() : List.copyOf(chunks);
        partSizes = partSizes == null ? List.of() : List.copyOf(partSizes);
        checksums = checksums == null ? Map.of() : Map.copyOf(checksums);
        headers = headers == null ? Map.of() : Map.copyOf(headers);
        metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
    }

    /** The same object with another modification time (the leader stamps it at commit). */
    public ObjectRecord withModified(long when) {
        return new ObjectRecord(bucket, key, size, etag, chunks, partSizes, checksums, checksumType, contentType, headers,
                metadata, when);
    }
}
