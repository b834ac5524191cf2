package io.hayloft.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class AwaitTest {
    @Test
    void anIntervalSpacesTheAskingAndTheDeadlineStillFailsTheWait() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        long t0 = System.nanoTime();
        Await.until("the third answer", Duration.ofSeconds(20), Duration.ofMillis(50), () -> asked.incrementAndGet() >= 3);
        assertThat(asked).hasValue(3);
        assertThat(System.nanoTime() - t0).as("two intervals between three askings").isGreaterThanOrEqualTo(100_000_000L);

        AtomicInteger never = new AtomicInteger();
        assertThatThrownBy(() -> Await.until("what never comes", Duration.ofMillis(200), Duration.ofMillis(50), () -> {
            never.incrementAndGet();
            return false;
        })).isInstanceOf(AssertionError.class).hasMessageContaining("not within 200 ms: what never comes");
        assertThat(never.get()).as("asked about every 50 ms for 200 ms").isBetween(2, 6);
    }
}
