package io.hayloft.directory.meta;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.directory.meta.MetaStore.DeleteRecord;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.StoreState;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * The properties a replicated directory rests on, over random histories of changes: every replica
 * that applies the same log entries holds the same state, record for record (the entries carry every
 * value they write); applying the tail of the log a second time (a replica that crashed after applying
 * an entry but before recording it) changes nothing; an entry's bytes decode to the same entry; and
 * an entry computed in another term than the one it is logged in changes nothing.
 */
class LogReplayPropertiesTest {

    @Property(tries = 12)
    void replicasApplyingTheSameEntriesHoldTheSameState(@ForAll long seed, @ForAll @IntRange(min = 1, max = 80) int length,
                                                        @ForAll @IntRange(min = 0, max = 30) int replayed) throws IOException {
        List<LogEntry> log = history(new Random(seed), length);
        Path dir = Files.createTempDirectory("replay");
        try (MetaStore a = MetaStore.openReplica(dir.resolve("a"), true); MetaStore b = MetaStore.openReplica(dir.resolve("b"), true)) {
            a.adoptClusterId("group");
            b.adoptClusterId("group");
            for (LogEntry e : log) {
                assertThat(LogEntry.decode(e.encode()).encode()).isEqualTo(e.encode());
                assertThat(LogEntry.decode(e.encode()).apply(a, 1).outcome()).isEqualTo(LogEntry.Outcome.APPLIED);
            }
            for (LogEntry e : log) {
                LogEntry.decode(e.encode()).apply(b, 1);
            }
            assertThat(b.digest()).isEqualTo(a.digest());
            // a crash after applying entries but before recording them: the tail is applied again
            for (LogEntry e : log.subList(Math.max(0, log.size() - replayed), log.size())) {
                e.apply(b, 1);
            }
            assertThat(b.digest()).isEqualTo(a.digest());
            // an entry of another term than the one it is logged at changes nothing
            var before = a.digest();
            LogEntry stale = new LogEntry(2, null, new Change.PutSetting("raid-hold", "x".getBytes(StandardCharsets.UTF_8)));
            assertThat(stale.apply(a, 3).outcome()).isEqualTo(LogEntry.Outcome.STALE_TERM);
            assertThat(a.digest()).isEqualTo(before);
        } finally {
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }

    /** A random history as a leader would log it: every value computed in advance, delete logs numbered on. */
    private static List<LogEntry> history(Random r, int length) {
        List<LogEntry> out = new ArrayList<>();
        Map<Integer, Long> heads = new HashMap<>();
        Map<Integer, VolumeInfo> volumes = new HashMap<>();
        for (int i = 0; i < length; i++) {
            Change c;
            switch (r.nextInt(8)) {
                case 0 -> c = new Change.PutStore(new StoreInfo("s" + r.nextInt(5), "10.0.0." + r.nextInt(5) + ":7001", "rack-" + r.nextInt(3),
                        1L << 40, r.nextLong() & Long.MAX_VALUE, r.nextLong() & Long.MAX_VALUE,
                        StoreState.values()[r.nextInt(StoreState.values().length)], r.nextInt(4), r.nextBoolean() ? null : "probe failed"));
                case 1 -> {
                    int id = 1 + r.nextInt(6);
                    VolumeInfo v = new VolumeInfo(id, VolumeState.values()[r.nextInt(VolumeState.values().length)],
                            List.of("s" + r.nextInt(5), "s" + r.nextInt(5)), r.nextInt(1 << 20), 1 << 30, r.nextLong() & Long.MAX_VALUE, "x");
                    volumes.put(id, v);
                    c = new Change.PutVolume(v);
                }
                case 2 -> c = new Change.RaiseCounters(r.nextInt(1_000_000), 1 + r.nextInt(100));
                case 3 -> {
                    int id = 1 + r.nextInt(6);
                    long head = heads.getOrDefault(id, 0L);
                    List<DeleteRecord> entries = new ArrayList<>();
                    for (int n = 1 + r.nextInt(4); n > 0; n--) {
                        head++;
                        entries.add(new DeleteRecord(head, r.nextLong() & Long.MAX_VALUE, r.nextLong(), r.nextInt(3)));
                    }
                    heads.put(id, head);
                    c = new Change.AppendDeletes(id, entries, volumes.get(id));
                }
                case 4 -> c = new Change.PutSetting(r.nextBoolean() ? "raid-hold" : "restored-from", new byte[] {(byte) r.nextInt()});
                case 5 -> c = new Change.DeleteSetting(r.nextBoolean() ? "raid-hold" : "restored-from");
                case 6 -> c = new Change.DeleteReclaim(1 + r.nextInt(6));
                default -> c = new Change.RaiseDeleteFloor(r.nextInt(50));
            }
            out.add(new LogEntry(1, null, c));
        }
        return out;
    }
}
