package io.hayloft.raid;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Reservations on a source's egress and a sink's ingress: each link is a FIFO at the budget. */
class ThrottleTest {

    static final long SECOND = 1_000_000_000L;

    @Test
    void aSharedIngressSerialisesReadsFromDistinctSourcesAndSeparateLinksDoNot() {
        Throttle t = new Throttle(1_000_000);
        long now = System.nanoTime();
        long a = t.reserve("s1", "target", 1_000_000) - now;
        long b = t.reserve("s2", "target", 1_000_000) - now;
        long c = t.reserve("s3", "other", 1_000_000) - now;
        long d = t.reserve("s1", "other", 500_000) - now;
        // s1 -> target and s3 -> other each take one second; s2 waits for target's ingress.
        assertThat(a).isBetween(SECOND, SECOND + SECOND / 10);
        assertThat(b).isBetween(2 * SECOND, 2 * SECOND + SECOND / 10);
        assertThat(c).isBetween(SECOND, SECOND + SECOND / 10);
        // s1's egress is busy for 1 s and other's ingress for 1 s: half a megabyte more ends at 1.5 s.
        assertThat(d).isBetween(3 * SECOND / 2, 3 * SECOND / 2 + SECOND / 10);
    }

    @Test
    void aReleasedReservationGivesItsLinksTimeAndBytesBack() {
        Throttle t = new Throttle(1_000_000);
        long now = System.nanoTime();
        t.reserve("dead", "target", 1_000_000);
        t.reserve("dead", "target", 1_000_000);
        assertThat(t.ingressBytes("target")).isEqualTo(2_000_000);
        // Both reads failed without carrying a byte: the next read is not queued behind them.
        t.release("dead", "target", 1_000_000);
        t.release("dead", "target", 1_000_000);
        assertThat(t.ingressBytes("target")).isZero();
        assertThat(t.egressBytes("dead")).isZero();
        assertThat(t.reserve("live", "target", 1_000_000) - now).isBetween(SECOND, SECOND + SECOND / 10);
        assertThat(t.ingressBytes("target")).isEqualTo(1_000_000);
        assertThat(t.egressBytes("live")).isEqualTo(1_000_000);
    }

    @Test
    void unlimitedNeverWaitsAndANegativeBudgetIsRefused() {
        Throttle t = new Throttle(0);
        long before = System.nanoTime();
        assertThat(t.reserve("s", "t", 1L << 40)).isBetween(before, System.nanoTime());
        assertThatThrownBy(() -> new Throttle(-1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-1");
    }
}
