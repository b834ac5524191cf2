package io.hayloft.s3;

/**
 * An S3 gateway process: the HTTP server, the cluster client, the orphan sweep. Start with
 * {@link #start(S3Config)}; close to stop. Thread-safe.
 */
public final class S3Server implements AutoCloseable {

    /** Starts a gateway on a validated config; returns once it listens. */
    public static S3Server start(S3Config config) throws InterruptedException {
        throw new UnsupportedOperationException("todo: helper gateway");
    }

    /** The port it listens on. */
    public int port() {
        throw new UnsupportedOperationException("todo");
    }

    /** Runs the orphan sweep once now (also what {@code hayloft s3 sweep} does); returns needles deleted. */
    public long sweep() {
        throw new UnsupportedOperationException("todo");
    }

    @Override
    public void close() {
    }
}
