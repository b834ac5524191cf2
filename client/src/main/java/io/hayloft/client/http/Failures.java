package io.hayloft.client.http;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.client.Futures;
import io.hayloft.client.LeaderHint;
import io.hayloft.client.RemoteException;
import io.hayloft.client.RemoteException.Kind;
import io.hayloft.format.errors.DirectoryErrors;
import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.ProtocolException;
import java.net.UnknownHostException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeoutException;
import org.apache.hc.client5.http.ClientProtocolException;
import org.apache.hc.client5.http.ConnectTimeoutException;
import org.apache.hc.core5.http.ConnectionClosedException;
import org.apache.hc.core5.http.HttpException;
import org.apache.hc.core5.http.MalformedChunkCodingException;
import org.apache.hc.core5.http.MessageConstraintException;
import org.apache.hc.core5.http.NoHttpResponseException;

/**
 * What kind of failure a call met, decided by the exception's TYPE and by how far the exchange had
 * come (whether the answer's status line and headers had arrived), never by its message text; and the
 * exceptions of the caller's type ({@link HttpTransport.ErrorFactory}) built from failures, error
 * answers and bodies that do not parse.
 *
 * <table>
 *   <caption>Kinds by exception type, for the three engines</caption>
 *   <tr><th>Thrown</th><th>Kind</th><th>Sent?</th></tr>
 *   <tr><td>{@link HttpConnectTimeoutException} (java.net.http), {@link ConnectTimeoutException} (HttpClient 5)</td>
 *       <td>TIMEOUT</td><td>no</td></tr>
 *   <tr><td>{@link HttpTimeoutException}, {@link InterruptedIOException} (socket timeout, no pooled connection in time,
 *       a cancelled request), {@link TimeoutException}</td><td>TIMEOUT</td><td>yes</td></tr>
 *   <tr><td>{@link ConnectException} (refused; HttpClient 5's {@code HttpHostConnectException}), {@link NoRouteToHostException},
 *       {@link UnknownHostException}, {@link UnresolvedAddressException}</td><td>UNREACHABLE</td><td>no</td></tr>
 *   <tr><td>{@link ProtocolException} (java.net.http: invalid status line or headers), {@link HttpException},
 *       {@link ClientProtocolException}, {@link MessageConstraintException}, {@link MalformedChunkCodingException}
 *       (a broken or truncated chunk)</td><td>BAD_RESPONSE</td><td>yes</td></tr>
 *   <tr><td>{@link NoHttpResponseException} (HttpClient 5: closed before any answer), {@link ClosedChannelException}</td>
 *       <td>UNREACHABLE</td><td>yes</td></tr>
 *   <tr><td>{@link ConnectionClosedException}, {@link EOFException} and any other {@link IOException} (java.net.http
 *       reports a body shorter than its {@code Content-Length} as a plain {@code IOException})</td>
 *       <td>BAD_RESPONSE once the answer had begun (a truncated answer), else UNREACHABLE (the connection broke)</td>
 *       <td>yes</td></tr>
 * </table>
 *
 * <p>Thread-safe (stateless).
 */
final class Failures {
    private static final int SNIPPET = 120;
    /** 421 Misdirected Request: a directory replica that is not the leader (its {@code NOT_LEADER}). */
    static final int NOT_LEADER_STATUS = 421;

    private Failures() {
    }

    /**
     * Whether a failure means the request never left this process (no connection was made): then any
     * request may be tried again, at another address. By type: a connection refused, a host
     * unreachable or unknown, a connect timeout; a {@link RemoteException} by its cause.
     */
    static boolean neverSent(Throwable t) {
        Throwable c = Futures.unwrap(t);
        if (c instanceof RemoteException r) {
            if (r.kind() != Kind.UNREACHABLE && r.kind() != Kind.TIMEOUT) {
                return false;
            }
            c = r.getCause();
        }
        return c instanceof ConnectException || c instanceof NoRouteToHostException || c instanceof UnknownHostException
                || c instanceof UnresolvedAddressException || c instanceof HttpConnectTimeoutException
                || c instanceof ConnectTimeoutException;
    }

    /** The kind of a failure; {@code answerStarted}: the answer's status line and headers had arrived. */
    static Kind kind(Throwable c, boolean answerStarted) {
        if (c instanceof HttpTimeoutException || c instanceof InterruptedIOException || c instanceof TimeoutException) {
            return Kind.TIMEOUT;
        }
        if (c instanceof ConnectException || c instanceof NoRouteToHostException || c instanceof UnknownHostException
                || c instanceof UnresolvedAddressException || c instanceof ClosedChannelException
                || c instanceof NoHttpResponseException) {
            return Kind.UNREACHABLE;
        }
        if (c instanceof ProtocolException || c instanceof HttpException || c instanceof ClientProtocolException
                || c instanceof MessageConstraintException || c instanceof MalformedChunkCodingException) {
            return Kind.BAD_RESPONSE;
        }
        if (c instanceof IOException) { // ConnectionClosedException, EOFException, java.net.http's short body...
            return answerStarted ? Kind.BAD_RESPONSE : Kind.UNREACHABLE;
        }
        return Kind.BAD_RESPONSE;
    }

    /** Maps an exception from an engine to the caller's exception, classified by {@link #kind}. */
    static RemoteException failure(String server, String what, Throwable t, boolean answerStarted,
                                   HttpTransport.ErrorFactory errors) {
        Throwable c = Futures.unwrap(t);
        if (c instanceof RemoteException r) {
            return r;
        }
        Kind kind = kind(c, answerStarted);
        String m = c.getMessage();
        String why = switch (kind) {
            case TIMEOUT -> "timed out (" + c.getClass().getSimpleName() + ": " + m + ")";
            case UNREACHABLE -> (neverSent(c) ? "cannot connect (" : "connection failed (") + c.getClass().getSimpleName()
                    + ": " + m + ")";
            case BAD_RESPONSE -> c instanceof IOException
                    ? "answered an invalid or truncated HTTP response (" + c.getClass().getSimpleName() + ": " + m + ")"
                    : "call failed (" + c + ")";
            case ERROR -> "failed (" + c + ")";
        };
        return errors.create(server, kind, 0, 0, null, null, server + ": " + what + " " + why, c);
    }

    /** The exception for a non-success answer: the JSON error body's fields, or BAD_RESPONSE when it has none. */
    static RemoteException errorAnswer(String server, String what, int status, byte[] body, HttpTransport.ErrorFactory errors) {
        return errorAnswer(server, what, status, body, null, errors);
    }

    /**
     * {@link #errorAnswer(String, String, int, byte[], HttpTransport.ErrorFactory)} with the answer's
     * {@value HttpTransport#LEADER_HEADER} header (null when absent): a directory replica's 421
     * {@code NOT_LEADER} that names the leader (in its error body's {@code leader} field, else in the
     * header) gives an exception whose cause is a {@link LeaderHint} ({@link RemoteException#leader()}).
     */
    static RemoteException errorAnswer(String server, String what, int status, byte[] body, String leaderHeader,
                                       HttpTransport.ErrorFactory errors) {
        JsonNode err;
        try {
            JsonNode root = body == null || body.length == 0 ? null : HttpTransport.JSON.readTree(body);
            err = root == null ? null : root.get("error");
        } catch (IOException | RuntimeException e) {
            err = null;
        }
        if (err != null && err.isObject() && err.path("code").isInt()) {
            int code = err.get("code").asInt();
            String name = err.path("name").asText(null);
            String msg = err.path("message").asText(null);
            String leader = status == NOT_LEADER_STATUS || code == DirectoryErrors.NOT_LEADER.code()
                    ? leader(err.path("leader").isTextual() ? err.get("leader").asText() : leaderHeader) : null;
            return errors.create(server, Kind.ERROR, status, code, name, msg,
                    server + ": " + what + " failed: " + status + " " + name + " (" + code + "): " + msg
                            + (leader == null ? "" : " [leader: " + leader + "]"), leader == null ? null : new LeaderHint(leader));
        }
        return errors.create(server, Kind.BAD_RESPONSE, status, 0, null, null,
                server + ": " + what + " answered " + status + " without a Hayloft error body; body starts '"
                        + snippet(body) + "'", null);
    }

    /**
     * Whether an answer is a replicated directory's refusal for want of a leader: 421 (not the
     * leader) or 503 with the error code {@code NO_LEADER} (only a 503's body is parsed).
     */
    static boolean leaderAnswer(int status, byte[] body) {
        if (status == NOT_LEADER_STATUS) {
            return true;
        }
        if (status != 503 || body == null || body.length == 0) {
            return false;
        }
        try {
            JsonNode root = HttpTransport.JSON.readTree(body);
            return root != null && root.path("error").path("code").asInt() == DirectoryErrors.NO_LEADER.code();
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** A leader's address as a replica named it, when it is a plausible {@code host:port}; else null. */
    static String leader(String named) {
        if (named == null) {
            return null;
        }
        String s = named.trim();
        int colon = s.lastIndexOf(':');
        if (colon <= 0 || colon == s.length() - 1 || colon < s.length() - 6 || s.contains("/") || s.contains(" ")
                || !s.substring(colon + 1).chars().allMatch(Character::isDigit)) {
            return null;
        }
        int port = Integer.parseInt(s.substring(colon + 1));
        return port >= 1 && port <= 65535 ? s : null;
    }

    /** Parses a JSON answer, or fails with a {@link Kind#BAD_RESPONSE} error naming the server. */
    static <T> T json(String server, String what, byte[] body, Class<T> type, HttpTransport.ErrorFactory errors) {
        return json(server, what, body, HttpTransport.JSON.getTypeFactory().constructType(type), errors);
    }

    /** {@link #json(String, String, byte[], Class, HttpTransport.ErrorFactory)} for generic types. */
    static <T> T json(String server, String what, byte[] body, TypeReference<T> type, HttpTransport.ErrorFactory errors) {
        return json(server, what, body, HttpTransport.JSON.getTypeFactory().constructType(type), errors);
    }

    private static <T> T json(String server, String what, byte[] body, JavaType type, HttpTransport.ErrorFactory errors) {
        try {
            T v = HttpTransport.JSON.readValue(body, type);
            if (v == null) {
                throw new IOException("empty body");
            }
            return v;
        } catch (IOException | RuntimeException e) {
            throw errors.create(server, Kind.BAD_RESPONSE, 200, 0, null, null,
                    server + ": " + what + " answered a body that is not the expected JSON (" + type.getRawClass().getSimpleName()
                            + "): " + firstLine(e) + "; body starts '" + snippet(body) + "'", e);
        }
    }

    /** The first line of an exception's message (Jackson's go on with the source location). */
    private static String firstLine(Throwable e) {
        String m = String.valueOf(e.getMessage());
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }

    /** The first bytes of a body as printable text, for error messages. */
    static String snippet(byte[] body) {
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
}
