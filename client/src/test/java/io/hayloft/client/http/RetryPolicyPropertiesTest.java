package io.hayloft.client.http;

import java.io.IOException;
import java.net.ProtocolException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.assertj.core.data.Offset;
import static org.assertj.core.api.Assertions.assertThat;

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
        Action[] actions = Action.values();
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
        Action expected = status == 503 && mayRepeat ? Action.SAME_ADDRESS : Action.NEVER;
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
}
