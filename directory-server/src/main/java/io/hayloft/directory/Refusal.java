package io.hayloft.directory;

/**
 * A request the directory's domain code ({@link Directory}, {@link HotPath}, {@link ColdTier},
 * {@link Namespace}, ...) refuses before it changes anything: the kind says why, the message says
 * what was wrong, for the caller. Domain code throws it and knows nothing of HTTP; the HTTP layer
 * ({@code DirectoryHttp.translate}) answers it with the wire error of its kind, the JSON error
 * object of docs/directory-api.md. Kinds are internal and may be split or renamed; the wire codes
 * they map to never change ({@code io.hayloft.format.errors}).
 */
public final class Refusal extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Why a request was refused. */
    public enum Kind {
        /** An argument is malformed or out of range (a name, a count, a key): the same request always fails. */
        INVALID
    }

    private final Kind kind;

    public Refusal(Kind kind, String message) {
        super(message);
        this.kind = kind;
    }

    /** A request with a malformed or out-of-range argument, as {@code message} says. */
    public static Refusal invalid(String message) {
        return new Refusal(Kind.INVALID, message);
    }

    public Kind kind() {
        return kind;
    }
}
