package io.hayloft.cli.chaos;

import io.hayloft.cli.chaos.History.Event;
import io.hayloft.cli.chaos.History.Kind;
import io.hayloft.cli.chaos.History.Outcome;
import io.hayloft.format.wire.PhotoId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Checks a concurrent schedule's {@link History} against the model, needle by needle
 * (linearizability-lite; docs/chaos.md "The concurrent model"). Each needle is written once, by the
 * put that created its photo (keys come from the directory), so its only value is that put's bytes,
 * and a read of it is called only after the put returned (its id comes from the put). For a read
 * {@code R} of a needle whose put is {@code P}:
 * <ul>
 *   <li>bytes other than {@code P}'s: always a violation (bytes never written to that needle);</li>
 *   <li>{@code P}'s bytes: a violation if an acknowledged delete of the photo completed before
 *       {@code R} was called (an acknowledged delete stays deleted, whatever crashed since);</li>
 *   <li>not found: legal if {@code P} was not acknowledged (in doubt), or if a delete of the photo,
 *       acknowledged or failed (in doubt), was called before {@code R} returned; else a violation
 *       (an acknowledged photo lost). A delete that answers not found counts as such a read;</li>
 *   <li>an error: not judged here (the final check after the quiet period requires every needle
 *       readable).</li>
 * </ul>
 * A read with a wrong cookie that returns bytes is a violation. The checker also derives the final
 * {@link Model}: acknowledged and never deleted is exact, an acknowledged delete is deleted, the rest
 * in doubt.
 *
 * <p>Not thread-safe: run once, after the schedule's threads are done.
 */
final class HistoryChecker {

    /** A history that breaks the model at {@code event}, for {@code needle}. */
    record Violation(Event event, PhotoId needle, String why) {
    }

    /** A needle's put: its id, the bytes sent, and the put's event. */
    record Written(PhotoId id, byte[] value, Event put) {
        boolean acknowledged() {
            return put.outcome() == Outcome.OK;
        }
    }

    private final Map<PhotoId, Written> written;
    private final Map<PhotoId, List<Event>> deletes = new HashMap<>();
    private final Map<PhotoId, List<Event>> reads = new HashMap<>();
    private final List<Event> wrongCookies = new ArrayList<>();

    /** @param written every needle whose id a put made known (acknowledged or in doubt) */
    HistoryChecker(Map<PhotoId, Written> written, List<Event> events) {
        this.written = written;
        for (Event e : events) {
            if (e.kind() == Kind.DELETE) {
                for (PhotoId id : e.needles()) {
                    deletes.computeIfAbsent(id, k -> new ArrayList<>()).add(e);
                    if (e.outcome() == Outcome.NOT_FOUND) {
                        reads.computeIfAbsent(id, k -> new ArrayList<>()).add(e);
                    }
                }
            } else if (e.kind() == Kind.GET) {
                reads.computeIfAbsent(e.needles().get(0), k -> new ArrayList<>()).add(e);
            } else if (e.kind() == Kind.WRONG_COOKIE_GET) {
                wrongCookies.add(e);
            }
        }
    }

    /** Every violation, in order of the reads' completion. */
    List<Violation> check() {
        List<Violation> out = new ArrayList<>();
        for (Map.Entry<PhotoId, List<Event>> e : reads.entrySet()) {
            Written w = written.get(e.getKey());
            for (Event r : e.getValue()) {
                String why = w == null ? "a read of a needle no put made known" : judge(w, r);
                if (why != null) {
                    out.add(new Violation(r, e.getKey(), why));
                }
            }
        }
        for (Event r : wrongCookies) {
            if (r.outcome() == Outcome.VALUE || r.outcome() == Outcome.OTHER_BYTES) {
                out.add(new Violation(r, r.needles().get(0), "a read with a wrong cookie returned bytes"));
            }
        }
        out.sort((a, b) -> Long.compare(a.event().complete(), b.event().complete()));
        return out;
    }

    /** Why read (or not-found delete) {@code r} of a needle written by {@code w} is illegal, or null. */
    private String judge(Written w, Event r) {
        List<Event> ds = deletes.getOrDefault(w.id(), List.of());
        switch (r.outcome()) {
            case OTHER_BYTES -> {
                return "read back bytes never written to this needle (" + r.detail() + ")";
            }
            case VALUE -> {
                for (Event d : ds) {
                    if (d.outcome() == Outcome.OK && d.complete() < r.invoke()) {
                        return "read back the photo's bytes after a delete of it was acknowledged (delete #" + d.seq() + ")";
                    }
                }
                return null;
            }
            case NOT_FOUND -> {
                if (!w.acknowledged()) {
                    return null;
                }
                for (Event d : ds) {
                    if (d != r && d.invoke() < r.complete() && (d.outcome() == Outcome.OK || d.failed())) {
                        return null;
                    }
                }
                return "an acknowledged photo, never deleted, reads as not found";
            }
            default -> {
                return null;
            }
        }
    }

    /** What a read may return at the end of the schedule, after every operation returned. */
    Model finalModel() {
        Model model = new Model();
        Map<Long, Model.Photo> photos = new HashMap<>();
        for (Written w : written.values()) {
            model.put(w.id(), w.value(), w.acknowledged());
        }
        for (Written w : written.values()) {
            photos.putIfAbsent(w.id().key(), model.photo(w.id().key()));
        }
        for (Map.Entry<PhotoId, List<Event>> e : deletes.entrySet()) {
            Model.Photo p = photos.get(e.getKey().key());
            if (p == null) {
                continue;
            }
            Model.Needle n = p.alts.get(e.getKey().alt());
            if (n == null) {
                continue;
            }
            boolean acked = e.getValue().stream().anyMatch(d -> d.outcome() == Outcome.OK);
            if (acked) {
                n.values.clear();
            }
            n.mayBeAbsent = true;
        }
        return model;
    }
}
