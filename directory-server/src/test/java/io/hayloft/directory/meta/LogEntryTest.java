package io.hayloft.directory.meta;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.hayloft.format.directory.RaidLease;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link LogEntry#apply} on a real RocksDB {@link MetaStore}: a fenced change is applied only while the
 * stored raid lease has its epoch, a holder, and runs past the entry's {@code now} (equal, other
 * epoch, expired at exactly {@code now}, released, never granted); an entry whose term is not the log
 * term it sits at is dropped whatever its fence; a dropped entry changes nothing. The same entries on
 * two stores give the same outcomes and the same state (nothing read but the entry and the state).
 */
class LogEntryTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long NOW = 1_767_139_200_000L;

    @TempDir
    Path dir;

    private static VolumeInfo volume(int id, VolumeState state) {
        return new VolumeInfo(id, state, List.of("s1", "s2"), 1 << 20, 1L << 30, NOW - 60_000, "test");
    }

    private static Change lease(String holder, long expires, long epoch) throws Exception {
        return new Change.PutSetting(LogEntry.RAID_LEASE, JSON.writeValueAsBytes(new RaidLease(holder, expires, epoch)));
    }

    /** The entries of the test's log, with the log term each sits at, and the outcome each must have. */
    private record Step(LogEntry entry, long logTerm, LogEntry.Outcome expected) {
    }

    private static List<Step> log() throws Exception {
        List<Step> steps = new ArrayList<>();
        // Term 0 (a single directory): no fence, applied; a fence with no lease record at all: lost.
        steps.add(new Step(new LogEntry(0, null, new Change.PutVolume(volume(1, VolumeState.READ_ONLY))), 0, LogEntry.Outcome.APPLIED));
        steps.add(new Step(new LogEntry(0, new LogEntry.Fence(1, NOW), new Change.PutVolume(volume(1, VolumeState.ENCODING))), 0,
                LogEntry.Outcome.LEASE_LOST));
        // raid-node A holds epoch 1 until NOW + 10 s.
        steps.add(new Step(new LogEntry(3, null, lease("raid-a", NOW + 10_000, 1)), 3, LogEntry.Outcome.APPLIED));
        steps.add(new Step(new LogEntry(3, new LogEntry.Fence(1, NOW), new Change.PutVolume(volume(2, VolumeState.ENCODING))), 3,
                LogEntry.Outcome.APPLIED));
        steps.add(new Step(new LogEntry(3, new LogEntry.Fence(2, NOW), new Change.PutVolume(volume(3, VolumeState.ENCODING))), 3,
                LogEntry.Outcome.LEASE_LOST)); // an epoch the lease never had
        steps.add(new Step(new LogEntry(3, new LogEntry.Fence(0, NOW), new Change.PutVolume(volume(3, VolumeState.ENCODING))), 3,
                LogEntry.Outcome.LEASE_LOST));
        steps.add(new Step(new LogEntry(3, new LogEntry.Fence(1, NOW + 9_999), new Change.PutVolume(volume(4, VolumeState.ENCODING))), 3,
                LogEntry.Outcome.APPLIED)); // the last millisecond of the lease
        steps.add(new Step(new LogEntry(3, new LogEntry.Fence(1, NOW + 10_000), new Change.PutVolume(volume(5, VolumeState.ENCODING))), 3,
                LogEntry.Outcome.LEASE_LOST)); // expired exactly at now
        steps.add(new Step(new LogEntry(3, new LogEntry.Fence(1, Long.MAX_VALUE), new Change.PutVolume(volume(5, VolumeState.ENCODING))), 3,
                LogEntry.Outcome.LEASE_LOST));
        // Computed by the leader of term 3, logged at term 4 (it lost its leadership meanwhile): dropped, fence or not.
        steps.add(new Step(new LogEntry(3, null, new Change.PutVolume(volume(6, VolumeState.READ_ONLY))), 4, LogEntry.Outcome.STALE_TERM));
        steps.add(new Step(new LogEntry(3, new LogEntry.Fence(1, NOW), new Change.PutVolume(volume(6, VolumeState.ENCODING))), 4,
                LogEntry.Outcome.STALE_TERM));
        steps.add(new Step(new LogEntry(5, new LogEntry.Fence(1, NOW), new Change.PutVolume(volume(6, VolumeState.ENCODING))), 4,
                LogEntry.Outcome.STALE_TERM)); // a term above the log's too
        steps.add(new Step(new LogEntry(0, null, new Change.PutVolume(volume(6, VolumeState.READ_ONLY))), 4, LogEntry.Outcome.STALE_TERM));
        // A releases: the record keeps epoch 1 without a holder; A's epoch no longer fences anything.
        steps.add(new Step(new LogEntry(4, null, lease(null, 0, 1)), 4, LogEntry.Outcome.APPLIED));
        steps.add(new Step(new LogEntry(4, new LogEntry.Fence(1, NOW), new Change.PutVolume(volume(7, VolumeState.ENCODING))), 4,
                LogEntry.Outcome.LEASE_LOST));
        // B takes it at epoch 2: B's commits apply, A's (epoch 1) do not, in any later term.
        steps.add(new Step(new LogEntry(4, null, lease("raid-b", NOW + 30_000, 2)), 4, LogEntry.Outcome.APPLIED));
        steps.add(new Step(new LogEntry(4, new LogEntry.Fence(1, NOW + 1), new Change.PutVolume(volume(2, VolumeState.ERASURE_CODED))), 4,
                LogEntry.Outcome.LEASE_LOST));
        steps.add(new Step(new LogEntry(9, new LogEntry.Fence(1, NOW + 1), new Change.DeleteSetting(LogEntry.RAID_LEASE)), 9,
                LogEntry.Outcome.LEASE_LOST));
        steps.add(new Step(new LogEntry(9, new LogEntry.Fence(2, NOW + 1), new Change.PutVolume(volume(8, VolumeState.ENCODING))), 9,
                LogEntry.Outcome.APPLIED));
        return steps;
    }

    @Test
    void fencedAndStaleEntriesHaveDeterministicOutcomesAndDroppedOnesChangeNothing() throws Exception {
        List<Step> steps = log();
        List<String> states = new ArrayList<>();
        for (String name : new String[] {"one", "two"}) {
            try (MetaStore meta = MetaStore.open(dir.resolve(name), true)) {
                for (Step s : steps) {
                    String before = state(meta);
                    // Through the wire form, as a replica reads it from the log, and its answer through its own.
                    LogEntry.Applied a = LogEntry.Applied.decode(LogEntry.decode(s.entry().encode()).apply(meta, s.logTerm()).encode());
                    assertThat(a.outcome()).as("%s at log term %d", s.entry(), s.logTerm()).isEqualTo(s.expected());
                    assertThat(a.value()).as("no value but a delete-log head").isZero();
                    if (a.outcome() != LogEntry.Outcome.APPLIED) {
                        assertThat(state(meta)).as("a dropped entry changes nothing: %s", s.entry()).isEqualTo(before);
                    }
                }
                // What was applied: volumes 1 (READ_ONLY), 2 and 4 (A's epoch 1 while it held), 8 (B's epoch 2).
                assertThat(meta.volumes()).extracting(VolumeInfo::id).containsExactly(1, 2, 4, 8);
                assertThat(meta.volume(2).state()).isEqualTo(VolumeState.ENCODING);
                assertThat(meta.volume(1).state()).isEqualTo(VolumeState.READ_ONLY);
                assertThat(JSON.readValue(meta.setting(LogEntry.RAID_LEASE), RaidLease.class))
                        .isEqualTo(new RaidLease("raid-b", NOW + 30_000, 2));
                states.add(state(meta));
            }
        }
        assertThat(states.get(1)).as("two replicas applying the same entries hold the same state").isEqualTo(states.get(0));
    }

    @Test
    void leaseHoldsNeedsTheEpochAHolderAndTimeLeft() throws Exception {
        try (MetaStore meta = MetaStore.open(dir.resolve("m"), true)) {
            assertThat(LogEntry.leaseHolds(meta, new LogEntry.Fence(0, 0))).as("no lease was ever granted").isFalse();
            meta.putSetting(LogEntry.RAID_LEASE, JSON.writeValueAsBytes(new RaidLease("h", 100, Long.MAX_VALUE)));
            assertThat(LogEntry.leaseHolds(meta, new LogEntry.Fence(Long.MAX_VALUE, 99))).isTrue();
            assertThat(LogEntry.leaseHolds(meta, new LogEntry.Fence(Long.MAX_VALUE, 100))).isFalse();
            assertThat(LogEntry.leaseHolds(meta, new LogEntry.Fence(Long.MIN_VALUE, 99))).isFalse();
            assertThat(LogEntry.leaseHolds(meta, new LogEntry.Fence(Long.MAX_VALUE - 1, 99))).isFalse();
            meta.putSetting(LogEntry.RAID_LEASE, "not json".getBytes(StandardCharsets.UTF_8));
            assertThatThrownBy(() -> LogEntry.leaseHolds(meta, new LogEntry.Fence(1, 0))).isInstanceOf(MetaStoreException.class)
                    .hasMessageContaining("corrupt raid-lease record");
        }
    }

    @Test
    void theWireFormIsVersionedJson() throws Exception {
        LogEntry e = new LogEntry(7, new LogEntry.Fence(3, NOW), new Change.PutVolume(volume(9, VolumeState.READ_ONLY)));
        var tree = JSON.readTree(e.encode());
        assertThat(tree.path("v").asInt()).isEqualTo(LogEntry.FORMAT).isEqualTo(1);
        assertThat(tree.path("term").asLong()).isEqualTo(7);
        assertThat(tree.path("fence").path("epoch").asLong()).isEqualTo(3);
        assertThat(tree.path("fence").path("now").asLong()).isEqualTo(NOW);
        assertThat(tree.path("change").path("type").asText()).isEqualTo("putVolume");
        assertThat(LogEntry.decode(e.encode())).isEqualTo(e);
        assertThat(JSON.readTree(new LogEntry(0, null, new Change.RaiseCounters(5, 6)).encode()).path("fence").isNull()).isTrue();
        // An entry without a request id is written exactly as before the field existed: the same four fields.
        assertThat(JSON.readTree(new LogEntry(0, null, new Change.RaiseCounters(5, 6)).encode()).fieldNames())
                .toIterable().containsExactly("v", "term", "fence", "change");
        LogEntry asked = new LogEntry(2, null, new Change.RaiseCounters(5, 6), new LogEntry.Request("id-1", "{\"a\":\"\u00e9\"}"));
        assertThat(JSON.readTree(asked.encode()).path("request").path("id").asText()).isEqualTo("id-1");
        assertThat(LogEntry.decode(asked.encode())).isEqualTo(asked);
        // Unknown fields are ignored; an unknown format or a missing change is refused, not skipped.
        assertThat(LogEntry.decode("{\"v\":1,\"term\":2,\"fence\":null,\"later\":1,\"change\":{\"type\":\"raiseDeleteFloor\",\"floor\":9}}"
                .getBytes(StandardCharsets.UTF_8)).change()).isEqualTo(new Change.RaiseDeleteFloor(9));
        assertThatThrownBy(() -> LogEntry.decode("{\"v\":2,\"term\":2,\"change\":{\"type\":\"raiseDeleteFloor\",\"floor\":9}}"
                .getBytes(StandardCharsets.UTF_8))).isInstanceOf(MetaStoreException.class).hasMessageContaining("format 2");
        assertThatThrownBy(() -> LogEntry.decode("{\"v\":1,\"term\":2}".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(MetaStoreException.class).hasMessageContaining("without a change");
        assertThatThrownBy(() -> LogEntry.decode("{\"v\":1,\"term\":2,\"change\":{\"type\":\"noSuchChange\"}}".getBytes(StandardCharsets.UTF_8)))
                .isInstanceOf(MetaStoreException.class).hasMessageContaining("unreadable");
    }

    /**
     * The same log, its entries packed ({@link LogEntry#pack}) in runs of 1 to 6 that share a log term
     * and applied through their wire forms: each entry has the outcome it has alone, and the state is
     * the state of the entries applied one by one.
     */
    @Test
    void packedEntriesHaveTheOutcomesAndStateOfTheSameEntriesOneByOne() throws Exception {
        List<Step> steps = log();
        String alone;
        try (MetaStore meta = MetaStore.open(dir.resolve("alone"), true)) {
            for (Step s : steps) {
                s.entry().apply(meta, s.logTerm());
            }
            alone = state(meta);
        }
        for (int run = 1; run <= 6; run++) {
            try (MetaStore meta = MetaStore.open(dir.resolve("packed-" + run), true)) {
                for (int i = 0; i < steps.size(); ) {
                    long logTerm = steps.get(i).logTerm();
                    List<Step> pack = new ArrayList<>();
                    while (i < steps.size() && pack.size() < run && steps.get(i).logTerm() == logTerm) {
                        pack.add(steps.get(i++));
                    }
                    byte[] data = LogEntry.pack(pack.stream().map(s -> s.entry().encode()).toList());
                    List<LogEntry> read = LogEntry.decodeAll(data);
                    assertThat(read.stream().map(e -> new String(e.encode(), StandardCharsets.UTF_8)).toList())
                            .containsExactlyElementsOf(pack.stream().map(s -> new String(s.entry().encode(), StandardCharsets.UTF_8)).toList());
                    List<LogEntry.Applied> answers = new ArrayList<>();
                    for (LogEntry e : read) {
                        answers.add(e.apply(meta, logTerm));
                    }
                    assertThat(LogEntry.Applied.decodeAll(LogEntry.Applied.encodeAll(answers))).extracting(LogEntry.Applied::outcome)
                            .containsExactlyElementsOf(pack.stream().map(Step::expected).toList());
                }
                assertThat(state(meta)).as("packs of %d", run).isEqualTo(alone);
            }
        }
    }

    @Test
    void aPackIsVersionedJsonAndABadOneIsRefused() throws Exception {
        LogEntry a = new LogEntry(7, null, new Change.RaiseCounters(5, 6));
        LogEntry b = new LogEntry(7, new LogEntry.Fence(3, NOW), new Change.RaiseDeleteFloor(9), new LogEntry.Request("\u00e9-id", "{}"));
        assertThat(LogEntry.pack(List.of(a.encode()))).as("a pack of one is the entry itself").isEqualTo(a.encode());
        byte[] two = LogEntry.pack(List.of(a.encode(), b.encode()));
        var tree = JSON.readTree(two);
        assertThat(tree.path("v").asInt()).isEqualTo(LogEntry.PACK_FORMAT).isEqualTo(2);
        assertThat(tree.path("entries")).hasSize(2);
        assertThat(LogEntry.decodeAll(two)).containsExactly(a, b);
        assertThat(LogEntry.decodeAll(a.encode())).containsExactly(a);
        for (String bad : new String[] {"{\"v\":2,\"entries\":[]}", "{\"v\":2}", "{\"v\":2,\"entries\":[{\"v\":2,\"entries\":[]}]}",
                "{\"v\":2,\"entries\":[{\"v\":1,\"term\":1}]}", "{\"v\":3,\"term\":1,\"change\":{\"type\":\"raiseDeleteFloor\",\"floor\":9}}",
                "{\"v\":2,\"entries\":[null]}", "[]", ""}) {
            assertThatThrownBy(() -> LogEntry.decodeAll(bad.getBytes(StandardCharsets.UTF_8))).as(bad).isInstanceOf(MetaStoreException.class);
        }
        assertThatThrownBy(() -> LogEntry.Applied.decodeAll(new byte[10])).isInstanceOf(MetaStoreException.class);
        assertThatThrownBy(() -> LogEntry.Applied.decodeAll(new byte[0])).isInstanceOf(MetaStoreException.class);
    }

    /** Every record the test's entries touch, as text. */
    private static String state(MetaStore meta) {
        byte[] lease = meta.setting(LogEntry.RAID_LEASE);
        return meta.volumes() + "|" + (lease == null ? null : new String(lease, StandardCharsets.UTF_8)) + "|" + meta.stores();
    }
}
