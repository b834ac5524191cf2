package io.hayloft.format.s3;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;

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
 * @param inline       the data itself, for a small object kept in the directory instead of in needles
 *                     (docs/s3.md "Small objects inline"): then {@code chunks} is empty and the array holds
 *                     {@code size} bytes; null for an object of chunks (and for a listing's records). In
 *                     JSON, base64, and absent when null, so a record without it reads as before
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record ObjectRecord(String bucket, String key, long size, String etag, List<Chunk> chunks, List<Long> partSizes,
                           Map<String, String> checksums, String checksumType, String contentType,
                           Map<String, String> headers, Map<String, String> metadata, long modified,
                           @JsonInclude(JsonInclude.Include.NON_NULL) byte[] inline) {
    public ObjectRecord {
        chunks = chunks == null ? List.of() : List.copyOf(chunks);
        partSizes = partSizes == null ? List.of() : List.copyOf(partSizes);
        checksums = checksums == null ? Map.of() : Map.copyOf(checksums);
        headers = headers == null ? Map.of() : Map.copyOf(headers);
        metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
    }

    /** An object of chunks (no inline data). */
    public ObjectRecord(String bucket, String key, long size, String etag, List<Chunk> chunks, List<Long> partSizes,
                        Map<String, String> checksums, String checksumType, String contentType,
                        Map<String, String> headers, Map<String, String> metadata, long modified) {
        this(bucket, key, size, etag, chunks, partSizes, checksums, checksumType, contentType, headers, metadata, modified, null);
    }

    /** The same object with another modification time (the leader stamps it at commit). */
    public ObjectRecord withModified(long when) {
        return new ObjectRecord(bucket, key, size, etag, chunks, partSizes, checksums, checksumType, contentType, headers,
                metadata, when, inline);
    }

    /** The same object with {@code data} as its inline data (null: without). */
    public ObjectRecord withInline(byte[] data) {
        return new ObjectRecord(bucket, key, size, etag, chunks, partSizes, checksums, checksumType, contentType, headers,
                metadata, modified, data);
    }

    /** Whether the data is kept inline: a non-empty object without chunks. */
    public boolean inlined() {
        return size > 0 && chunks.isEmpty();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ObjectRecord r && size == r.size && modified == r.modified && Objects.equals(bucket, r.bucket)
                && Objects.equals(key, r.key) && Objects.equals(etag, r.etag) && chunks.equals(r.chunks)
                && partSizes.equals(r.partSizes) && checksums.equals(r.checksums) && Objects.equals(checksumType, r.checksumType)
                && Objects.equals(contentType, r.contentType) && headers.equals(r.headers) && metadata.equals(r.metadata)
                && Arrays.equals(inline, r.inline);
    }

    @Override
    public int hashCode() {
        return Objects.hash(bucket, key, size, etag, chunks, modified) * 31 + Arrays.hashCode(inline);
    }

    @Override
    public String toString() {
        return "ObjectRecord[bucket=" + bucket + ", key=" + key + ", size=" + size + ", etag=" + etag + ", chunks=" + chunks
                + ", partSizes=" + partSizes + ", modified=" + modified + (inline == null ? "" : ", inline=" + inline.length + " bytes") + "]";
    }
}
