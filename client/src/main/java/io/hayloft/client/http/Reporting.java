package io.hayloft.client.http;

import io.hayloft.client.RemoteException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A transport's reports of its attempts and retries to its {@link HttpTransport.Listener}, shared by
 * its engines; counts the retries. A listener that throws does not break a call.
 *
 * <p>Thread-safe.
 */
final class Reporting {
    private final HttpTransport.Listener listener;
    private final AtomicLong retries = new AtomicLong();

    Reporting(HttpTransport.Listener listener) {
        this.listener = listener;
    }

    /** One attempt ended: an answer with {@code status}, or no answer ({@code status} 0 and the failure). */
    void report(String server, String method, int status, RemoteException failure, long nanos) {
        try {
            listener.onRequest(server, method, status, failure, nanos);
        } catch (RuntimeException e) {
            // a listener must not break a call
        }
    }

    /** A retry is being sent now (counted here, when it really is: a backoff that overslept the deadline sends nothing). */
    void retry(String server, String method, int attempt, Duration waited) {
        retries.incrementAndGet();
        try {
            listener.onRetry(server, method, attempt, waited);
        } catch (RuntimeException e) {
            // a listener must not break a call
        }
    }

    long retries() {
        return retries.get();
    }
}
