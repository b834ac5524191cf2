package io.hayloft.directory;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waits for a condition the test cannot be told about (a heartbeat landing, a probe's verdict). */
final class Await {

    private Await() {
    }

    /** Polls {@code condition} until it holds; fails the test after 20 s. */
    static void until(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("condition not met within 20 s");
            }
            Thread.sleep(5);
        }
    }
}
