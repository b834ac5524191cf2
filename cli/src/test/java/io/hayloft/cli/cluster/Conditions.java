package io.hayloft.cli.cluster;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waiting for a condition of a running cluster (a state the health checker or a heartbeat sets), with a deadline. */
final class Conditions {
    private Conditions() {
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 20 s: " + what);
            }
            Thread.sleep(5);
        }
    }
}
