package io.hayloft.client.http;

import java.io.IOException;
import java.net.ProtocolException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.assertj.core.data.Offset;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.client.LeaderHint;
import io.hayloft.client.RemoteException;
import io.hayloft.client.RemoteException.Kind;
import io.hayloft.client.http.RetryPolicy.Action;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/**
 * The retry policy as properties: backoffs stay within their jittered bounds and grow exponentially
 * to the cap; a call makes no more attempts per address than allowed, starts none after its
 * deadline, stops at once on a failure that is never retried, moves to the next address when told and
 * fails with the last attempt's error. Attempts here fail at once (no server), with backoffs of
 * microseconds, so a property's hundreds of calls take well under a second.
 */
class RetryPolicyPropertiesTest {

    @Property
    void backoffIsWithinHalfAndAllOfItsExponentialCap(@ForAll @LongRange(min = 0, max = 10_000_000_000L) long baseNanos,
                                                      @ForAll @LongRange(min = 0, max = 60_000_000_000L) long extraNanos,
                                                      @ForAll @IntRange(min = 1, max = 80) int retry,
                                                      @ForAll long seed) {
        Duration base = Duration.ofNanos(baseNanos);
        Duration max = base.plusNanos(extraNanos);
        RetryPolicy p = new RetryPolicy(3, base, max, null, null);
        long cap = p.cap(retry).toNanos();
        double exponential = (double) baseNanos * Math.pow(2, retry - 1);
        assertThat(cap).isLessThanOrEqualTo(max.toNanos());
        assertThat((double) cap).isEqualTo(Math.min((double) max.toNanos(), exponential), Offset.offset(1.0));
        if (retry > 1) {
            assertThat(p.cap(retry - 1).toNanos()).isLessThanOrEqualTo(cap);
        }
        Random random = new Random(seed);
        for (int i = 0; i < 20; i++) {
            long wait = p.backoff(retry, random).toNanos();
            assertThat(wait).isBetween(cap / 2, cap);
        }
    }

    @Property(tries = 200)
    void aCallRespectsItsBudgetsItsDeadlineAndItsClassifier(@ForAll @IntRange(min = 1, max = 4) int addresses,
                                                           @ForAll @IntRange(min = 1, max = 5) int maxAttempts,
                                                           @ForAll @IntRange(min = 1, max = 40) int deadlineMillis,
                                                           @ForAll long seed) throws Exception {
        List<String> list = new ArrayList<>();
        for (int i = 0; i < addresses; i++) {
            list.add("10.0.0." + i + ":7000");
        }
        AddressList addressList = AddressList.of(list);
        // The deadline is measured on a clock that moves only when an attempt says so (each takes 0 to 10 ms):
        // "no attempt starts after the deadline" is then exact, not a matter of timing.
        AtomicLong now = new AtomicLong(1_000_000_000L);
        Random random = new Random(seed);
        RetryPolicy policy = new RetryPolicy(maxAttempts, Duration.ofNanos(1000), Duration.ofNanos(50_000),
                Duration.ofMillis(deadlineMillis), null, now::get);
        Action[] actions = {Action.SAME_ADDRESS, Action.NEXT_ADDRESS, Action.NEVER}; // the leader actions: below
        List<String> tried = Collections.synchronizedList(new ArrayList<>());
        List<Action> told = Collections.synchronizedList(new ArrayList<>());
        List<Boolean> startedInTime = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger n = new AtomicInteger();
        CompletableFuture<String> call = policy.run(addressList, (address, attempt, waited, end) -> {
            startedInTime.add(now.get() - end < 0);
            assertThat(attempt).isEqualTo(n.incrementAndGet());
            tried.add(address);
            now.addAndGet(random.nextInt(10_000_000));
            return CompletableFuture.failedFuture(new IllegalStateException("attempt " + attempt));
        }, failure -> {
            Action a = actions[random.nextInt(actions.length)];
            told.add(a);
            return a;
        });
        Throwable failure = null;
        try {
            call.get();
        } catch (ExecutionException e) {
            failure = e.getCause();
        }
        assertThat(failure).hasMessage("attempt " + tried.size()); // the last attempt's error
        assertThat(startedInTime).as("no attempt starts after the deadline").doesNotContain(false);
        for (String a : list) {
            assertThat(tried.stream().filter(a::equals).count()).as("attempts at %s", a).isLessThanOrEqualTo(maxAttempts);
        }
        for (int i = 0; i + 1 < tried.size(); i++) {
            Action a = told.get(i);
            assertThat(a).as("attempt %d was followed by another", i + 1).isNotEqualTo(Action.NEVER);
            if (a == Action.SAME_ADDRESS) {
                assertThat(tried.get(i + 1)).isEqualTo(tried.get(i));
            } else if (addresses > 1 && !exhaustedElsewhere(tried, list, i, maxAttempts)) {
                assertThat(tried.get(i + 1)).as("after NEXT_ADDRESS from attempt %d", i + 1).isNotEqualTo(tried.get(i));
            }
        }
        Action last = told.get(told.size() - 1);
        if (last == Action.NEVER) {
            assertThat(told).hasSize(tried.size()); // no attempt followed it
        }
    }

    /** Whether, after attempt {@code i}, every address but the one of attempt {@code i} had used its attempts. */
    private static boolean exhaustedElsewhere(List<String> tried, List<String> list, int i, int maxAttempts) {
        List<String> upTo = tried.subList(0, i + 1);
        return list.stream().filter(a -> !a.equals(tried.get(i))).allMatch(a -> upTo.stream().filter(a::equals).count() >= maxAttempts);
    }

    @Property(tries = 50)
    void aRefusedConnectionGoesToTheNextAddressAndTheOneThatAnswersIsPreferred(@ForAll @IntRange(min = 2, max = 5) int addresses,
                                                                                @ForAll @IntRange(min = 0, max = 4) int live) {
        int answering = live % addresses;
        List<String> list = new ArrayList<>();
        for (int i = 0; i < addresses; i++) {
            list.add("h" + i + ":1");
        }
        AddressList addressList = AddressList.of(list);
        RetryPolicy policy = new RetryPolicy(1, Duration.ZERO, Duration.ZERO, Duration.ofSeconds(10), null);
        List<String> tried = new ArrayList<>();
        RetryPolicy.Attempt<String> attempt = (address, n, waited, end) -> {
            tried.add(address);
            if (address.equals(list.get(answering))) {
                return CompletableFuture.completedFuture(address);
            }
            return CompletableFuture.failedFuture(new RemoteException(address, Kind.UNREACHABLE, 0, 0, null, null, "refused",
                    new ConnectException("Connection refused")));
        };
        // a POST: nothing was sent, so even a request that may not be repeated goes on
        assertThat(policy.run(addressList, attempt, f -> RetryPolicy.standard(f, false)).join()).isEqualTo(list.get(answering));
        assertThat(tried).isEqualTo(list.subList(0, answering + 1));
        assertThat(addressList.preferred()).isEqualTo(answering);
        tried.clear();
        assertThat(policy.run(addressList, attempt, f -> RetryPolicy.standard(f, false)).join()).isEqualTo(list.get(answering));
        assertThat(tried).containsExactly(list.get(answering));
    }

    @Property(tries = 20)
    void standardClassificationByKindStatusAndCauseType(@ForAll @IntRange(min = 400, max = 599) int status,
                                                        @ForAll boolean mayRepeat) {
        RemoteException answer = new RemoteException("s:1", Kind.ERROR, status, 1, "X", "x", "x", null);
        Action expected = status == 421 ? Action.AWAIT_LEADER : status == 503 && mayRepeat ? Action.SAME_ADDRESS : Action.NEVER;
        assertThat(RetryPolicy.standard(answer, mayRepeat)).isEqualTo(expected);
        RemoteException broken = new RemoteException("s:1", Kind.UNREACHABLE, 0, 0, null, null, "x",
                new IOException("connection reset"));
        assertThat(RetryPolicy.standard(broken, mayRepeat)).isEqualTo(mayRepeat ? Action.NEXT_ADDRESS : Action.NEVER);
        RemoteException timeout = new RemoteException("s:1", Kind.TIMEOUT, 0, 0, null, null, "x",
                new HttpTimeoutException("request timed out"));
        assertThat(RetryPolicy.standard(timeout, mayRepeat)).isEqualTo(mayRepeat ? Action.NEXT_ADDRESS : Action.NEVER);
        RemoteException connectTimeout = new RemoteException("s:1", Kind.TIMEOUT, 0, 0, null, null, "x",
                new HttpConnectTimeoutException("connect timed out"));
        assertThat(RetryPolicy.standard(connectTimeout, mayRepeat)).isEqualTo(Action.NEXT_ADDRESS);
        RemoteException garbage = new RemoteException("s:1", Kind.BAD_RESPONSE, 0, 0, null, null, "x",
                new ProtocolException("Invalid status line"));
        assertThat(RetryPolicy.standard(garbage, mayRepeat)).isEqualTo(Action.NEVER);
    }

    @Property(tries = 20)
    void notLeaderAndNoLeaderAreFollowedWhateverTheMethod(@ForAll boolean mayRepeat, @ForAll @IntRange(min = 1, max = 65535) int port) {
        RemoteException named = new RemoteException("a:1", Kind.ERROR, 421, 230, "NOT_LEADER", "x", "x",
                new LeaderHint("b:" + port));
        assertThat(named.leader()).isEqualTo("b:" + port);
        assertThat(RetryPolicy.standard(named, mayRepeat)).isEqualTo(Action.FOLLOW_LEADER);
        RemoteException unnamed = new RemoteException("a:1", Kind.ERROR, 421, 230, "NOT_LEADER", "x", "x", null);
        assertThat(unnamed.leader()).isNull();
        assertThat(RetryPolicy.standard(unnamed, mayRepeat)).isEqualTo(Action.AWAIT_LEADER);
        RemoteException noLeader = new RemoteException("a:1", Kind.ERROR, 503, 231, "NO_LEADER", "x", "x", null);
        assertThat(RetryPolicy.standard(noLeader, mayRepeat)).isEqualTo(Action.AWAIT_LEADER);
    }

    /**
     * Replicas that answer "not the leader" naming any address (one of the list, a new one, the one
     * answering) or "no leader", mixed with other failures: a named leader is tried next while the hops
     * last, never more than {@value RetryPolicy#MAX_LEADER_HOPS} hops, the leader answers use up no
     * attempt of {@code maxAttempts}, and the call ends with the last error within a bound on attempts.
     */
    @Property(tries = 300)
    void leaderHopsAndWaitsAreBounded(@ForAll @IntRange(min = 1, max = 4) int addresses,
                                      @ForAll @IntRange(min = 1, max = 3) int maxAttempts,
                                      @ForAll long seed) {
        List<String> list = new ArrayList<>();
        for (int i = 0; i < addresses; i++) {
            list.add("10.0.0." + i + ":7000");
        }
        AddressList addressList = AddressList.of(list);
        Random random = new Random(seed);
        RetryPolicy policy = new RetryPolicy(maxAttempts, Duration.ofNanos(1000), Duration.ofNanos(20_000), Duration.ofSeconds(30), null);
        List<String> tried = new ArrayList<>();
        List<RemoteException> answers = new ArrayList<>();
        CompletableFuture<String> call = policy.run(addressList, (address, attempt, waited, end) -> {
            tried.add(address);
            int r = random.nextInt(10);
            RemoteException e;
            if (r < 5) { // not the leader, naming a replica of the list, itself or one the list does not have
                String leader = r == 0 ? address : r == 1 ? "10.0.1." + random.nextInt(3) + ":7000"
                        : list.get(random.nextInt(addresses));
                e = new RemoteException(address, Kind.ERROR, 421, 230, "NOT_LEADER", "x", "x " + attempt, new LeaderHint(leader));
            } else if (r < 8) {
                e = new RemoteException(address, Kind.ERROR, 503, 231, "NO_LEADER", "x", "x " + attempt, null);
            } else {
                e = new RemoteException(address, Kind.UNREACHABLE, 0, 0, null, null, "x " + attempt,
                        new ConnectException("refused"));
            }
            answers.add(e);
            return CompletableFuture.failedFuture(e);
        }, f -> RetryPolicy.standard(f, false));
        Throwable failure = catchFailure(call);
        assertThat(failure).isSameAs(answers.get(answers.size() - 1));
        int hops = 0;
        int counted = 0;
        int waits = 0;
        for (int i = 0; i + 1 < tried.size(); i++) {
            RemoteException e = answers.get(i);
            if (e.leader() != null && tried.get(i + 1).equals(e.leader()) && hops < RetryPolicy.MAX_LEADER_HOPS) {
                hops++;
            } else if (e.leader() != null && hops < RetryPolicy.MAX_LEADER_HOPS && !usedUp(tried, answers, i, e.leader(), maxAttempts)) {
                throw new AssertionError("attempt " + (i + 1) + " named " + e.leader() + " but the next went to " + tried.get(i + 1));
            } else if (e.kind() == Kind.ERROR) {
                waits++;
            } else {
                counted++;
            }
        }
        assertThat(hops).isLessThanOrEqualTo(RetryPolicy.MAX_LEADER_HOPS);
        int size = addressList.size();
        assertThat(size).isLessThanOrEqualTo(addresses + AddressList.MAX_LEARNED);
        assertThat(counted).isLessThanOrEqualTo(maxAttempts * size);
        assertThat(waits).isLessThanOrEqualTo(RetryPolicy.LEADER_ROUNDS * size + RetryPolicy.MAX_LEADER_HOPS + 1);
        assertThat(tried.size()).isLessThanOrEqualTo((maxAttempts + RetryPolicy.LEADER_ROUNDS) * size + 2 * RetryPolicy.MAX_LEADER_HOPS + 2);
    }

    /** Whether {@code address} had failed {@code maxAttempts} times in a way that counts (not a leader answer) up to attempt {@code i}. */
    private static boolean usedUp(List<String> tried, List<RemoteException> answers, int i, String address, int maxAttempts) {
        int counted = 0;
        for (int k = 0; k <= i; k++) {
            if (tried.get(k).equals(address) && answers.get(k).kind() != Kind.ERROR) {
                counted++;
            }
        }
        return counted >= maxAttempts;
    }

    @Property(tries = 50)
    void aNamedLeaderIsTriedAtOnceAndPreferredAfterwards(@ForAll @IntRange(min = 1, max = 4) int addresses,
                                                          @ForAll @IntRange(min = 0, max = 4) int leaderIndex) {
        List<String> list = new ArrayList<>();
        for (int i = 0; i < addresses; i++) {
            list.add("h" + i + ":7000");
        }
        String leader = leaderIndex < addresses ? list.get(leaderIndex) : "elsewhere:7000"; // maybe not in the list
        AddressList addressList = AddressList.of(list);
        // no backoff at all would be allowed: a base of 10 s shows that a hop does not wait
        RetryPolicy policy = new RetryPolicy(1, Duration.ofSeconds(10), Duration.ofSeconds(10), Duration.ofSeconds(30), null);
        List<String> tried = new ArrayList<>();
        RetryPolicy.Attempt<String> attempt = (address, n, waited, end) -> {
            tried.add(address);
            assertThat(waited).isEqualTo(Duration.ZERO);
            return address.equals(leader) ? CompletableFuture.completedFuture(address)
                    : CompletableFuture.failedFuture(new RemoteException(address, Kind.ERROR, 421, 230, "NOT_LEADER", "x", "x",
                    new LeaderHint(leader)));
        };
        assertThat(policy.run(addressList, attempt, f -> RetryPolicy.standard(f, false)).join()).isEqualTo(leader);
        assertThat(tried).isEqualTo(leader.equals(list.get(0)) ? List.of(leader) : List.of(list.get(0), leader));
        assertThat(addressList.get(addressList.preferred())).isEqualTo(leader);
        tried.clear();
        assertThat(policy.run(addressList, attempt, f -> RetryPolicy.standard(f, false)).join()).isEqualTo(leader);
        assertThat(tried).containsExactly(leader);
    }

    private static Throwable catchFailure(CompletableFuture<?> f) {
        try {
            f.get();
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        throw new AssertionError("the call succeeded");
    }
}
