package io.hayloft.client;

import io.hayloft.format.wire.PhotoId;

/**
 * The photo does not exist: never written, deleted, or the id's cookie, volume or alternate key does
 * not match what the stores hold (a wrong cookie looks exactly like a missing photo, as on the
 * stores).
 *
 * <p>Immutable, hence thread-safe.
 */
public class PhotoNotFoundException extends HayloftException {
    private static final long serialVersionUID = 1L;

    private final transient PhotoId id;

    public PhotoNotFoundException(PhotoId id, String why) {
        super("photo " + id + " not found: " + why);
        this.id = id;
    }

    public PhotoId id() {
        return id;
    }
}
