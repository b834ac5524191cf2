package io.hayloft.testkit;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.function.BooleanSupplier;

/**
 * Waiting in a test for a condition a running server sets (a heartbeat, the health checker, a lease
 * count), polling every few milliseconds (or every given interval) up to a deadline; past it the test
 * fails with an {@link AssertionError} that names what was awaited. Stateless, thread-safe.
 */
public final class Await {
    /** The deadline of {@link #until(String, BooleanSupplier)}. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(20);
    private static final Duration POLL = Duration.ofMillis(5);

    private Await() {
    }

    /** Waits up to {@link #DEFAULT_TIMEOUT} for {@code condition}. */
    public static void until(String what, BooleanSupplier condition) throws InterruptedException {
        until(what, DEFAULT_TIMEOUT, condition);
    }

    /** Waits up to {@code timeout} for {@code condition}. */
    public static void until(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
        until(what, timeout, POLL, condition);
    }

    /**
     * Waits up to {@code timeout} for {@code condition}, asking it every {@code interval}: for a condition
     * that costs (a round of HTTP calls to several server processes), so that the asking does not take
     * the CPU the servers need to get there.
     */
    public static void until(String what, Duration timeout, Duration interval, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            pause(what, timeout, deadline, interval);
        }
    }

    /** As {@link #until(String, Duration, BooleanSupplier)} for a condition that may throw (it fails the wait). */
    public static void untilTrue(String what, Duration timeout, Callable<Boolean> condition) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.call()) {
            pause(what, timeout, deadline, POLL);
        }
    }

    private static void pause(String what, Duration timeout, long deadline, Duration interval) throws InterruptedException {
        if (System.nanoTime() - deadline > 0) {
            throw new AssertionError("not within " + timeout.toMillis() + " ms: " + what);
        }
        Thread.sleep(interval.toMillis());
    }
}
