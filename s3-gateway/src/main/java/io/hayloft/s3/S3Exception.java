package io.hayloft.s3;

/**
 * A request the gateway refuses: answered as S3's XML error body with the error's code and status,
 * {@link #getMessage()} as {@code <Message>} (never a secret), and the request id.
 */
public final class S3Exception extends RuntimeException {
    private final S3Error error;

    public S3Exception(S3Error error, String message) {
        super(message, null, false, false);
        this.error = error;
    }

    public S3Error error() {
        return error;
    }
}
