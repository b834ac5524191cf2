package io.hayloft.store.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.client.Futures;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.format.errors.ApiException;
import io.hayloft.format.errors.StoreErrors;
import io.hayloft.store.Store;
import io.hayloft.store.StoreOperationException.Reason;
import io.hayloft.store.StoreOperationException;
import io.hayloft.store.volume.Volume;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutionException;

/**
 * {@code POST /admin/volumes/<id>/pull?from=HOST:PORT}: this store copies a sealed replica from
 * another store through that store's {@code GET /admin/volumes/<id>} (size, sealed) and
 * {@code GET /volumes/<id>/raw} (bytes, {@link #CHUNK} per request), then opens it
 * ({@link Store#pull}). The drain job moves replicas with it (docs/raid.md "Drain").
 *
 * <p>Thread-safe: the store's shared {@link HttpTransport}.
 */
final class VolumePuller {
    /** Bytes per raw read from the source. */
    static final int CHUNK = 1 << 20;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private final HttpTransport http;

    /** @param http the store's transport ({@code https://} and its certificate when the store has a trust store) */
    VolumePuller(HttpTransport http) {
        this.http = http;
    }

    Volume.Status pull(Store store, long id, String from) throws IOException {
        if (from == null || !from.matches("[A-Za-z0-9.\\-\\[\\]:]+:[0-9]{1,5}")) {
            throw new ApiException(StoreErrors.BAD_ARGUMENT, "from must be the source store's host:port, got '" + from + "'");
        }
        JsonNode st = JSON.readTree(get(from, "/admin/volumes/" + id));
        if (!st.path("readOnly").asBoolean(false)) {
            throw new StoreOperationException(Reason.VOLUME_READ_ONLY, "volume " + id + " on " + from + " is writable; seal it before pulling it");
        }
        long size = st.path("sizeBytes").asLong(-1);
        return store.pull(id, size, CHUNK, (off, n) -> get(from, "/volumes/" + id + "/raw?offset=" + off + "&length=" + n)).status();
    }

    /** A GET on the transport (retried on connection failures within {@link #TIMEOUT}); 404 is VOLUME_NOT_FOUND. */
    private byte[] get(String address, String path) throws IOException {
        URI uri = http.uri(address, path);
        HttpResponse<byte[]> r;
        try {
            r = http.call(address, "GET " + path, http.request(uri).timeout(TIMEOUT).GET().build(), false, TIMEOUT,
                    s -> true, HttpTransport.TYPED).get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("GET " + uri + " interrupted", e);
        } catch (ExecutionException e) {
            Throwable c = Futures.unwrap(e);
            throw new IOException("pull: GET " + uri + " failed: " + c, c);
        }
        if (r.statusCode() == 404) {
            throw new StoreOperationException(Reason.VOLUME_NOT_FOUND, "pull: GET " + uri + " answered 404: "
                    + new String(r.body(), StandardCharsets.UTF_8));
        }
        if (r.statusCode() != 200) {
            throw new IOException("pull: GET " + uri + " answered " + r.statusCode() + ": " + new String(r.body(), StandardCharsets.UTF_8));
        }
        return r.body();
    }
}
