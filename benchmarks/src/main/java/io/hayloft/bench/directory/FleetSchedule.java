package io.hayloft.bench.directory;

import org.HdrHistogram.Histogram;

/**
 * The open-loop schedule of {@code hayloft bench directory}'s {@code heartbeat-fleet} row: {@code fleet}
 * simulated stores each send a heartbeat once a second, store {@code i} at its own phase
 * ({@code i / fleet} of a second after the start), whatever the directory's answers do. A connection
 * serves every {@code connections}-th store and sends each heartbeat when it is due, or at once when
 * it is already late (the connection was busy with earlier ones); a heartbeat's latency is measured
 * from when it was due, not from when it was sent, so a slow answer delays and counts against every
 * heartbeat queued behind it (no coordinated omission). A heartbeat is <em>late</em> when it was
 * answered more than {@link #LATE_NANOS} (1 s, the next one of the same store being due) after it
 * was due.
 *
 * <p>Pure: the clock and the sender are given, so the accounting can be tested without a directory.
 * Not thread-safe: one {@link #drive} per connection, each with its own {@link Tally}.
 */
final class FleetSchedule {
    static final long SECOND = 1_000_000_000L;
    /** A heartbeat answered more than this after it was due is late. */
    static final long LATE_NANOS = SECOND;
    /**
     * How long after the measured seconds a connection still sends heartbeats that were due in them;
     * those still unsent then count as late, with the time they had waited as their latency (a lower bound).
     */
    static final long GRACE_NANOS = 2 * SECOND;
    private static final long MAX_NANOS = 60 * SECOND;

    private FleetSchedule() {
    }

    /** When store {@code store}'s {@code k}-th scheduled heartbeat (from 0) is due: its phase after {@code t0}, plus k seconds. */
    static long due(long t0, int store, int fleet, long k) {
        return t0 + store * SECOND / fleet + k * SECOND;
    }

    /** The stores connection {@code thread} serves: {@code thread}, {@code thread + connections}, ... below {@code fleet}. */
    static int[] storesOf(int thread, int connections, int fleet) {
        int n = thread >= fleet ? 0 : (fleet - thread + connections - 1) / connections;
        int[] s = new int[n];
        for (int j = 0; j < n; j++) {
            s[j] = thread + j * connections;
        }
        return s;
    }

    /** The time source: {@link System#nanoTime} and a sleep, or a test's. */
    interface Clock {
        long nanoTime();

        /** Returns at or after {@code nanos}. */
        void sleepUntil(long nanos) throws InterruptedException;
    }

    /** Sends store {@code store}'s heartbeat and returns the status (200 counts). */
    interface Sender {
        int send(int store) throws Exception;
    }

    /** The real clock. */
    static final Clock SYSTEM = new Clock() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public void sleepUntil(long nanos) throws InterruptedException {
            long left;
            while ((left = nanos - System.nanoTime()) > 0) {
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                java.util.concurrent.locks.LockSupport.parkNanos(left);
            }
        }
    };

    /** The measured heartbeats of one connection (or, after {@link #add}, of all). */
    static final class Tally {
        final Histogram latency = new Histogram(MAX_NANOS, 3);
        /** Heartbeats due in the measured seconds: answered, failed or never sent. */
        long due;
        long answered;
        long errors;
        long late;
        long unsent;
        /** When the last measured heartbeat was answered (0: none). */
        long lastDone;
        String firstError;

        void answered(long dueAt, long done) {
            due++;
            answered++;
            waited(done - dueAt);
            lastDone = Math.max(lastDone, done);
        }

        void failed(String why) {
            due++;
            errors++;
            if (firstError == null) {
                firstError = why;
            }
        }

        void unsent(long dueAt, long now) {
            due++;
            unsent++;
            waited(now - dueAt);
        }

        private void waited(long nanos) {
            latency.recordValue(Math.max(0, Math.min(nanos, MAX_NANOS)));
            if (nanos > LATE_NANOS) {
                late++;
            }
        }

        void add(Tally o) {
            latency.add(o.latency);
            due += o.due;
            answered += o.answered;
            errors += o.errors;
            late += o.late;
            unsent += o.unsent;
            lastDone = Math.max(lastDone, o.lastDone);
            if (firstError == null) {
                firstError = o.firstError;
            }
        }

        /** Late (or never sent) heartbeats over all due in the measured seconds; 0 when none was due. */
        double lateFraction() {
            return due == 0 ? 0 : (double) late / due;
        }
    }

    /**
     * One connection's schedule from {@code t0}: round after round, each of {@code stores} (ascending,
     * so their due times are too) sent when due or at once when late. Heartbeats due before
     * {@code measureFrom} are sent but not recorded (the warm-up); those due in {@code [measureFrom, end)}
     * are recorded, their latency from when they were due; none due at or after {@code end} is sent.
     * Ones due in the measured seconds but not sent by {@code end +} {@link #GRACE_NANOS} are recorded
     * as unsent (late, their latency the time waited so far).
     */
    static Tally drive(int[] stores, int fleet, long t0, long measureFrom, long end, Clock clock, Sender sender)
            throws InterruptedException {
        Tally tally = new Tally();
        if (stores.length == 0) {
            return tally;
        }
        long abandonedAt = -1;
        for (long k = 0; ; k++) {
            for (int store : stores) {
                long due = due(t0, store, fleet, k);
                if (due >= end) {
                    return tally;
                }
                boolean measured = due >= measureFrom;
                if (abandonedAt < 0) {
                    long now = clock.nanoTime();
                    if (now >= end + GRACE_NANOS) {
                        abandonedAt = now;
                    } else {
                        if (now < due) {
                            clock.sleepUntil(due);
                        }
                        int status;
                        String error = null;
                        try {
                            status = sender.send(store);
                        } catch (Exception e) {
                            status = 0;
                            error = e.toString();
                        }
                        long done = clock.nanoTime();
                        if (measured) {
                            if (status == 200) {
                                tally.answered(due, done);
                            } else {
                                tally.failed(error != null ? error : "status " + status);
                            }
                        }
                        continue;
                    }
                }
                if (measured) {
                    tally.unsent(due, abandonedAt);
                }
            }
        }
    }
}
