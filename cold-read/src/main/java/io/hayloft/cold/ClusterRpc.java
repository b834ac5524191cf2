package io.hayloft.cold;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

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
     * The addresses of one service that several servers answer (the directory's), as a failover list:
     * the transport remembers which answered last and starts there. Keep the one list a component
     * uses for all its calls to that service.
     */
    interface Servers {
        /** The addresses, {@code host:port}, in order of preference. */
        List<String> addresses();
    }

    /** The failover list of {@code addresses} (at least one). */
    Servers servers(List<String> addresses);

    /**
     * As {@link #send(String, String, HttpRequest, boolean, Duration)} over a failover list: an
     * address that cannot be reached (or that broke off a request that may be repeated) passes the
     * call to the next one, within the one deadline.
     *
     * @param request builds the request for an address
     */
    CompletableFuture<HttpResponse<byte[]>> send(Servers servers, String what, Function<String, HttpRequest> request,
                                                 boolean idempotent, Duration deadline);

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

    /** The status and body of an answer to a {@link StreamedRequest}. */
    record Answer(int status, byte[] body) {
    }

    /**
     * A request whose body the caller writes as it produces it ({@link #openRequest}): {@link #body}
     * (blocking while the server or the network is slower than the caller: TCP backpressure), then
     * {@link #finish} for the answer. {@link #close} without a finish drops the connection, so the
     * server sees the body cut short. Used by one thread at a time.
     */
    interface StreamedRequest extends Closeable {
        /** Where the body goes; write exactly the length given to {@link #openRequest} (any length, when chunked). */
        OutputStream body() throws IOException;

        /**
         * Ends the body and waits for the answer, whatever its status.
         *
         * @param trailers trailer fields of a chunked body (e.g. a checksum known only now); ignored otherwise
         * @throws IOException no answer (the connection failed, a timeout), or the body was shorter than its length
         */
        Answer finish(Map<String, String> trailers) throws IOException;

        /** Drops the request unless it finished. Idempotent. */
        @Override
        void close();
    }

    /**
     * Starts {@code method pathAndQuery} on {@code server} with a body the caller streams: of
     * {@code length} bytes ({@code Content-Length}), or chunked when {@code length} is -1 (then
     * {@link StreamedRequest#finish} may add trailers). Never retried (the body cannot be replayed).
     *
     * @throws IOException no connection
     * @throws UnsupportedOperationException from a transport that cannot stream request bodies (the
     *                                       caller falls back to whole-body requests)
     */
    default StreamedRequest openRequest(String server, String what, String method, String pathAndQuery,
                                        Map<String, String> headers, long length) throws IOException {
        throw new UnsupportedOperationException("this transport does not stream request bodies");
    }
}
