package io.hayloft.s3.sdk;

import static io.hayloft.s3.sdk.History.NOT_ACKNOWLEDGED;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.s3.sdk.History.Read;
import io.hayloft.s3.sdk.History.Write;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The read-after-write checker over hand-made histories (times in microseconds from 0): the stale
 * reads it must reject, and the concurrent histories it must accept, so that
 * {@link ReadAfterWriteTest} can fail and does not fail for the wrong reason.
 */
class HistoryTest {
    private static Write put(String key, String value, long invoked, long acknowledged) {
        return new Write(key, value, invoked * 1000, acknowledged == NOT_ACKNOWLEDGED ? acknowledged : acknowledged * 1000);
    }

    private static Write delete(String key, long invoked, long acknowledged) {
        return put(key, null, invoked, acknowledged);
    }

    private static Read get(String key, String value, long started, long ended) {
        return new Read("GET", key, value, started * 1000, ended * 1000);
    }

    private static List<String> check(List<Write> writes, Read... reads) {
        return History.check(writes, List.of(reads), 0);
    }

    @Test
    void aReadOfAValueOverwrittenBeforeItStartedIsRejected() {
        List<String> v = check(List.of(put("k", "a", 0, 10), put("k", "b", 20, 30)), get("k", "a", 40, 50));
        assertThat(v).singleElement().asString()
                .isEqualTo("GET k from 40 us to 50 us saw a (PUT a invoked at 0 us, acknowledged at 10 us), but PUT b invoked at 20 us,"
                        + " acknowledged at 30 us was acknowledged before the read started and invoked after that was acknowledged");
    }

    @Test
    void aNotFoundAfterAnAcknowledgedPutIsRejected() {
        assertThat(check(List.of(put("k", "a", 0, 10)), get("k", null, 20, 30))).singleElement().asString()
                .contains("GET k from 20 us to 30 us saw no object", "PUT a invoked at 0 us", "every DELETE of k");
        // And after a delete that was overwritten.
        assertThat(check(List.of(delete("k", 0, 10), put("k", "a", 20, 30)), get("k", null, 40, 50))).hasSize(1);
    }

    @Test
    void aValueAfterAnAcknowledgedDeleteIsRejected() {
        List<Write> w = List.of(put("k", "a", 0, 10), delete("k", 20, 30));
        assertThat(check(w, get("k", "a", 40, 50))).singleElement().asString().contains("but DELETE invoked at 20 us");
        assertThat(check(w, get("k", "a", 25, 50), get("k", null, 25, 50), get("k", null, 40, 50))).isEmpty();
    }

    @Test
    void aValueFromTheFutureOrFromNoWriteIsRejected() {
        List<Write> w = List.of(put("k", "a", 20, 30));
        assertThat(check(w, get("k", "a", 0, 10))).singleElement().asString()
                .contains("saw a, which no write of k invoked before the read ended made (PUT a invoked at 20 us");
        assertThat(check(w, get("k", "torn", 40, 50))).singleElement().asString()
                .isEqualTo("GET k from 40 us to 50 us saw torn, which no write of k invoked before the read ended made");
        assertThat(check(w, get("other", "a", 40, 50))).as("a value of another key").hasSize(1);
    }

    @Test
    void concurrentWritesMayBeSeenInEitherOrder() {
        // b overlaps a, and both overlap the reads: any of a, b (or, before a's acknowledgement, nothing) is legal.
        List<Write> w = List.of(put("k", "a", 0, 10), put("k", "b", 5, 50), delete("k", 8, 9));
        assertThat(check(w, get("k", "a", 20, 30), get("k", "b", 20, 30), get("k", "a", 60, 70), get("k", "b", 60, 70),
                get("k", "b", 6, 7), get("k", null, 1, 2), get("k", null, 60, 70))).isEmpty();
        // A read that ends as a write is invoked may or may not see it; one that starts as it is acknowledged must.
        assertThat(check(List.of(put("k", "a", 10, 20), put("k", "b", 30, 40)), get("k", null, 0, 15), get("k", "a", 35, 45),
                get("k", "b", 20, 31))).isEmpty();
        assertThat(check(List.of(put("k", "a", 10, 20), put("k", "b", 30, 40)), get("k", "a", 41, 45))).hasSize(1);
    }

    @Test
    void aFailedWriteMayTakeEffectAnyTimeAndSupersedesNothing() {
        List<Write> w = List.of(put("k", "a", 0, 10), put("k", "lost", 20, NOT_ACKNOWLEDGED), put("k", "b", 30, 40));
        assertThat(check(w, get("k", "lost", 25, 26), get("k", "lost", 1000, 1001), get("k", "b", 1000, 1001))).isEmpty();
        assertThat(check(w, get("k", "a", 1000, 1001))).as("b still supersedes a").hasSize(1);
        assertThat(check(w, get("k", "lost", 5, 15))).as("not before its invocation").hasSize(1);
    }

    @Test
    void keysAreIndependentAndStartAbsent() {
        List<Write> w = List.of(put("k1", "a", 0, 10));
        assertThat(check(w, get("k2", null, 20, 30), get("k3", null, 0, 1), get("k1", null, 0, 5))).isEmpty();
    }

    @Test
    void theRecorderChecksWhatItRecorded() {
        History h = new History();
        long t = System.nanoTime();
        h.add(new Write("k", "a", t, t + 10));
        h.add(new Write("k", "b", t + 20, t + 30));
        h.add(new Read("HEAD via gateway 1", "k", "b", t + 40, t + 50));
        assertThat(h.check()).isEmpty();
        h.add(new Read("GET via gateway 2", "k", "a", t + 40, t + 50));
        assertThat(h.check()).singleElement().asString().startsWith("GET via gateway 2 k from ");
        assertThat(h.writes()).hasSize(2);
        assertThat(h.reads()).hasSize(2);
    }
}
