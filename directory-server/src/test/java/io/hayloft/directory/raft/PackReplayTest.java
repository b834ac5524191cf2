package io.hayloft.directory.raft;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.directory.meta.Change;
import io.hayloft.directory.meta.LogEntry;
import io.hayloft.directory.meta.MetaStore;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.proto.RaftProtos.StateMachineLogEntryProto;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A pack ({@link LogEntry#pack}) that a replica applied in part before it crashed: its database
 * records how many of the pack's entries it holds ({@link MetaStore#applyPart}), and after the restart
 * the {@link DirectoryStateMachine} applies only the rest, so every entry is applied once. The
 * entries carry request ids, so an entry applied a second time would answer REPEATED; and the state
 * after the replay equals a replica's that applied the pack in one go.
 */
class PackReplayTest {

    private static final long INDEX = 7;
    private static final long TERM = 2;

    @TempDir
    Path dir;

    private static List<LogEntry> entries() {
        List<LogEntry> out = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            VolumeInfo v = new VolumeInfo(i, VolumeState.WRITABLE, List.of("s1", "s2"), 0, 1L << 30, 1_767_139_200_000L, "test");
            out.add(new LogEntry(TERM, null, new Change.PutVolume(v), new LogEntry.Request("req-" + i, "{\"volume\":" + i + "}")));
        }
        // The last one reads what the first wrote: volume 1 sealed.
        out.set(4, new LogEntry(TERM, null, new Change.PutVolume(new VolumeInfo(1, VolumeState.READ_ONLY, List.of("s1", "s2"), 0,
                1L << 30, 1_767_139_200_000L, "sealed")), new LogEntry.Request("req-5", "{}")));
        return out;
    }

    private static byte[] pack() {
        return LogEntry.pack(entries().stream().map(LogEntry::encode).toList());
    }

    private static List<LogEntry.Applied> apply(DirectoryStateMachine sm) throws Exception {
        LogEntryProto proto = LogEntryProto.newBuilder().setIndex(INDEX).setTerm(TERM)
                .setStateMachineLogEntry(StateMachineLogEntryProto.newBuilder().setLogData(ByteString.copyFrom(pack()))).build();
        TransactionContext trx = TransactionContext.newBuilder().setStateMachine(sm).setServerRole(RaftPeerRole.FOLLOWER)
                .setLogEntry(proto).build();
        return LogEntry.Applied.decodeAll(sm.applyTransaction(trx).get().getContent().toByteArray());
    }

    /** The records the pack writes: its volumes, and the request ids recorded with their answers and numbers. */
    private static String state(MetaStore meta) {
        StringBuilder out = new StringBuilder(meta.volumes().toString());
        for (int i = 1; i <= 5; i++) {
            out.append('|').append(meta.requestAnswer("req-" + i));
        }
        return out.append('|').append(java.util.Arrays.toString(meta.setting("request-seq"))).toString();
    }

    @Test
    void aPackAppliedInPartIsFinishedOnceAfterARestart() throws Exception {
        var whole = new Object() {
            String digest;
        };
        try (MetaStore meta = MetaStore.open(dir.resolve("whole"), true)) {
            meta.setAppliedIndex(INDEX - 1, TERM);
            DirectoryStateMachine sm = new DirectoryStateMachine(meta);
            sm.recover();
            assertThat(apply(sm)).extracting(LogEntry.Applied::outcome).containsOnly(LogEntry.Outcome.APPLIED).hasSize(5);
            assertThat(meta.appliedIndex()).containsExactly(INDEX, TERM);
            assertThat(meta.partlyApplied()).isNull();
            assertThat(meta.volume(1).state()).isEqualTo(VolumeState.READ_ONLY);
            whole.digest = state(meta);
        }

        Path crashed = dir.resolve("crashed");
        try (MetaStore meta = MetaStore.open(crashed, true)) {
            meta.setAppliedIndex(INDEX - 1, TERM);
            // What the state machine wrote before the crash: the pack's first two entries, each with its marker.
            List<LogEntry> es = entries();
            for (int i = 0; i < 2; i++) {
                LogEntry e = es.get(i);
                meta.applyPart(INDEX, TERM, i, es.size(), new long[] {INDEX - 1, TERM}, () -> e.apply(meta, TERM));
            }
            assertThat(meta.appliedIndex()).as("the pack is not applied wholly").containsExactly(INDEX - 1, TERM);
            assertThat(meta.partlyApplied()).containsExactly(INDEX, TERM, 2);
        }
        try (MetaStore meta = MetaStore.open(crashed, false)) {
            assertThat(meta.partlyApplied()).as("the marker survives the restart").containsExactly(INDEX, TERM, 2);
            DirectoryStateMachine sm = new DirectoryStateMachine(meta);
            sm.recover();
            assertThat(apply(sm)).as("no entry answered REPEATED: none applied twice")
                    .extracting(LogEntry.Applied::outcome).containsOnly(LogEntry.Outcome.APPLIED).hasSize(5);
            assertThat(meta.appliedIndex()).containsExactly(INDEX, TERM);
            assertThat(meta.partlyApplied()).isNull();
            assertThat(state(meta)).as("the same state as a replica that applied the pack in one go").isEqualTo(whole.digest);

            // A replica whose database said only "index 6 applied" would apply all five again, and each would
            // answer REPEATED: the check above can tell.
            meta.setAppliedIndex(INDEX - 1, TERM);
            DirectoryStateMachine forgetful = new DirectoryStateMachine(meta);
            forgetful.recover();
            assertThat(apply(forgetful)).extracting(LogEntry.Applied::outcome).containsOnly(LogEntry.Outcome.REPEATED).hasSize(5);
        }
    }
}
