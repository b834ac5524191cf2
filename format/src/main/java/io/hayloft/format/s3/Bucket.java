package io.hayloft.format.s3;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * A bucket: its name (S3's rules: 3 to 63 characters of a-z, 0-9, '.', '-'), when it was created, its
 * region (the gateway's, recorded at creation) and its running totals, kept by every change of its
 * objects. Immutable; thread-safe.
 *
 * @param created epoch milliseconds (the directory leader's clock)
 * @param objects objects in the bucket now
 * @param bytes   bytes of those objects
 * @param uploads multipart uploads in progress
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record Bucket(String name, long created, String region, long objects, long bytes, long uploads) {
}
