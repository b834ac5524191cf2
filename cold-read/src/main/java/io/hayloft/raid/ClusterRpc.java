package io.hayloft.raid;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * How {@link ClusterReads} (and the raid-node's {@code Cluster}) send their requests: the process's
 * one RPC transport, {@code io.hayloft.client.http.HttpTransport#clusterRpc()}, with its scheme
 * ({@code https://} when it has a trust store), client certificate, deadlines, retries and listener.
 * cold-read sits below the client (the client's cold reads use it), so it cannot name the transport;
 * it names this interface instead and the client implements it: the dependency points down.
 *
 * <p>Implementations are thread-safe.
 */
public interface ClusterRpc {

    /** {@code scheme://server} + {@code pathAndQuery}; {@code server} is {@code host:port}. */
    URI uri(String server, String pathAndQuery);

    /**
     * Sends {@code request}, completing with the answer whatever its status, or exceptionally when
     * there is none (no connection, a timeout past {@code deadline}, a broken answer).
     *
     * @param what       the call in words for error messages, e.g. {@code GET /v1/stores}
     * @param idempotent true when the request may be sent again after a failure (GETs always may)
     * @param deadline   time for the whole call, retries included
     */
    CompletableFuture<HttpResponse<byte[]>> send(String server, String what, HttpRequest request, boolean idempotent,
                                                 Duration deadline);

    /**
     * A GET whose 200 body is handed back as a stream once the status is known, for block ranges
     * read a window at a time. The caller closes it; closing it before its end drops the connection
     * instead of reading the rest. Each read waits at most the transport's request timeout.
     *
     * @throws IOException no answer, or a status other than 200 (the message names it)
     * @throws UnsupportedOperationException from a transport that cannot stream (the caller falls
     *                                       back to ranged reads)
     */
    default InputStream openStream(String server, String what, String pathAndQuery, Map<String, String> headers)
            throws IOException {
        throw new UnsupportedOperationException("this transport does not stream response bodies");
    }
}
