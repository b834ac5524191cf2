package io.hayloft.client.http;

import io.hayloft.client.Futures;
import io.hayloft.client.RemoteException;
import io.hayloft.format.errors.DirectoryErrors;
import java.util.Arrays;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * The one retry policy of Hayloft's calls to other servers, and the loop that applies it without
 * blocking a thread (the next attempt is scheduled on a delayed executor). {@link HttpTransport#call}
 * runs every directory, admin and server-to-server call through it, and the client's operations
 * (a replica write, a lease, a delete-log append) retry with it too.
 *
 * <ul>
 *   <li><b>Attempts</b>: at most {@code maxAttempts} per address of the call's {@link AddressList}
 *       (a single server: {@code maxAttempts} in all).</li>
 *   <li><b>Deadline</b> (optional): no attempt starts after it and no backoff is begun that would end
 *       after it; each attempt's own timeout is cut to the time left (the caller does that with the
 *       {@code endNanos} it is given). The call then fails with the last attempt's error.</li>
 *   <li><b>Backoff</b>: before trying an address again, the n-th time, a wait drawn uniformly in
 *       {@code [cap/2, cap]} with {@code cap = min(max, base × 2^(n-1))} (exponential, with jitter that
 *       keeps half of it: clients that failed together do not retry together). Moving on to an
 *       address not yet tried in this call does not wait.</li>
 *   <li><b>Where</b> a failure is retried, by its {@link Classifier}; the {@link #standard} one:
 *       nothing was sent (connection refused, host unreachable or unknown, connect timeout): the next
 *       address, whatever the method; the connection broke or timed out once the request was sent:
 *       the next address when the request may be repeated, never otherwise; an answer of 503: the
 *       same address when the request may be repeated (the server is there, busy); any other answer
 *       (4xx, other 5xx) or an answer that is not valid HTTP: never. With one address "next" and
 *       "same" are that server.</li>
 *   <li><b>A replicated service's leader</b> (the directory under Raft, docs/directory-api.md): a
 *       replica's "not the leader, the leader is X" (421 {@code NOT_LEADER} naming X,
 *       {@link RemoteException#leader()}) is {@link Action#FOLLOW_LEADER}: the call goes to X at once
 *       (X becomes the list's preferred address, added to it when it is not there,
 *       {@link AddressList#leaderHint}), without a backoff, and the refused attempt does not count
 *       against the address's attempts; at most {@value #MAX_LEADER_HOPS} such hops per call, so two
 *       confused replicas that name each other cannot keep a call going round. A replica that knows
 *       no leader (421 without one, or 503 {@code NO_LEADER}: an election runs, or this replica is cut
 *       off from a majority), and a hop past the limit, are {@link Action#AWAIT_LEADER}: the next
 *       address (the replica answering may be the cut-off one), after the backoff when that address
 *       was tried already in this call; these attempts do not count against {@code maxAttempts}
 *       either but against their own budget of {@value #LEADER_ROUNDS} per address, each after a
 *       backoff of at most {@link #LEADER_WAIT_CAP} (200 ms: a new leader is asked for soon after
 *       it is elected; with three replicas about 4 to 9 s of elections ridden out), and the deadline. Neither answer did
 *       anything, so both are followed for every request, one that may not be repeated included.</li>
 * </ul>
 *
 * <p>Thread-safe (immutable).
 */
public final class RetryPolicy {
    /** What to do after a failed attempt. */
    public enum Action {
        /** Try the same address again, after the backoff. */
        SAME_ADDRESS,
        /** Try the next address of the list (round to the first; after the backoff if it was tried already). */
        NEXT_ADDRESS,
        /**
         * Try the leader the failure names ({@link RemoteException#leader()}) at once, without a backoff
         * and without counting the failed attempt; {@link #AWAIT_LEADER} when it names none, when the call
         * made {@value RetryPolicy#MAX_LEADER_HOPS} such hops already, or when the named address used up
         * its attempts in this call.
         */
        FOLLOW_LEADER,
        /**
         * The service has no leader now (or the answering replica is cut off from it): try the next
         * address, after the backoff when it was tried already; counted against the call's
         * {@value RetryPolicy#LEADER_ROUNDS} leader waits per address, not against its attempts.
         */
        AWAIT_LEADER,
        /** Fail with this error. */
        NEVER
    }

    /** Decides the {@link Action} for a failure (the future's cause, unwrapped). Must not throw. */
    @FunctionalInterface
    public interface Classifier {
        Action classify(Throwable failure);
    }

    /** One attempt of a call. */
    @FunctionalInterface
    public interface Attempt<T> {
        /**
         * @param address  where to send it
         * @param n        the attempt's number in the call, from 1
         * @param waited   the backoff waited before it ({@link Duration#ZERO} for the first try of an address)
         * @param endNanos the call's deadline in {@link System#nanoTime()} terms ({@link Long#MAX_VALUE}: none)
         */
        CompletableFuture<T> send(String address, int n, Duration waited, long endNanos);
    }

    private static final AddressList ONE = AddressList.of("-");
    /** Hops to a named leader per call ({@link Action#FOLLOW_LEADER}). */
    public static final int MAX_LEADER_HOPS = 3;
    /** Leader waits per address and call ({@link Action#AWAIT_LEADER}). */
    public static final int LEADER_ROUNDS = 15;

    /** The longest backoff before asking an address again while the group has no leader (uniform in [cap/2, cap]). */
    public static final Duration LEADER_WAIT_CAP = Duration.ofMillis(200);
    /** 421 Misdirected Request: the answer of a directory replica that is not the leader. */
    private static final int MISDIRECTED = 421;

    private final int maxAttempts;
    private final Duration base;
    private final Duration max;
    private final Duration deadline;
    private final Executor executor;
    private final LongSupplier clock;

    /**
     * @param maxAttempts attempts per address (1: no retry)
     * @param base        the first backoff's cap ({@code >= 0})
     * @param max         the largest backoff cap ({@code >= base})
     * @param deadline    time for a whole call, or null for none (the attempts bound it)
     * @param executor    where delayed attempts run, or null for the common pool
     */
    public RetryPolicy(int maxAttempts, Duration base, Duration max, Duration deadline, Executor executor) {
        this(maxAttempts, base, max, deadline, executor, System::nanoTime);
    }

    /** With the clock the deadline is measured on (tests: a clock that moves only when told). */
    RetryPolicy(int maxAttempts, Duration base, Duration max, Duration deadline, Executor executor, LongSupplier clock) {
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be >= 1, was " + maxAttempts);
        }
        if (base == null || max == null || base.isNegative() || max.compareTo(base) < 0) {
            throw new IllegalArgumentException("backoff needs 0 <= base <= max, got " + base + ", " + max);
        }
        if (deadline != null && (deadline.isNegative() || deadline.isZero())) {
            throw new IllegalArgumentException("deadline must be positive, got " + deadline);
        }
        this.maxAttempts = maxAttempts;
        this.base = base;
        this.max = max;
        this.deadline = deadline;
        this.executor = executor;
        this.clock = clock;
    }

    public int maxAttempts() {
        return maxAttempts;
    }

    /** The default deadline of a call, or null for none. */
    public Duration deadline() {
        return deadline;
    }

    /** This policy with another number of attempts per address. */
    public RetryPolicy withMaxAttempts(int n) {
        return new RetryPolicy(n, base, max, deadline, executor, clock);
    }

    /** This policy with another deadline (null: none). */
    public RetryPolicy withDeadline(Duration d) {
        return new RetryPolicy(maxAttempts, base, max, d, executor, clock);
    }

    /** The largest backoff before the {@code retry}-th retry of an address (from 1): {@code min(max, base × 2^(retry-1))}. */
    public Duration cap(int retry) {
        if (retry < 1) {
            throw new IllegalArgumentException("retry must be >= 1, was " + retry);
        }
        long b = base.toNanos();
        long m = max.toNanos();
        int shift = Math.min(retry - 1, 62);
        if (b == 0) {
            return Duration.ZERO;
        }
        if (shift >= Long.numberOfLeadingZeros(b) - 1) {
            return max; // b << shift would overflow
        }
        return Duration.ofNanos(Math.min(m, b << shift));
    }

    /** The backoff before the {@code retry}-th retry of an address: uniformly in {@code [cap/2, cap]}. */
    public Duration backoff(int retry, RandomGenerator random) {
        long cap = cap(retry).toNanos();
        if (cap == 0) {
            return Duration.ZERO;
        }
        long half = cap / 2;
        return Duration.ofNanos(half + random.nextLong(cap - half + 1));
    }

    /** {@link #backoff(int, RandomGenerator)} with the thread's random generator. */
    public Duration backoff(int retry) {
        return backoff(retry, ThreadLocalRandom.current());
    }

    /**
     * The standard decision (see the class comment): by the failure's type and, for an answer, its
     * status, never by its message.
     *
     * @param mayRepeat whether the request may be sent twice (GET, HEAD, PUT, DELETE, or a POST the caller marks so)
     */
    public static Action standard(Throwable failure, boolean mayRepeat) {
        Throwable c = Futures.unwrap(failure);
        if (Failures.neverSent(c)) {
            return Action.NEXT_ADDRESS;
        }
        if (!(c instanceof RemoteException r)) {
            return Action.NEVER;
        }
        if (r.kind() == RemoteException.Kind.ERROR) {
            if (r.httpStatus() == MISDIRECTED || r.code() == DirectoryErrors.NOT_LEADER.code()) {
                return r.leader() != null ? Action.FOLLOW_LEADER : Action.AWAIT_LEADER;
            }
            if (r.code() == DirectoryErrors.NO_LEADER.code()) {
                return Action.AWAIT_LEADER;
            }
        }
        return switch (r.kind()) {
            case UNREACHABLE, TIMEOUT -> mayRepeat ? Action.NEXT_ADDRESS : Action.NEVER;
            case ERROR -> mayRepeat && r.httpStatus() == 503 ? Action.SAME_ADDRESS : Action.NEVER;
            case BAD_RESPONSE -> Action.NEVER;
        };
    }

    /** A classifier that retries on the same address what {@code retryable} accepts, and nothing else. */
    public static Classifier sameAddressIf(Predicate<Throwable> retryable) {
        return t -> retryable.test(t) ? Action.SAME_ADDRESS : Action.NEVER;
    }

    /** Runs a call over {@code addresses} with this policy's deadline; see the class comment. */
    public <T> CompletableFuture<T> run(AddressList addresses, Attempt<T> attempt, Classifier classifier) {
        return run(addresses, attempt, classifier, deadline);
    }

    /**
     * Runs a call: attempts as the classifier and the budgets allow. The future completes with the
     * first success (its address becomes the list's preferred one) or fails with the last failure.
     *
     * @param deadline time for the whole call, or null for none
     */
    public <T> CompletableFuture<T> run(AddressList addresses, Attempt<T> attempt, Classifier classifier, Duration deadline) {
        Call<T> call = new Call<>(addresses, attempt, classifier, deadline);
        call.go(addresses.preferred(), 1, Duration.ZERO, null);
        return call.result;
    }

    /** Runs {@code op} until it succeeds, fails with an error {@code retryable} refuses, or the attempts are used up. */
    public <T> CompletableFuture<T> retry(Supplier<CompletableFuture<T>> op, Predicate<Throwable> retryable) {
        return run(ONE, (a, n, w, e) -> op.get(), sameAddressIf(retryable), deadline);
    }

    /**
     * The attempts after a first one that ran elsewhere (on a caller's thread) and failed with
     * {@code first}: fails with it when {@code retryable} refuses it or there is no attempt left;
     * else runs {@code op} from attempt 2 on, as {@link #retry} would have.
     */
    public <T> CompletableFuture<T> retryAfter(Throwable first, Supplier<CompletableFuture<T>> op, Predicate<Throwable> retryable) {
        Call<T> call = new Call<>(ONE, (a, n, w, e) -> op.get(), sameAddressIf(retryable), deadline);
        call.tries[0] = 1;
        call.visits[0] = 1;
        call.failed(0, 1, Futures.unwrap(first));
        return call.result;
    }

    /** Completes after the backoff before retry {@code retry} (from 1), on the executor. */
    public CompletableFuture<Void> pause(int retry) {
        return CompletableFuture.runAsync(() -> { }, delayed(backoff(retry)));
    }

    private Executor delayed(Duration wait) {
        return executor == null ? CompletableFuture.delayedExecutor(wait.toNanos(), TimeUnit.NANOSECONDS)
                : CompletableFuture.delayedExecutor(wait.toNanos(), TimeUnit.NANOSECONDS, executor);
    }

    /** The state of one call: attempts per address, leader hops and waits, the deadline, the result. */
    private final class Call<T> {
        final AddressList addresses;
        final Attempt<T> attempt;
        final Classifier classifier;
        final boolean bounded;
        final long end;
        /** Attempts per address counted against {@code maxAttempts}. */
        int[] tries;
        /** Attempts per address made in all (the backoff before the next one grows with them). */
        int[] visits;
        /** {@link Action#AWAIT_LEADER} failures per address. */
        int[] waits;
        int hops;
        final CompletableFuture<T> result = new CompletableFuture<>();

        Call(AddressList addresses, Attempt<T> attempt, Classifier classifier, Duration deadline) {
            this.addresses = Objects.requireNonNull(addresses, "addresses");
            this.attempt = Objects.requireNonNull(attempt, "attempt");
            this.classifier = Objects.requireNonNull(classifier, "classifier");
            this.bounded = deadline != null;
            this.end = bounded ? clock.getAsLong() + deadline.toNanos() : Long.MAX_VALUE;
            this.tries = new int[addresses.size()];
            this.visits = new int[addresses.size()];
            this.waits = new int[addresses.size()];
        }

        /** Grows the counters to the list's size (a leader hint may add an address during the call). */
        private void grow(int size) {
            if (size > tries.length) {
                tries = Arrays.copyOf(tries, size);
                visits = Arrays.copyOf(visits, size);
                waits = Arrays.copyOf(waits, size);
            }
        }

        void go(int i, int n, Duration waited, Throwable last) {
            if (last != null && bounded && clock.getAsLong() - end >= 0) {
                result.completeExceptionally(last); // a backoff that overslept: the last error says more than a timeout
                return;
            }
            grow(i + 1);
            tries[i]++;
            visits[i]++;
            CompletableFuture<T> f;
            try {
                f = attempt.send(addresses.get(i), n, waited, end);
            } catch (RuntimeException e) {
                f = CompletableFuture.failedFuture(e);
            }
            f.whenComplete((v, t) -> {
                if (t == null) {
                    addresses.answered(i);
                    result.complete(v);
                } else {
                    failed(i, n, Futures.unwrap(t));
                }
            });
        }

        void failed(int i, int n, Throwable c) {
            Action a;
            try {
                a = classifier.classify(c);
            } catch (RuntimeException e) {
                a = Action.NEVER;
            }
            grow(addresses.size());
            if (a == Action.FOLLOW_LEADER || a == Action.AWAIT_LEADER) {
                tries[i]--; // "not the leader" and "no leader" did nothing: they use up no attempt
            }
            if (a == Action.FOLLOW_LEADER) {
                int j = follow(c);
                if (j >= 0) {
                    hops++;
                    go(j, n + 1, Duration.ZERO, c);
                    return;
                }
                a = Action.AWAIT_LEADER;
            }
            if (a == Action.AWAIT_LEADER) {
                waits[i]++;
            }
            int j = next(i, a);
            if (j < 0) {
                result.completeExceptionally(c);
                return;
            }
            Duration wait = visits[j] == 0 ? Duration.ZERO : backoff(visits[j]);
            if (a == Action.AWAIT_LEADER && wait.compareTo(LEADER_WAIT_CAP) > 0) {
                // An election ends within about an election timeout: ask again soon rather than sleep through the new leader.
                wait = LEADER_WAIT_CAP.dividedBy(2).plus(Duration.ofNanos(
                        ThreadLocalRandom.current().nextLong(LEADER_WAIT_CAP.dividedBy(2).toNanos() + 1)));
            }
            waitThen(j, n, wait, c);
        }

        private void waitThen(int j, int n, Duration wait, Throwable c) {
            if (bounded && clock.getAsLong() + wait.toNanos() - end >= 0) {
                result.completeExceptionally(c); // no time for another attempt: the last error, not a timeout
                return;
            }
            if (wait.isZero()) {
                go(j, n + 1, wait, c);
                return;
            }
            try {
                delayed(wait).execute(() -> go(j, n + 1, wait, c));
            } catch (RuntimeException e) {
                result.completeExceptionally(c); // the executor was shut down
            }
        }

        /** The index of the leader {@code c} names, now the list's preferred one; -1 when not to follow it. */
        private int follow(Throwable c) {
            String leader = c instanceof RemoteException r ? r.leader() : null;
            if (leader == null || hops >= MAX_LEADER_HOPS || addresses == ONE
                    || (bounded && clock.getAsLong() - end >= 0)) {
                return -1;
            }
            int j = addresses.learn(leader);
            if (j < 0) {
                return -1;
            }
            grow(j + 1);
            if (tries[j] >= maxAttempts) {
                return -1; // the named leader used up its attempts in this call (it failed otherwise): not again
            }
            addresses.answered(j); // preferred from now on (AddressList.leaderHint)
            return j;
        }

        /** The index to try after a failure at {@code i}, or -1 when none may be tried. */
        private int next(int i, Action a) {
            switch (a) {
                case SAME_ADDRESS:
                    return tries[i] < maxAttempts ? i : -1;
                case NEXT_ADDRESS:
                case AWAIT_LEADER:
                    int size = addresses.size();
                    int j = i;
                    for (int k = 0; k < size; k++) {
                        j = (j + 1) % size;
                        if (tries[j] < maxAttempts && (a == Action.NEXT_ADDRESS || waits[j] < LEADER_ROUNDS)) {
                            return j;
                        }
                    }
                    return -1;
                default:
                    return -1;
            }
        }
    }
}
