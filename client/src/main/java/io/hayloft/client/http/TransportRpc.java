package io.hayloft.client.http;

import io.hayloft.cold.ClusterRpc;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * A transport as cold-read's {@link ClusterRpc} ({@link HttpTransport#clusterRpc()}), so that a
 * process's cold reads, raid calls and stripe encodes share its one transport: whole-body calls on its
 * RPC engine with its {@link RetryPolicy} (every answer completes the future; the caller reads the
 * status), streams on its data engine. Failures are the transport's
 * {@link io.hayloft.client.RemoteException}s ({@link HttpTransport#TYPED}).
 *
 * <p>Thread-safe: no state of its own.
 */
final class TransportRpc implements ClusterRpc {
    private final HttpTransport t;

    TransportRpc(HttpTransport t) {
        this.t = t;
    }

    @Override
    public URI uri(String server, String pathAndQuery) {
        return t.uri(server, pathAndQuery);
    }

    @Override
    public CompletableFuture<HttpResponse<byte[]>> send(String server, String what, HttpRequest request, boolean idempotent,
                                                        Duration deadline) {
        return t.call(server, what, request, idempotent, deadline, s -> true, HttpTransport.TYPED);
    }

    @Override
    public Servers servers(List<String> addresses) {
        for (String a : addresses) {
            t.baseUrl(a); // names a bad address now
        }
        return AddressList.of(addresses);
    }

    @Override
    public CompletableFuture<HttpResponse<byte[]>> send(Servers servers, String what, Function<String, HttpRequest> request,
                                                        boolean idempotent, Duration deadline) {
        AddressList list = servers instanceof AddressList l ? l : AddressList.of(servers.addresses());
        return t.call(list, what, request, idempotent, deadline, s -> true, HttpTransport.TYPED);
    }

    @Override
    public InputStream openStream(String server, String what, String pathAndQuery, Map<String, String> headers)
            throws IOException {
        try {
            return t.openStream(server, what, pathAndQuery, headers, HttpTransport.TYPED);
        } catch (RuntimeException e) {
            throw new IOException(what + " on " + server + " failed: " + e.getMessage(), e);
        }
    }

    @Override
    public StreamedRequest openRequest(String server, String what, String method, String pathAndQuery,
                                       Map<String, String> headers, long length) {
        return t.openRequest(server, what, method, pathAndQuery, headers, length);
    }
}
