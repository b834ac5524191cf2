package io.hayloft.client.http;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.client.RemoteException;
import io.hayloft.client.RemoteException.Kind;
import java.io.IOException;
import java.net.ConnectException;
import java.net.ProtocolException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.IntPredicate;
import javax.net.ssl.SSLContext;

/**
 * The HTTP plumbing shared by the store and directory clients, on {@link java.net.http.HttpClient}
 * (HTTP/1.1, pooled keep-alive connections, connect and per-request timeouts, no Netty). It builds
 * URLs from {@code host:port} addresses ({@code http://}, or {@code https://} when built with an
 * {@link SSLContext}), sends requests asynchronously, and turns every way a call can fail into a
 * {@link RemoteException} of the caller's type: an error answer (status, code, name and message
 * from the JSON error body), no connection, a timeout, or an answer that is not valid (a non-JSON
 * error body, a body shorter than its {@code Content-Length}, an invalid status line, JSON that does
 * not parse).
 *
 * <p>Futures complete on the transport's executor (the {@link HttpClient}'s default pool unless one
 * is given), never on the caller's thread, so callers on event loops are not blocked.
 *
 * <p>Thread-safe: one instance is meant to be shared by every call of an application.
 */
public final class HttpTransport {
    /** The JSON mapper of the client: ignores unknown fields (either side may add fields). */
    public static final ObjectMapper JSON = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

    private static final int SNIPPET = 120;

    /** Builds the caller's exception type (store or directory) for a failed call. */
    @FunctionalInterface
    public interface ErrorFactory {
        RemoteException create(String server, Kind kind, int httpStatus, int code, String errorName,
                               String serverMessage, String message, Throwable cause);
    }

    private final HttpClient http;
    private final String scheme;
    private final Duration requestTimeout;

    private HttpTransport(Builder b) {
        HttpClient.Builder hb = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(b.connectTimeout)
                .followRedirects(HttpClient.Redirect.NEVER);
        if (b.executor != null) {
            hb.executor(b.executor);
        }
        if (b.sslContext != null) {
            hb.sslContext(b.sslContext);
        }
        this.http = hb.build();
        this.scheme = b.sslContext == null ? "http" : "https";
        this.requestTimeout = b.requestTimeout;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A transport with the default timeouts (connect 2 s, request 10 s) over plain HTTP. */
    public static HttpTransport create() {
        return builder().build();
    }

    /** {@code http} or {@code https}. */
    public String scheme() {
        return scheme;
    }

    public Duration requestTimeout() {
        return requestTimeout;
    }

    /**
     * The URI of {@code pathAndQuery} on a server given as {@code host:port} or as a URL prefix
     * ({@code http://host:port}, as in a lookup's {@code readFrom}).
     *
     * @throws IllegalArgumentException naming the bad address
     */
    public URI uri(String server, String pathAndQuery) {
        String base = baseUrl(server);
        try {
            return URI.create(base + pathAndQuery);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("bad server address '" + server + "': " + e.getMessage(), e);
        }
    }

    /** {@code scheme://host:port} for an address, or the prefix itself (trailing slashes removed). */
    public String baseUrl(String server) {
        if (server == null || server.isBlank()) {
            throw new IllegalArgumentException("server address is missing");
        }
        String s = server.trim();
        if (s.contains("://")) {
            while (s.endsWith("/")) {
                s = s.substring(0, s.length() - 1);
            }
            return s;
        }
        int colon = s.lastIndexOf(':');
        if (colon <= 0 || colon == s.length() - 1 || !s.substring(colon + 1).chars().allMatch(Character::isDigit)) {
            throw new IllegalArgumentException("bad server address '" + server + "': expected host:port");
        }
        int port = Integer.parseInt(s.substring(colon + 1).length() > 5 ? "99999" : s.substring(colon + 1));
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("bad server address '" + server + "': port must be in 1..65535");
        }
        return scheme + "://" + s;
    }

    /** A request builder for {@code uri} with the transport's request timeout. */
    public HttpRequest.Builder request(URI uri) {
        return HttpRequest.newBuilder(uri).timeout(requestTimeout);
    }

    /**
     * Sends {@code request} and completes with the response when its status satisfies {@code ok};
     * otherwise fails with the error {@code errors} builds.
     *
     * @param what the call in words for error messages, e.g. {@code "PUT /3/7/0"}
     */
    public CompletableFuture<HttpResponse<byte[]>> send(String server, String what, HttpRequest request, IntPredicate ok,
                                                        ErrorFactory errors) {
        CompletableFuture<HttpResponse<byte[]>> sent;
        try {
            sent = http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray());
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(
                    errors.create(server, Kind.UNREACHABLE, 0, 0, null, null, server + ": " + what + " could not be sent: " + e, e));
        }
        return sent.handle((resp, t) -> {
            if (t != null) {
                throw failure(server, what, t, errors);
            }
            if (!ok.test(resp.statusCode())) {
                throw errorAnswer(server, what, resp.statusCode(), resp.body(), errors);
            }
            return resp;
        });
    }

    /** Sends a request whose body is streamed back to the caller; only the status is checked here. */
    public <T> CompletableFuture<HttpResponse<T>> sendRaw(String server, String what, HttpRequest request,
                                                          HttpResponse.BodyHandler<T> handler, ErrorFactory errors) {
        CompletableFuture<HttpResponse<T>> sent;
        try {
            sent = http.sendAsync(request, handler);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(
                    errors.create(server, Kind.UNREACHABLE, 0, 0, null, null, server + ": " + what + " could not be sent: " + e, e));
        }
        return sent.handle((resp, t) -> {
            if (t != null) {
                throw failure(server, what, t, errors);
            }
            return resp;
        });
    }

    /** Parses a JSON answer, or fails with a {@link Kind#BAD_RESPONSE} error naming the server. */
    public <T> T json(String server, String what, byte[] body, Class<T> type, ErrorFactory errors) {
        try {
            T v = JSON.readValue(body, type);
            if (v == null) {
                throw new IOException("empty body");
            }
            return v;
        } catch (IOException | RuntimeException e) {
            throw errors.create(server, Kind.BAD_RESPONSE, 200, 0, null, null,
                    server + ": " + what + " answered a body that is not the expected JSON (" + type.getSimpleName() + "): "
                            + shortMessage(e) + "; body starts '" + snippet(body) + "'", e);
        }
    }

    /** Like {@link #json(String, String, byte[], Class, ErrorFactory)} for generic types. */
    public <T> T json(String server, String what, byte[] body, TypeReference<T> type, ErrorFactory errors) {
        try {
            T v = JSON.readValue(body, type);
            if (v == null) {
                throw new IOException("empty body");
            }
            return v;
        } catch (IOException | RuntimeException e) {
            throw errors.create(server, Kind.BAD_RESPONSE, 200, 0, null, null,
                    server + ": " + what + " answered a body that is not the expected JSON: " + shortMessage(e)
                            + "; body starts '" + snippet(body) + "'", e);
        }
    }

    /** The exception for a non-success answer: the JSON error body's fields, or BAD_RESPONSE when it has none. */
    public static RemoteException errorAnswer(String server, String what, int status, byte[] body, ErrorFactory errors) {
        JsonNode err = null;
        try {
            JsonNode root = body == null || body.length == 0 ? null : JSON.readTree(body);
            err = root == null ? null : root.get("error");
        } catch (IOException | RuntimeException e) {
            err = null;
        }
        if (err != null && err.isObject() && err.path("code").isInt()) {
            int code = err.get("code").asInt();
            String name = err.path("name").asText(null);
            String msg = err.path("message").asText(null);
            return errors.create(server, Kind.ERROR, status, code, name, msg,
                    server + ": " + what + " failed: " + status + " " + name + " (" + code + "): " + msg, null);
        }
        return errors.create(server, Kind.BAD_RESPONSE, status, 0, null, null,
                server + ": " + what + " answered " + status + " without a Hayloft error body; body starts '"
                        + snippet(body) + "'", null);
    }

    /** Maps an exception from the HTTP stack (connect, timeout, protocol) to the caller's exception. */
    public static RemoteException failure(String server, String what, Throwable t, ErrorFactory errors) {
        Throwable c = io.hayloft.client.Futures.unwrap(t);
        if (c instanceof RemoteException r) {
            return r;
        }
        Kind kind;
        String why;
        String m = String.valueOf(c.getMessage());
        if (c instanceof HttpTimeoutException) {
            kind = Kind.TIMEOUT;
            why = "timed out (" + m + ")";
        } else if (c instanceof ConnectException || c instanceof ClosedChannelException) {
            kind = Kind.UNREACHABLE;
            why = "cannot connect (" + c.getClass().getSimpleName() + ": " + m + ")";
        } else if (c instanceof ProtocolException
                || m.toLowerCase(Locale.ROOT).contains("content-length") || m.contains("bytes received")) {
            kind = Kind.BAD_RESPONSE;
            why = "answered an invalid or truncated HTTP response (" + m + ")";
        } else if (c instanceof IOException) {
            kind = Kind.UNREACHABLE;
            why = "connection failed (" + c.getClass().getSimpleName() + ": " + m + ")";
        } else {
            kind = Kind.BAD_RESPONSE;
            why = "call failed (" + c + ")";
        }
        return errors.create(server, kind, 0, 0, null, null, server + ": " + what + " " + why, c);
    }

    private static String shortMessage(Throwable e) {
        String m = String.valueOf(e.getMessage());
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }

    /** The first bytes of a body as printable text, for error messages. */
    public static String snippet(byte[] body) {
        if (body == null || body.length == 0) {
            return "";
        }
        String s = new String(body, 0, Math.min(body.length, SNIPPET), StandardCharsets.UTF_8);
        StringBuilder out = new StringBuilder(s.length());
        for (char ch : s.toCharArray()) {
            out.append(ch >= 0x20 && ch < 0x7f ? ch : '.');
        }
        return body.length > SNIPPET ? out + "..." : out.toString();
    }

    /**
     * Options of a transport. Defaults: connect timeout 2 s, request timeout 10 s (time to the whole
     * answer), the {@link HttpClient}'s own executor, plain HTTP.
     */
    public static final class Builder {
        private Duration connectTimeout = Duration.ofSeconds(2);
        private Duration requestTimeout = Duration.ofSeconds(10);
        private Executor executor;
        private SSLContext sslContext;

        private Builder() {
        }

        public Builder connectTimeout(Duration d) {
            this.connectTimeout = positive(d, "connectTimeout");
            return this;
        }

        public Builder requestTimeout(Duration d) {
            this.requestTimeout = positive(d, "requestTimeout");
            return this;
        }

        /** Where responses are handled and futures complete; must not be an event loop. */
        public Builder executor(Executor e) {
            this.executor = Objects.requireNonNull(e, "executor");
            return this;
        }

        /** Use {@code https://} with this context (the hook for TLS-enabled servers). */
        public Builder sslContext(SSLContext c) {
            this.sslContext = Objects.requireNonNull(c, "sslContext");
            return this;
        }

        public HttpTransport build() {
            return new HttpTransport(this);
        }

        private static Duration positive(Duration d, String name) {
            if (d == null || d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + " must be positive, got " + d);
            }
            return d;
        }
    }
}
