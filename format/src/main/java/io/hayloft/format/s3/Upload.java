package io.hayloft.format.s3;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.Map;

/**
 * A multipart upload in progress: what CreateMultipartUpload fixed for the object it will become.
 * Immutable; thread-safe.
 *
 * @param uploadId          the id the directory gave it (opaque to clients, URL-safe)
 * @param initiated         epoch milliseconds (the directory leader's clock)
 * @param checksumAlgorithm {@code x-amz-checksum-algorithm} given at creation, or null
 * @param checksumType      {@code FULL_OBJECT} or {@code COMPOSITE} when an algorithm is given, else null
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record Upload(String bucket, String key, String uploadId, long initiated, String contentType,
                     Map<String, String> headers, Map<String, String> metadata, String checksumAlgorithm,
                     String checksumType) {
    public Upload {
        headers = headers == null ? Map.of() : Map.copyOf(headers);
        metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
    }
}
