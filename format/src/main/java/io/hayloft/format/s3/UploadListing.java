package io.hayloft.format.s3;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import java.util.List;

/**
 * One page of a bucket's multipart uploads in progress, ordered by key then upload id, with common
 * prefixes at the delimiter. Immutable; thread-safe.
 *
 * @param nextKey      when truncated: key marker of the next page
 * @param nextUploadId when truncated: upload-id marker of the next page
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record UploadListing(List<Upload> uploads, List<String> commonPrefixes, boolean truncated, String nextKey,
                            String nextUploadId) {
    public UploadListing {
        uploads = uploads == null ? List.of() : List.copyOf(uploads);
        commonPrefixes = commonPrefixes == null ? List.of() : List.copyOf(commonPrefixes);
    }
}
