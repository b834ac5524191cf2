package io.hayloft.client;

import io.hayloft.format.wire.PhotoId;

/**
 * A stored photo: its id (logical volume, key, alternate key, cookie; keep it, the cookie is needed
 * to read) and a direct URL on one replica. Reads through {@link HayloftClient#get(PhotoId)} choose
 * the replica (or cache) the directory prefers and fail over; the URL is for handing to others.
 */
public record PutResult(PhotoId id, String url) {
}
