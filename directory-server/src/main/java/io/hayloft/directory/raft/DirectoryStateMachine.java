package io.hayloft.directory.raft;

import io.hayloft.directory.meta.LogEntry;
import io.hayloft.directory.meta.MetaStore;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.FileListSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.LifeCycle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The directory's state as a Raft state machine: each committed {@link LogEntry} is applied to this
 * replica's {@link MetaStore}, in log order, by {@link LogEntry#apply} (which reads nothing but the
 * entry and the state), its records and its index ({@code raft-applied}) written to the database in
 * one batch ({@link MetaStore#applyEntry}); the entries of a pack ({@link LogEntry#pack}) each in a
 * batch of its own that also records how many of the pack are applied ({@link MetaStore#applyPart}).
 * At a restart Ratis hands the entries after the last snapshot again: those at or below that index
 * are skipped, and of a pack applied in part only the entries not yet applied are applied. The answer to the leader's waiting
 * request is {@link LogEntry.Applied}.
 *
 * <p>A snapshot is a RocksDB checkpoint of the database, in the state machine directory of the Raft
 * storage as {@code snapshot-TERM-INDEX/} (the checkpoint's files); the newest two are kept. A
 * follower that is too far behind (the leader purged the log it needs) or has lost its disk receives
 * the files of the leader's newest snapshot from Ratis and {@link #reinitialize}s from them: the
 * database's records are replaced by the checkpoint's ({@link MetaStore#replaceContents}).
 *
 * <p>Thread-safe as Ratis uses it: applies come from one thread; snapshots are taken between applies.
 */
public final class DirectoryStateMachine extends BaseStateMachine {

    private static final Logger LOG = LoggerFactory.getLogger(DirectoryStateMachine.class);
    private static final Pattern SNAPSHOT = Pattern.compile("snapshot-(\\d+)-(\\d+)");

    private final MetaStore meta;
    private volatile File smDir;
    /** Entries at or below this index are in the database already (applied before a restart). */
    private volatile long skipThrough;
    /** A pack applied in part before a restart (0: none), and how many of its entries are in the database. */
    private volatile long partIndex;
    private volatile int partsDone;
    /** The index and term of the last entry this replica's database holds wholly (its {@code raft-applied}). */
    private volatile long[] whole = {0, 0};
    private final AtomicLong applied = new AtomicLong();

    public DirectoryStateMachine(MetaStore meta) {
        this.meta = meta;
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage storage) throws IOException {
        super.initialize(server, groupId, storage);
        this.smDir = storage.getStorageDir().getStateMachineDir();
        Files.createDirectories(smDir.toPath());
        recover();
        getLifeCycle().transition(LifeCycle.State.STARTING);
        getLifeCycle().transition(LifeCycle.State.RUNNING);
    }

    /** Takes up where the database is: the last entry applied wholly, and the pack applied in part after it. */
    void recover() {
        long[] a = meta.appliedIndex();
        skipThrough = a[0];
        long[] part = meta.partlyApplied();
        partIndex = part == null ? 0 : part[0];
        partsDone = part == null ? 0 : (int) part[2];
        whole = new long[] {a[0], a[1]};
        if (a[0] > 0) {
            updateLastAppliedTermIndex(a[1], a[0]);
        }
        applied.set(a[0]);
    }

    /** Before Ratis installs a leader's snapshot: no entry is applied until {@link #reinitialize()}. */
    @Override
    public void pause() {
        if (getLifeCycle().getCurrentState() == LifeCycle.State.RUNNING) {
            getLifeCycle().transition(LifeCycle.State.PAUSING);
            getLifeCycle().transition(LifeCycle.State.PAUSED);
        }
    }

    private final AtomicLong leaderChanges = new AtomicLong();
    private final AtomicLong installed = new AtomicLong();

    /** Snapshots installed from a leader since this replica started. */
    long installedSnapshots() {
        return installed.get();
    }

    @Override
    public void notifyLeaderChanged(RaftGroupMemberId member, RaftPeerId newLeader) {
        leaderChanges.incrementAndGet();
    }

    /** Told when this replica becomes a ready leader; called on Ratis' thread, so it must not block. */
    private volatile Runnable leaderReady = () -> { };

    void whenLeaderReady(Runnable r) {
        leaderReady = r;
    }

    @Override
    public void notifyLeaderReady() {
        leaderReady.run();
    }

    /** Leader changes this replica saw since it started. */
    long leaderChanges() {
        return leaderChanges.get();
    }

    /** Entries of the directory (not Raft's own) applied to this replica's database since it was created. */
    long appliedEntries() {
        return applied.get();
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext trx) {
        LogEntryProto e = trx.getLogEntry();
        long index = e.getIndex();
        if (index <= skipThrough) {
            // Replayed after a restart: the database is past it, and the last applied index must not go back.
            return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(new LogEntry.Applied(LogEntry.Outcome.APPLIED, 0).encode())));
        }
        byte[] data = e.getStateMachineLogEntry().getLogData().toByteArray();
        List<LogEntry> entries = LogEntry.decodeAll(data);
        long term = e.getTerm();
        List<LogEntry.Applied> answers = new ArrayList<>(entries.size());
        if (entries.size() == 1) {
            // The entry's records and its index in one batch: after a crash the entry is either wholly
            // applied and skipped, or not at all and applied again.
            LogEntry entry = entries.get(0);
            answers.add(meta.applyEntry(index, term, () -> entry.apply(meta, term)));
        } else {
            // A pack: each entry in a batch of its own, with how many of the pack are applied, so each
            // entry sees the records of those before it, and after a crash only the rest are applied.
            int from = index == partIndex ? partsDone : 0;
            long[] before = whole;
            for (int i = 0; i < entries.size(); i++) {
                LogEntry entry = entries.get(i);
                answers.add(i < from ? new LogEntry.Applied(LogEntry.Outcome.APPLIED, 0)
                        : meta.applyPart(index, term, i, entries.size(), before, () -> entry.apply(meta, term)));
            }
        }
        whole = new long[] {index, term};
        applied.set(index);
        updateLastAppliedTermIndex(term, index);
        return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(LogEntry.Applied.encodeAll(answers))));
    }

    /**
     * Raft's own entries (configurations, a new leader's first entry) move the last applied index too,
     * but not back: after a restart Ratis replays the log from the last snapshot, below the index the
     * database already holds (without this, the replay's first configuration entry failed Ratis'
     * "applied index only grows" check, the replica's state machine stopped and it never rejoined).
     */
    @Override
    public void notifyTermIndexUpdated(long term, long index) {
        if (index <= skipThrough) {
            return;
        }
        super.notifyTermIndexUpdated(term, index);
    }

    /** The read barrier's query: answered once this replica has applied everything committed before it. */
    @Override
    public CompletableFuture<Message> query(Message request) {
        return CompletableFuture.completedFuture(Message.valueOf(Long.toString(getLastAppliedTermIndex().getIndex())));
    }

    @Override
    public long takeSnapshot() throws IOException {
        TermIndex last = getLastAppliedTermIndex();
        if (last == null || last.getIndex() <= 0) {
            return -1;
        }
        Path target = smDir.toPath().resolve("snapshot-" + last.getTerm() + "-" + last.getIndex());
        if (!Files.exists(target)) {
            Path tmp = smDir.toPath().resolve("tmp-snapshot-" + last.getIndex());
            deleteTree(tmp);
            meta.checkpoint(tmp);
            Files.move(tmp, target);
            LOG.info("snapshot of the directory at index {} (term {}) in {}", last.getIndex(), last.getTerm(), target);
        }
        List<Path> all = snapshots();
        for (int i = 0; i < all.size() - 2; i++) {
            deleteTree(all.get(i));
        }
        return last.getIndex();
    }

    @Override
    public SnapshotInfo getLatestSnapshot() {
        List<Path> all = snapshots();
        if (all.isEmpty()) {
            return null;
        }
        Path dir = all.get(all.size() - 1);
        Matcher m = SNAPSHOT.matcher(dir.getFileName().toString());
        if (!m.matches()) {
            return null;
        }
        List<FileInfo> files = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            s.filter(Files::isRegularFile).sorted().forEach(p -> files.add(new FileInfo(p.toAbsolutePath(), null)));
        } catch (IOException e) {
            LOG.warn("cannot list the snapshot {}: {}", dir, e.toString());
            return null;
        }
        return new FileListSnapshotInfo(files, TermIndex.valueOf(Long.parseLong(m.group(1)), Long.parseLong(m.group(2))));
    }

    /** After Ratis installed a snapshot from the leader into the state machine directory: load it. */
    @Override
    public void reinitialize() throws IOException {
        load();
        if (getLifeCycle().getCurrentState() == LifeCycle.State.PAUSED) {
            getLifeCycle().transition(LifeCycle.State.STARTING);
            getLifeCycle().transition(LifeCycle.State.RUNNING);
        }
    }

    private void load() throws IOException {
        List<Path> all = snapshots();
        if (all.isEmpty()) {
            return;
        }
        Path dir = all.get(all.size() - 1);
        Matcher m = SNAPSHOT.matcher(dir.getFileName().toString());
        if (!m.matches()) {
            return;
        }
        long term = Long.parseLong(m.group(1));
        long index = Long.parseLong(m.group(2));
        if (index <= applied.get()) {
            return;
        }
        LOG.info("loading the leader's snapshot at index {} (term {}) from {}", index, term, dir);
        meta.replaceContents(dir);
        installed.incrementAndGet();
        meta.setAppliedIndex(index, term);
        skipThrough = index;
        partIndex = 0;
        whole = new long[] {index, term};
        applied.set(index);
        updateLastAppliedTermIndex(term, index);
    }

    private List<Path> snapshots() {
        File d = smDir;
        if (d == null || !d.isDirectory()) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(d.toPath())) {
            return s.filter(p -> Files.isDirectory(p) && SNAPSHOT.matcher(p.getFileName().toString()).matches())
                    .sorted(Comparator.comparingLong(p -> {
                        Matcher m = SNAPSHOT.matcher(p.getFileName().toString());
                        m.matches();
                        return Long.parseLong(m.group(2));
                    })).toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> s = Files.walk(p)) {
            for (Path x : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(x);
            }
        }
    }

    static String utf8(Message m) {
        return m.getContent().toString(StandardCharsets.UTF_8);
    }
}
