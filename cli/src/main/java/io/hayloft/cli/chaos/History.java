package io.hayloft.cli.chaos;

import io.hayloft.format.wire.PhotoId;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The history of a concurrent schedule: every client operation, background job and fault, with the
 * time it was called ({@link Event#invoke}), the time it returned ({@link Event#complete}) and its
 * result. Times are {@link System#nanoTime()}, comparable across threads.
 *
 * <p>Thread-safe: every thread of a schedule records into it; {@link #events()} is read once they are done.
 */
final class History {

    /** What an event was. */
    enum Kind {
        PUT, PUT_BATCH, GET, WRONG_COOKIE_GET, DELETE, JOB, FAULT;

        String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /** How it ended. */
    enum Outcome {
        /** Acknowledged (a put, a delete, a job that did its work, a fault injected). */
        OK,
        /** A read that returned the bytes of the needle's put. */
        VALUE,
        /** A read that returned other bytes (never written to that needle). */
        OTHER_BYTES,
        /** A read or delete answered that the photo does not exist. */
        NOT_FOUND,
        /** An error or a timeout: the operation may or may not have taken effect. */
        FAILED,
        /** A background job a simulated raid-node crash interrupted (an injected fault). */
        CRASHED,
        /** A background job with nothing to do. */
        SKIPPED
    }

    /**
     * One operation.
     *
     * @param seq      order of completion in the history
     * @param thread   who ran it ({@code client-0}, {@code encoder}, {@code faults}, ...)
     * @param kind     what it was
     * @param job      for jobs and faults, their kind ({@code encode}, {@code store-crash}); else empty
     * @param needles  the needles it concerned (a put's, every alternate of a deleted photo, the one read)
     * @param invoke   when it was called
     * @param complete when it returned
     * @param outcome  how it ended
     * @param detail   what it did or why it failed, for people
     */
    record Event(long seq, String thread, Kind kind, String job, List<PhotoId> needles, long invoke, long complete,
                 Outcome outcome, String detail) {

        boolean failed() {
            return outcome == Outcome.FAILED;
        }

        String describe(long origin) {
            String ids = needles.isEmpty() ? "" : " " + (needles.size() <= 3 ? needles.toString()
                    : needles.subList(0, 3).toString().replace("]", ", ... " + needles.size() + " needles]"));
            return String.format(Locale.ROOT, "%9.3f..%9.3f s %-9s %s%s%s -> %s%s", (invoke - origin) / 1e9,
                    (complete - origin) / 1e9, thread, kind.label(), job.isEmpty() ? "" : " " + job, ids, outcome,
                    detail.isEmpty() ? "" : " (" + detail + ")");
        }
    }

    private final ConcurrentLinkedQueue<Event> events = new ConcurrentLinkedQueue<>();
    private final AtomicLong seq = new AtomicLong();
    private final long origin = System.nanoTime();

    /** Records an operation that just returned. */
    Event record(String thread, Kind kind, String job, List<PhotoId> needles, long invoke, Outcome outcome, String detail) {
        long complete = System.nanoTime();
        Event e = new Event(seq.getAndIncrement(), thread, kind, job, List.copyOf(needles), invoke, complete, outcome,
                detail == null ? "" : detail);
        events.add(e);
        return e;
    }

    /** When the schedule began: times are printed relative to it. */
    long origin() {
        return origin;
    }

    /** Every event so far, in order of completion. */
    List<Event> events() {
        List<Event> out = new ArrayList<>(events);
        out.sort(Comparator.comparingLong(Event::complete).thenComparingLong(Event::seq));
        return out;
    }

    /**
     * For a failure report: {@code before} events that completed before {@code e} (and {@code e}
     * and up to 5 after it), one line each.
     */
    List<String> around(Event e, int before) {
        List<Event> all = events();
        int at = 0;
        while (at < all.size() && all.get(at).seq() != e.seq()) {
            at++;
        }
        List<String> out = new ArrayList<>();
        for (int i = Math.max(0, at - before); i < Math.min(all.size(), at + 6); i++) {
            out.add((i == at ? "=> " : "   ") + all.get(i).describe(origin));
        }
        return out;
    }

    /** The last {@code n} events, one line each. */
    List<String> last(int n) {
        List<Event> all = events();
        List<String> out = new ArrayList<>();
        for (int i = Math.max(0, all.size() - n); i < all.size(); i++) {
            out.add("   " + all.get(i).describe(origin));
        }
        return out;
    }

    /** Every event that concerned {@code needle} (same volume, key and alternate), one line each. */
    List<String> of(PhotoId needle) {
        List<String> out = new ArrayList<>();
        for (Event e : events()) {
            for (PhotoId id : e.needles()) {
                if (id.volume() == needle.volume() && id.key() == needle.key() && id.alt() == needle.alt()) {
                    out.add("   " + e.describe(origin));
                    break;
                }
            }
        }
        return out;
    }
}
