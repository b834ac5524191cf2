package io.hayloft.serverkit.http;

/**
 * Limits that protect a server from its clients: the longest request line, the largest header
 * block, the largest body, how many requests may be in flight at once, and how long a connection
 * may sit idle (or in the middle of a request) before it is answered 408 and closed.
 *
 * @param maxInitialLineLength bytes in the request line, e.g. 4096
 * @param maxHeaderSize bytes in all header lines together, e.g. 8192
 * @param maxBodyBytes bytes in one request body
 * @param maxConcurrentRequests requests being processed at once across the server; more get 503
 * @param idleTimeoutMillis read idle time before a connection is closed (408 if a request was partial)
 */
public record HttpLimits(int maxInitialLineLength, int maxHeaderSize, int maxBodyBytes, int maxConcurrentRequests,
                         int idleTimeoutMillis) {
    public HttpLimits {
        positive("maxInitialLineLength", maxInitialLineLength);
        positive("maxHeaderSize", maxHeaderSize);
        positive("maxBodyBytes", maxBodyBytes);
        positive("maxConcurrentRequests", maxConcurrentRequests);
        positive("idleTimeoutMillis", idleTimeoutMillis);
    }

    private static void positive(String name, int v) {
        if (v <= 0) {
            throw new IllegalArgumentException(name + " must be positive, got " + v);
        }
    }

    /** 4 KiB line, 8 KiB headers, 64 MiB body, 1024 requests, 60 s idle. */
    public static HttpLimits defaults() {
        return new HttpLimits(4096, 8192, 64 << 20, 1024, 60_000);
    }
}
