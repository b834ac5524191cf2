package io.hayloft.s3.sdk;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * A history of writes and reads of keys, recorded by concurrent clients of one JVM with
 * {@link System#nanoTime()}, and the check that no read returned a state older than one acknowledged
 * before the read started (S3's strong read-after-write consistency).
 *
 * <p>The rule, for a read R of key K: R may return the value of a write X of K (a PUT's value, or
 * absence for a DELETE; every key starts absent, as if deleted at the beginning of time) when X was
 * invoked before R ended and X was not superseded before R started, that is, no write Y of K was
 * invoked after X was acknowledged and acknowledged before R started. A write that failed has no
 * acknowledgement ({@link #NOT_ACKNOWLEDGED}): it may have happened at any time after its invocation,
 * so it supersedes nothing and nothing supersedes it. Every linearizable history passes; a read that
 * saw a value older than an acknowledged write, or a value no write made, fails. PUT values must be
 * unique in the history (a read names the write it saw by its value). Reads are checked one by one
 * against the writes, not against each other: two reads that order concurrent writes differently both
 * pass (a full linearizability check, as Knossos's, would catch that too).
 *
 * <p>Recording is thread-safe; {@link #check} is a pure function of the history.
 */
public final class History {
    /** The acknowledgement time of a write whose outcome is unknown (it failed or timed out). */
    public static final long NOT_ACKNOWLEDGED = Long.MAX_VALUE;
    private static final Write INITIAL = new Write("", null, Long.MIN_VALUE, Long.MIN_VALUE);

    /** A PUT of {@code value} to {@code key} (a DELETE: {@code value} null), invoked and acknowledged at these times. */
    public record Write(String key, String value, long invoked, long acknowledged) {
        String describe(long origin) {
            return (value == null ? "DELETE" : "PUT " + value) + " invoked at " + at(invoked, origin) + ", acknowledged at "
                    + (acknowledged == NOT_ACKNOWLEDGED ? "never" : at(acknowledged, origin));
        }
    }

    /** A read ({@code op}: GET, HEAD, ... and by which client) of {@code key} that saw {@code value} (null: absent). */
    public record Read(String op, String key, String value, long started, long ended) {
        String describe(long origin) {
            return op + " " + key + " from " + at(started, origin) + " to " + at(ended, origin) + " saw "
                    + (value == null ? "no object" : value);
        }
    }

    private final long origin = System.nanoTime();
    private final Collection<Write> writes = new ConcurrentLinkedQueue<>();
    private final Collection<Read> reads = new ConcurrentLinkedQueue<>();

    public void add(Write w) {
        writes.add(w);
    }

    public void add(Read r) {
        reads.add(r);
    }

    public List<Write> writes() {
        return List.copyOf(writes);
    }

    public List<Read> reads() {
        return List.copyOf(reads);
    }

    /** Microseconds from this history's making to {@code nanos}, as its messages print times. */
    public long micros(long nanos) {
        return (nanos - origin) / 1000;
    }

    /** The violations of this history (empty: it passes); times in the messages are microseconds since it was made. */
    public List<String> check() {
        return check(writes(), reads(), origin);
    }

    /**
     * Every read of {@code reads} that the rule forbids, described with the write it should not have
     * missed; times are printed as microseconds since {@code origin}.
     */
    public static List<String> check(List<Write> writes, List<Read> reads, long origin) {
        Map<String, List<Write>> byKey = new HashMap<>();
        for (Write w : writes) {
            byKey.computeIfAbsent(w.key(), k -> new ArrayList<>(List.of(INITIAL))).add(w);
        }
        List<String> violations = new ArrayList<>();
        for (Read r : reads) {
            List<Write> ws = byKey.getOrDefault(r.key(), List.of(INITIAL));
            // The latest invocation among the writes acknowledged before R started (and which one):
            // a write acknowledged before that invocation is superseded.
            Write latest = INITIAL;
            for (Write y : ws) {
                if (y.acknowledged() < r.started() && y.invoked() > latest.invoked()) {
                    latest = y;
                }
            }
            boolean legal = false;
            Write seen = null;
            for (Write x : ws) {
                if (Objects.equals(x.value(), r.value())) {
                    seen = x;
                    legal |= x.invoked() < r.ended() && x.acknowledged() >= latest.invoked();
                }
            }
            if (legal) {
                continue;
            }
            if (seen == null || (r.value() != null && seen.invoked() >= r.ended())) {
                violations.add(r.describe(origin) + ", which no write of " + r.key() + " invoked before the read ended made"
                        + (seen == null ? "" : " (" + seen.describe(origin) + ")"));
            } else {
                violations.add(r.describe(origin) + (r.value() == null ? "" : " (" + seen.describe(origin) + ")") + ", but "
                        + latest.describe(origin) + " was acknowledged before the read started and invoked after "
                        + (r.value() == null ? "every DELETE of " + r.key() + " was acknowledged" : "that was acknowledged"));
            }
        }
        return violations;
    }

    private static String at(long nanos, long origin) {
        return nanos == Long.MIN_VALUE ? "the beginning" : (nanos - origin) / 1000 + " us";
    }
}
