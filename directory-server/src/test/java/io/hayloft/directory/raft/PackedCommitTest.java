package io.hayloft.directory.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.directory.ChangeLog;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.meta.Change;
import io.hayloft.directory.meta.LogEntry;
import io.hayloft.testkit.Await;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * Changes committed through a group of three replicas in one JVM by 16 threads at once, each thread
 * writing its own records in order, with packing on (one entry in flight, so changes queue and go as
 * packs) and off: every change is acknowledged with its value, every replica holds every record with
 * the last value its thread wrote, the replicas' states are equal, and with packing on fewer log
 * entries were sent than changes (packs formed), with it off exactly as many.
 */
class PackedCommitTest {

    private LocalGroup group;

    @TempDir
    Path dir;

    @AfterEach
    void close() {
        if (group != null) {
            group.close();
        }
    }

    @ParameterizedTest(name = "packChanges={0}, entriesInFlight={1}")
    @CsvSource({"true, 1", "false, 2"})
    void concurrentChangesAreAppliedOnceInEachWritersOrderOnEveryReplica(boolean pack, int inFlight) throws Exception {
        group = LocalGroup.builder(3, () -> {
            DirectoryConfig c = new DirectoryConfig();
            c.minWritableVolumes = 1;
            c.probeIntervalMillis = 100_000;
            c.raft = new DirectoryConfig.Raft();
            c.raft.packChanges = pack;
            c.raft.entriesInFlight = inFlight;
            return c;
        }, dir).storeAdmin(AcceptingStores.INSTANCE).start();
        int leader = group.awaitLeader(Duration.ofSeconds(30));
        ChangeLog log = group.server(leader).directory().log();
        RaftChangeLog raft = (RaftChangeLog) log;
        long entriesBefore = raft.entriesSent();
        long changesBefore = raft.changesSent();

        int writers = 16;
        int each = 40;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                int writer = w;
                done.add(pool.submit(() -> {
                    long term = log.begin().term();
                    // Two records per writer: a pipelined run of changes to one (the last must win), and a
                    // run where each change waits for the one before.
                    List<CompletableFuture<Long>> inflight = new ArrayList<>();
                    for (int i = 0; i < each; i++) {
                        inflight.add(log.submit(new LogEntry(term, null, new Change.PutSetting("piped-" + writer, value(i)))));
                    }
                    for (CompletableFuture<Long> f : inflight) {
                        assertThat(ChangeLog.await(f)).isZero();
                    }
                    for (int i = 0; i < each; i++) {
                        log.commit(term, null, new Change.PutSetting("waited-" + writer, value(i)));
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        long changes = raft.changesSent() - changesBefore;
        long entries = raft.entriesSent() - entriesBefore;
        // The leader's own work (its warm-up, the cluster id) may add a change or two.
        assertThat(changes).isBetween(2L * writers * each, 2L * writers * each + 10);
        if (pack) {
            assertThat(entries).as("packs formed: %d changes in %d entries", changes, entries).isLessThanOrEqualTo(changes / 2);
        } else {
            assertThat(entries).isEqualTo(changes);
        }

        long index = group.appliedIndex(leader);
        for (int i = 0; i < 3; i++) {
            int r = i;
            Await.until("replica " + r + " applied through " + index, Duration.ofSeconds(30), () -> group.appliedIndex(r) >= index);
        }
        for (int i = 0; i < 3; i++) {
            var meta = group.server(i).directory().meta();
            for (int w = 0; w < writers; w++) {
                assertThat(meta.setting("piped-" + w)).as("replica %d, writer %d", i, w).isEqualTo(value(each - 1));
                assertThat(meta.setting("waited-" + w)).as("replica %d, writer %d", i, w).isEqualTo(value(each - 1));
            }
        }
        var digest = group.server(leader).directory().meta().digest();
        for (int i : IntStream.range(0, 3).toArray()) {
            assertThat(group.server(i).directory().meta().digest()).as("replica %d", i).isEqualTo(digest);
        }
    }

    @Test
    void aWindowOutsideOneToSixtyFourIsRefusedNamingTheKey() throws Exception {
        try (LocalGroup g = LocalGroup.builder(3, () -> {
            DirectoryConfig c = new DirectoryConfig();
            c.raft = new DirectoryConfig.Raft();
            return c;
        }, dir).build()) {
            for (int bad : new int[] {0, -1, 65, Integer.MAX_VALUE}) {
                DirectoryConfig c = g.config(0);
                c.raft.entriesInFlight = bad;
                assertThatThrownBy(c::validate).isInstanceOf(IllegalArgumentException.class)
                        .hasMessage("raft.entriesInFlight must be in 1..64, was " + bad);
            }
            for (int good : new int[] {1, 64}) {
                DirectoryConfig c = g.config(0);
                c.raft.entriesInFlight = good;
                assertThat(c.validate().raft.entriesInFlight).isEqualTo(good);
            }
        }
    }

    private static byte[] value(int i) {
        return ("v" + i).getBytes(StandardCharsets.UTF_8);
    }
}
