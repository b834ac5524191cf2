package io.hayloft.directory;

import io.hayloft.client.DirectoryClient;
import io.hayloft.directory.meta.LogEntry;
import io.hayloft.directory.meta.MetaStore;
import io.hayloft.format.errors.DirectoryErrors;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The client's request id ({@value #HEADER}) of the change being made on this thread, so that a
 * retried request applies once (docs/directory-api.md "Request ids"). The HTTP layer opens a scope for a
 * change that carries an id; the domain's last commit of the request ({@link ChangeLog.Writer#commit})
 * puts the id and the answer it is about to give into the same log entry as the change; the state
 * machine records both as it applies the change, and applies an entry whose id it recorded already as
 * nothing ({@link LogEntry.Outcome#REPEATED}). A retry that finds its id recorded is answered with the
 * recorded answer and changes nothing: a change checks for its id once it holds its latches
 * ({@link #checkNotApplied}), so one that waited behind its own first attempt stops there, and the
 * state machine's REPEATED outcome catches any other race ({@link #repeated}).
 *
 * <p>One scope per thread: not shared.
 */
final class RequestScope implements AutoCloseable {
    /** The header of a client's request id. */
    static final String HEADER = DirectoryClient.REQUEST_ID_HEADER;
    /** What a request id may be: 1 to 128 characters of letters, digits, '-', '_', '.', ':'. */
    static final Pattern ID = Pattern.compile("[A-Za-z0-9._:-]{1,128}");
    private static final ThreadLocal<RequestScope> CURRENT = new ThreadLocal<>();

    private final String id;
    private final Function<Object, String> render;
    private boolean used;
    private boolean repeated;

    private RequestScope(String id, Function<Object, String> render) {
        this.id = id;
        this.render = render;
    }

    /** Opens the scope of request {@code id} on this thread; {@code render} turns a domain answer into the answer's body. */
    static RequestScope open(String id, Function<Object, String> render) {
        if (CURRENT.get() != null) {
            throw new IllegalStateException("a request scope is open on this thread already");
        }
        RequestScope s = new RequestScope(id, render);
        CURRENT.set(s);
        return s;
    }

    /**
     * The request part of the entry of the request's answering commit: its id and {@code answer}
     * rendered; null outside a scope, and for a second answering commit of one request (only the first
     * carries the id, so a later commit of the same request is not taken for a repeat).
     */
    static LogEntry.Request request(Object answer) {
        RequestScope s = CURRENT.get();
        if (s == null || s.used) {
            return null;
        }
        s.used = true;
        return new LogEntry.Request(s.id, s.render.apply(answer));
    }

    /**
     * Throws REQUEST_REPEATED, marking this thread's request a repeat, when its id is recorded already;
     * nothing outside a scope. Called by a change holding its latches, after {@code begin()}: a ready
     * leader has applied every committed entry, and the latches order it after its first attempt.
     */
    static void checkNotApplied(MetaStore meta) {
        RequestScope s = CURRENT.get();
        if (s != null && !s.used && meta.requestAnswer(s.id) != null) {
            s.repeated = true;
            throw DirectoryErrors.REQUEST_REPEATED.exception("request " + s.id + " was applied already; nothing was changed again");
        }
    }

    /** Marks this thread's request as a repeat of one applied already (the state machine said REPEATED). */
    static void markRepeated() {
        RequestScope s = CURRENT.get();
        if (s != null) {
            s.repeated = true;
        }
    }

    String id() {
        return id;
    }

    /** Whether the request's change turned out to be a repeat: answer it with the recorded answer. */
    boolean repeated() {
        return repeated;
    }

    @Override
    public void close() {
        CURRENT.remove();
    }
}
