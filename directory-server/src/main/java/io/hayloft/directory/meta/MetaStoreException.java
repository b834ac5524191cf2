package io.hayloft.directory.meta;

/** The directory's database is missing, corrupt, of an unknown format, or failed an operation. */
public final class MetaStoreException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public MetaStoreException(String message) {
        super(message);
    }

    public MetaStoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
