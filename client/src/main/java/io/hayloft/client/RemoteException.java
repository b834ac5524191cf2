package io.hayloft.client;

/**
 * A call to a Hayloft server (a store or the directory) that did not succeed: the server answered
 * with an error, could not be reached, did not answer in time, or answered something that is not a
 * valid Hayloft response. It names the server, the HTTP status (0 when there was no answer), and the
 * stable error code, name and message from the server's JSON error body
 * {@code {"error":{"code":N,"name":"...","message":"..."}}} when there was one.
 *
 * <p>Immutable, hence thread-safe.
 */
public class RemoteException extends HayloftException {
    private static final long serialVersionUID = 1L;

    /** What went wrong, at the level a caller acts on. */
    public enum Kind {
        /** The server answered with a well-formed error (see {@link #code()}). */
        ERROR,
        /** No connection could be made, or it broke before the answer was complete. */
        UNREACHABLE,
        /** No complete answer within the timeout. */
        TIMEOUT,
        /** The server answered something that is not a valid response: garbage, wrong length, truncated. */
        BAD_RESPONSE
    }

    private final String server;
    private final Kind kind;
    private final int httpStatus;
    private final int code;
    private final String errorName;
    private final String serverMessage;

    public RemoteException(String server, Kind kind, int httpStatus, int code, String errorName, String serverMessage,
                           String message, Throwable cause) {
        super(message, cause);
        this.server = server;
        this.kind = kind;
        this.httpStatus = httpStatus;
        this.code = code;
        this.errorName = errorName;
        this.serverMessage = serverMessage;
    }

    /** The server's address ({@code host:port}) or URL prefix. */
    public String server() {
        return server;
    }

    public Kind kind() {
        return kind;
    }

    /** The HTTP status of the answer, 0 when there was none. */
    public int httpStatus() {
        return httpStatus;
    }

    /** The stable Hayloft error code from the error body, 0 when there was none. */
    public int code() {
        return code;
    }

    /** The error's name from the error body (e.g. {@code NEEDLE_NOT_FOUND}), null when there was none. */
    public String errorName() {
        return errorName;
    }

    /** The message from the error body, null when there was none. */
    public String serverMessage() {
        return serverMessage;
    }

    /**
     * The leader's HTTP address ({@code host:port}) when this is a directory replica's answer that it
     * is not its group's leader (421 {@code NOT_LEADER}) and it named the leader; else null. The
     * HTTP layer's retry policy goes there at once; callers seldom need it.
     */
    public String leader() {
        return getCause() instanceof LeaderHint h ? h.leader() : null;
    }

    /**
     * Whether trying again (the same server later, or another replica) may succeed: no answer, a
     * garbage answer, a timeout, overload (503), request timeout (408), too many requests (429), a
     * directory replica that is not the leader (421: another replica may take it) or an internal
     * server error (5xx). Other client errors (4xx) are not retryable.
     */
    public boolean isRetryable() {
        return kind != Kind.ERROR || httpStatus >= 500 || httpStatus == 408 || httpStatus == 429 || httpStatus == 421;
    }
}
