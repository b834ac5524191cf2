package io.hayloft.bench.directory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** heartbeat-fleet's open-loop schedule and its accounting, on a fake clock. */
class FleetScheduleTest {
    private static final long S = FleetSchedule.SECOND;
    private static final long MS = 1_000_000L;

    /** A clock that moves only when slept on or when the fake directory answers. */
    private static final class FakeClock implements FleetSchedule.Clock {
        long now;

        @Override
        public long nanoTime() {
            return now;
        }

        @Override
        public void sleepUntil(long nanos) {
            now = Math.max(now, nanos);
        }
    }

    @Test
    void phasesSpreadOverTheSecond() {
        assertThat(FleetSchedule.due(100, 0, 1000, 0)).isEqualTo(100);
        assertThat(FleetSchedule.due(0, 500, 1000, 2)).isEqualTo(2_500 * MS);
        assertThat(FleetSchedule.due(0, 999, 1000, 0)).isEqualTo(999 * MS);
    }

    @Test
    void everyStoreServedByExactlyOneConnection() {
        List<Integer> all = new ArrayList<>();
        for (int t = 0; t < 32; t++) {
            int[] mine = FleetSchedule.storesOf(t, 32, 1000);
            assertThat(mine.length).isBetween(31, 32);
            assertThat(mine).isSorted();
            Arrays.stream(mine).forEach(all::add);
        }
        assertThat(all).containsExactlyInAnyOrderElementsOf(IntStream.range(0, 1000).boxed().toList());
        assertThat(FleetSchedule.storesOf(5, 8, 3)).isEmpty(); // more connections than stores
    }

    @Test
    void aQuickDirectoryIsNeverLate() throws Exception {
        FakeClock clock = new FakeClock();
        FleetSchedule.Tally t = FleetSchedule.drive(new int[] {0, 1, 2, 3}, 4, 0, 0, 3 * S, clock, store -> {
            clock.now += MS;
            return 200;
        });
        assertThat(t.due).isEqualTo(12);
        assertThat(t.answered).isEqualTo(12);
        assertThat(t.late).isZero();
        assertThat(t.lateFraction()).isZero();
        assertThat(t.latency.getMaxValue()).isBetween(MS - MS / 100, MS + MS / 100);
    }

    @Test
    void aStallCountsAgainstEveryHeartbeatQueuedBehindIt() throws Exception {
        // Four stores on one connection, phases 0, 0.25, 0.5, 0.75 s; the first answer takes 2.5 s.
        FakeClock clock = new FakeClock();
        int[] calls = {0};
        FleetSchedule.Tally t = FleetSchedule.drive(new int[] {0, 1, 2, 3}, 4, 0, 0, 2 * S, clock, store -> {
            clock.now += calls[0]++ == 0 ? 2_500 * MS : MS;
            return 200;
        });
        assertThat(t.due).isEqualTo(8);
        assertThat(t.answered).isEqualTo(8);
        // answered at 2.5 s + 1..7 ms, due at 0, 0.25, ..., 1.75 s: all but the last more than 1 s late
        assertThat(t.late).isEqualTo(7);
        assertThat(t.lateFraction()).isEqualTo(7 / 8.0);
        assertThat(t.latency.getValueAtPercentile(50) / 1e6).isCloseTo(1_504, within(5.0)); // a closed loop would say 1 ms
        assertThat(t.lastDone).isEqualTo(2_507 * MS);
    }

    @Test
    void heartbeatsStillUnsentAfterTheGraceCountAsLate() throws Exception {
        FakeClock clock = new FakeClock();
        FleetSchedule.Tally t = FleetSchedule.drive(new int[] {0, 1}, 2, 0, 0, 3 * S, clock, store -> {
            clock.now += 4 * S;
            return 200;
        });
        // sent: due 0 (answered at 4 s) and due 0.5 (at 8 s, past end + grace = 5 s); then 4 left unsent
        assertThat(t.answered).isEqualTo(2);
        assertThat(t.unsent).isEqualTo(4);
        assertThat(t.due).isEqualTo(6);
        assertThat(t.late).isEqualTo(6);
        assertThat(t.latency.getTotalCount()).isEqualTo(6);
        assertThat(t.latency.getMaxValue() / 1e9).isCloseTo(7.5, within(0.01));
        DirectoryLoad.Result r = DirectoryLoad.fleetResult("heartbeat-fleet", 1, t, 0, 3 * S, 3);
        assertThat(r.seconds()).isCloseTo(8.0, within(1e-9)); // to the last answer
        assertThat(r.opsPerSec()).isCloseTo(0.25, within(1e-9));
        assertThat(r.lateFraction()).isEqualTo(1.0);
        assertThat(r.firstError()).contains("4 due but not sent");
    }

    @Test
    void warmUpHeartbeatsAreSentButNotCounted() throws Exception {
        FakeClock clock = new FakeClock();
        List<Integer> sent = new ArrayList<>();
        FleetSchedule.Tally t = FleetSchedule.drive(new int[] {0, 1}, 2, 0, S, 2 * S, clock, store -> {
            sent.add(store);
            clock.now += MS;
            return store == 1 ? 503 : 200;
        });
        assertThat(sent).containsExactly(0, 1, 0, 1);
        assertThat(t.due).isEqualTo(2);
        assertThat(t.answered).isEqualTo(1);
        assertThat(t.errors).isEqualTo(1);
        assertThat(t.firstError).isEqualTo("status 503");
        DirectoryLoad.Result r = DirectoryLoad.fleetResult("heartbeat-fleet", 1, t, S, 2 * S, 1);
        assertThat(r.ops()).isEqualTo(1);
        assertThat(r.errors()).isEqualTo(1);
        assertThat(r.lateFraction()).isZero();
    }

    @Test
    void talliesAddUp() {
        FleetSchedule.Tally a = new FleetSchedule.Tally();
        a.answered(0, 2 * S);
        FleetSchedule.Tally b = new FleetSchedule.Tally();
        b.answered(0, 10 * MS);
        b.failed("boom");
        a.add(b);
        assertThat(a.due).isEqualTo(3);
        assertThat(a.late).isEqualTo(1);
        assertThat(a.errors).isEqualTo(1);
        assertThat(a.firstError).isEqualTo("boom");
        assertThat(a.lastDone).isEqualTo(2 * S);
        assertThat(a.latency.getTotalCount()).isEqualTo(2);
    }
}
