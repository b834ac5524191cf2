package io.hayloft.directory.raft;

import io.hayloft.directory.ChangeLog;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.meta.Change;
import io.hayloft.directory.meta.LogEntry;
import io.hayloft.directory.meta.MetaStore;
import io.hayloft.format.errors.ApiException;
import io.hayloft.format.errors.DirectoryErrors;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.netty.NettyConfigKeys;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.SetConfigurationRequest;
import org.apache.ratis.protocol.SnapshotManagementRequest;
import org.apache.ratis.protocol.TransferLeadershipRequest;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The change log of a directory replica in a Raft group (Apache Ratis; docs/operations.md "A
 * replicated directory"). Changes are appended to the group's log on the leader, fsynced on a
 * majority, and applied by every replica's {@link DirectoryStateMachine}; {@link #commit} returns once
 * this replica applied it.
 *
 * <ul>
 * <li>{@link #begin()} is the read barrier: on the leader a read-only request through Ratis'
 *     linearizable read (a leader lease when it holds one, a read index otherwise), answered once this
 *     replica applied everything committed before it; on a follower a NOT_LEADER answer naming the
 *     leader's HTTP address (each peer's HTTP address is its Raft peer's client address, so a
 *     replica added later is known to all).</li>
 * <li>The group id is fixed ({@link #GROUP}): a replica started with an empty data directory and the
 *     group's peers formats its storage and is then caught up by the leader (entries, or a snapshot
 *     when the log it needs is purged); it cannot win an election against replicas with longer logs,
 *     so it never forms a cluster of its own.</li>
 * <li>The first leader of a new group commits {@link Change.InitCluster} with its cluster id, so
 *     every replica reports the same one.</li>
 * </ul>
 *
 * <p>Layout under the replica's {@code dataDir}: {@code db/} (the RocksDB database) and
 * {@code raft/} (Ratis' storage: the log, its metadata and the snapshots). Thread-safe.
 */
public final class RaftChangeLog implements ChangeLog {

    private static final Logger LOG = LoggerFactory.getLogger(RaftChangeLog.class);
    /** The one group id of every directory group. */
    public static final RaftGroupId GROUP = RaftGroupId.valueOf(UUID.nameUUIDFromBytes("hayloft-directory".getBytes(StandardCharsets.UTF_8)));

    private final RaftServer server;
    private final DirectoryStateMachine sm;
    private final RaftPeerId self;
    private final MetaStore meta;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    private final long timeoutMillis;
    /** The replica's own background work: the cluster-id duty, then the leader-ready tasks ({@link #onLeaderReady}). */
    private final ScheduledExecutorService duties;
    private final ScheduledFuture<?> initDuty;
    /**
     * This leader's entries whose callers were answered "timed out" while Ratis still holds them: each
     * may yet be committed and applied (or be dropped when this replica stops leading). While any is
     * here no change begins ({@link #writeTerm}): the callers' latches were released with the timeout,
     * and a change computed now could miss an entry that is applied after it.
     */
    private final Set<CompletableFuture<?>> unresolved = ConcurrentHashMap.newKeySet();

    /** Most changes in one pack, and most bytes (a larger change goes alone). */
    static final int MAX_PACK = 256;
    static final int MAX_PACK_BYTES = 256 << 10;
    /** Whether changes are packed; the changes waiting for room in the window, the window, and who sends them. */
    private final boolean packChanges;
    private final ConcurrentLinkedQueue<Queued> queue = new ConcurrentLinkedQueue<>();
    private final Semaphore window;
    private final Object drainLock = new Object();
    private final ExecutorService sender;
    /** Log entries this replica sent as leader, and the changes in them (more changes than entries: packs formed). */
    private final AtomicLong entriesSent = new AtomicLong();
    private final AtomicLong changesSent = new AtomicLong();

    private RaftChangeLog(RaftServer server, DirectoryStateMachine sm, RaftPeerId self, MetaStore meta, long timeoutMillis,
                          boolean packChanges, int entriesInFlight) {
        this.server = server;
        this.sm = sm;
        this.self = self;
        this.meta = meta;
        this.timeoutMillis = timeoutMillis;
        this.window = new Semaphore(entriesInFlight);
        this.packChanges = packChanges;
        this.sender = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "hayloft-raft-sender");
            t.setDaemon(true);
            return t;
        });
        this.duties = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "hayloft-raft-duties");
            t.setDaemon(true);
            return t;
        });
        this.initDuty = duties.scheduleWithFixedDelay(this::initCluster, 100, 200, TimeUnit.MILLISECONDS);
        sm.whenLeaderReady(() -> leaderReady(0));
    }

    /**
     * Runs the leader-ready tasks once this replica's reads are served (Ratis tells the state machine a
     * moment before: the startup entry applied, its own bookkeeping not yet done), checking again every
     * 10 ms for at most a second; nothing when it stopped leading meanwhile.
     */
    private void leaderReady(int checks) {
        try {
            if (leads()) {
                leaderReadyTasks.forEach(duties::execute);
            } else if (checks < 100 && division().getInfo().isLeader()) {
                duties.schedule(() -> leaderReady(checks + 1), 10, TimeUnit.MILLISECONDS);
            }
        } catch (RejectedExecutionException e) {
            // closing
        }
    }

    private final List<Runnable> leaderReadyTasks = new CopyOnWriteArrayList<>();

    @Override
    public void onLeaderReady(Runnable task) {
        leaderReadyTasks.add(task);
    }

    /** Where a replica keeps its database under {@code dataDir}. */
    public static Path databaseDir(Path dataDir) {
        return dataDir.resolve("db");
    }

    /** Where a replica keeps its Raft storage under {@code dataDir}. */
    public static Path raftDir(Path dataDir) {
        return dataDir.resolve("raft");
    }

    /**
     * Starts this replica's Raft server over {@code meta}: recovers its log when {@code dataDir/raft}
     * holds one, else formats a new storage for the configured group.
     */
    public static RaftChangeLog start(DirectoryConfig.Raft cfg, Path dataDir, MetaStore meta) throws IOException {
        RaftPeerId self = RaftPeerId.valueOf(cfg.id);
        List<RaftPeer> peers = new ArrayList<>();
        DirectoryConfig.Peer mine = null;
        for (DirectoryConfig.Peer p : cfg.peers) {
            peers.add(peer(p));
            if (p.id.equals(cfg.id)) {
                mine = p;
            }
        }
        RaftProperties props = new RaftProperties();
        RaftConfigKeys.Rpc.setType(props, SupportedRpcType.NETTY);
        int colon = mine.raft.lastIndexOf(':');
        NettyConfigKeys.Server.setHost(props, cfg.bindHost != null ? cfg.bindHost : mine.raft.substring(0, colon));
        NettyConfigKeys.Server.setPort(props, Integer.parseInt(mine.raft.substring(colon + 1)));
        Path storage = raftDir(dataDir);
        Files.createDirectories(storage);
        RaftServerConfigKeys.setStorageDir(props, List.of(storage.toFile()));
        RaftServerConfigKeys.Rpc.setTimeoutMin(props, TimeDuration.valueOf(cfg.electionTimeoutMillis, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setTimeoutMax(props, TimeDuration.valueOf(cfg.electionTimeoutMillis * 2, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMin(props, TimeDuration.valueOf(cfg.electionTimeoutMillis, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setFirstElectionTimeoutMax(props, TimeDuration.valueOf(cfg.electionTimeoutMillis * 2, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setRequestTimeout(props, TimeDuration.valueOf(Math.max(3000, cfg.electionTimeoutMillis * 4), TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Read.setOption(props, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
        RaftServerConfigKeys.Read.setLeaderLeaseEnabled(props, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(props, true);
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(props, cfg.snapshotEvery);
        RaftServerConfigKeys.Snapshot.setRetentionFileNum(props, 2);
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(props, true);
        RaftServerConfigKeys.Log.setPurgeGap(props, (int) Math.min(Integer.MAX_VALUE, Math.max(1, cfg.snapshotEvery / 4)));
        RaftServerConfigKeys.Log.setSegmentSizeMax(props, SizeInBytes.valueOf(cfg.logSegmentBytes));
        RaftServerConfigKeys.Log.setPreallocatedSize(props, SizeInBytes.valueOf(Math.min(1 << 20, cfg.logSegmentBytes)));
        RaftServerConfigKeys.Log.Appender.setInstallSnapshotEnabled(props, true);
        RaftServerConfigKeys.Log.Appender.setSnapshotChunkSizeMax(props, SizeInBytes.valueOf("4MB"));

        DirectoryStateMachine sm = new DirectoryStateMachine(meta);
        File groupDir = storage.resolve(GROUP.getUuid().toString()).toFile();
        boolean recover = groupDir.isDirectory() && new File(groupDir, "current").isDirectory();
        RaftServer server = RaftServer.newBuilder()
                .setServerId(self)
                .setGroup(RaftGroup.valueOf(GROUP, peers))
                .setStateMachine(sm)
                .setProperties(props)
                .setOption(recover ? RaftStorage.StartupOption.RECOVER : RaftStorage.StartupOption.FORMAT)
                .build();
        server.start();
        LOG.info("directory replica {} {} the Raft group {} ({} peers; raft at {})", cfg.id, recover ? "rejoined" : "formed or joined",
                GROUP, peers.size(), mine.raft);
        return new RaftChangeLog(server, sm, self, meta, cfg.commitTimeoutMillis, cfg.packChanges, cfg.entriesInFlight);
    }

    static RaftPeer peer(DirectoryConfig.Peer p) {
        return RaftPeer.newBuilder().setId(p.id).setAddress(p.raft).setClientAddress(p.http).build();
    }

    private RaftServer.Division division() {
        try {
            return server.getDivision(GROUP);
        } catch (IOException e) {
            throw DirectoryErrors.NO_LEADER.exception("this directory replica is not in its group yet: " + e.getMessage());
        }
    }

    // ------------------------------------------------------------------ ChangeLog

    @Override
    public Writer begin() {
        return new Writer(this, writeTerm(), null);
    }

    @Override
    public Writer begin(LogEntry.Fence fence) {
        return new Writer(this, writeTerm(), fence);
    }

    /**
     * A write's term, with no round trip: this replica leads and is ready (it applied every entry
     * committed before its term), so the state it computes a change from holds everything committed,
     * but for its own entries still in flight (the callers' latches order those that touch the same
     * records). A leader that lost its term meanwhile cannot commit the entry; an entry that reaches
     * the log in another term is dropped ({@link LogEntry.Outcome#STALE_TERM}). A leader not ready yet
     * waits for it through the read barrier. While an entry of this leader whose caller was answered
     * "timed out" may still be applied, nothing begins (NO_LEADER, retry): see {@link #unresolved}.
     */
    private long writeTerm() {
        DivisionInfo info = division().getInfo();
        long term = info.getCurrentTerm(); // read first: ready in a later term must not pass for ready in this one
        if (!info.isLeader()) {
            throw notLeader(info.getLeaderId());
        }
        if (!unresolved.isEmpty()) {
            throw DirectoryErrors.NO_LEADER.exception(unresolved.size() + " change(s) of this leader timed out and may still be "
                    + "applied; no change begins until the group has committed or dropped them; retry");
        }
        if (!info.isLeaderReady() || info.getCurrentTerm() != term) {
            return barrier();
        }
        return term;
    }

    @Override
    public void readBarrier() {
        barrier();
    }

    private long barrier() {
        RaftServer.Division d = division();
        DivisionInfo info = d.getInfo();
        if (!info.isLeader()) {
            throw notLeader(info.getLeaderId());
        }
        long term = info.getCurrentTerm();
        check(submit(RaftClientRequest.readRequestType(), Message.EMPTY));
        if (info.getCurrentTerm() != term || !info.isLeader()) {
            throw DirectoryErrors.NO_LEADER.exception("the leader changed while this request was read; retry");
        }
        return term;
    }

    /**
     * Appends the change to the group's log without waiting: many entries are in flight at once, so
     * Ratis sends them to the followers together and each replica syncs its log once for all it
     * received (group commit). With packing on ({@code raft.packChanges}), at most
     * {@link DirectoryConfig.Raft#entriesInFlight} log entries of this leader are in flight; the changes
     * submitted meanwhile wait in {@link #queue} and go as one entry, a pack ({@link LogEntry#pack}), once
     * one of those is applied. Completes once this replica applied it, with the change's value;
     * exceptionally with an {@link ApiException}: NOT_LEADER, NO_LEADER (a timeout, a lost term:
     * retry), REQUEST_REPEATED, LEASE_LOST.
     */
    @Override
    public CompletableFuture<Long> submit(LogEntry entry) {
        Queued q = new Queued(entry, entry.encode());
        q.result.orTimeout(timeoutMillis, TimeUnit.MILLISECONDS);
        CompletableFuture<Long> answer = q.result.handle((v, t) -> {
            if (t != null) {
                Throwable cause = unwrap(t);
                // Before the caller hears of the timeout: a change already handed to Ratis may still be
                // applied, so no change begins until its fate is known; one still queued is never sent.
                if (cause instanceof TimeoutException && !q.state.compareAndSet(Queued.QUEUED, Queued.ABANDONED)) {
                    trackUnresolved(q.fate);
                }
                throw failure(cause);
            }
            return v;
        });
        if (!packChanges) {
            if (q.state.compareAndSet(Queued.QUEUED, Queued.CLAIMED)) {
                send(List.of(q));
            }
        } else {
            queue.add(q);
            drain();
        }
        return answer;
    }

    /** A submitted change: its entry, encoded, its caller's future, and whether it was handed to Ratis. */
    private static final class Queued {
        static final int QUEUED = 0;
        static final int CLAIMED = 1;
        static final int ABANDONED = 2;
        final LogEntry entry;
        final byte[] data;
        final CompletableFuture<Long> result = new CompletableFuture<>();
        /** QUEUED, then CLAIMED by the sender (it goes to Ratis) or ABANDONED by its caller's timeout (it never does). */
        final AtomicInteger state = new AtomicInteger(QUEUED);
        /** Completes once Ratis applied or dropped the entry it went in (or it could not be sent). */
        final CompletableFuture<Void> fate = new CompletableFuture<>();

        Queued(LogEntry entry, byte[] data) {
            this.entry = entry;
            this.data = data;
        }
    }

    /**
     * Sends what queued while there is room in the window, on the calling thread: a change submitted
     * while the window has room goes at once, by its own caller, as it would without packing; changes
     * submitted while it is full wait in {@link #queue} and are sent together, as one pack, by the
     * thread that frees room ({@link #freed}). One sender at a time, so changes reach the log in the
     * order they were submitted; it holds the lock only while Ratis takes the entry into the leader's
     * log (no sync, no round trip).
     */
    private void drain() {
        synchronized (drainLock) {
            while (!queue.isEmpty() && window.tryAcquire()) {
                List<Queued> batch = new ArrayList<>();
                int bytes = 0;
                for (Queued next = queue.peek(); next != null && batch.size() < MAX_PACK
                        && (batch.isEmpty() || bytes + next.data.length <= MAX_PACK_BYTES); next = queue.peek()) {
                    queue.poll();
                    if (next.state.compareAndSet(Queued.QUEUED, Queued.CLAIMED)) { // else timed out while queued: never sent
                        batch.add(next);
                        bytes += next.data.length;
                    }
                }
                if (batch.isEmpty()) {
                    window.release();
                } else {
                    send(batch).whenComplete((r, t) -> freed());
                }
            }
        }
    }

    /** An entry of the window is applied or dropped: its room goes to what queued meanwhile, sent off Ratis' thread. */
    private void freed() {
        window.release();
        if (!queue.isEmpty()) {
            try {
                sender.execute(this::drain);
            } catch (RejectedExecutionException e) {
                failQueued();
            }
        }
    }

    private void failQueued() {
        for (Queued q; (q = queue.poll()) != null; ) {
            q.result.completeExceptionally(DirectoryErrors.NO_LEADER.exception("this directory replica is closing; retry"));
        }
    }

    /** Sends {@code batch} as one log entry and answers each of its changes from the applied pack. */
    private CompletableFuture<RaftClientReply> send(List<Queued> batch) {
        CompletableFuture<RaftClientReply> f;
        try {
            byte[] data = batch.size() == 1 ? batch.get(0).data : LogEntry.pack(batch.stream().map(q -> q.data).toList());
            RaftClientRequest req = RaftClientRequest.newBuilder().setClientId(clientId).setServerId(self).setGroupId(GROUP)
                    .setCallId(callIds.incrementAndGet()).setMessage(Message.valueOf(ByteString.copyFrom(data)))
                    .setType(RaftClientRequest.writeRequestType()).build();
            f = server.submitClientRequestAsync(req);
        } catch (IOException | RuntimeException e) {
            ApiException x = DirectoryErrors.NO_LEADER.exception("the directory's group did not take the change: " + e);
            batch.forEach(q -> {
                q.fate.complete(null);
                q.result.completeExceptionally(x);
            });
            return CompletableFuture.failedFuture(x);
        }
        entriesSent.incrementAndGet();
        changesSent.addAndGet(batch.size());
        // Ratis' own future stays Ratis', completed when the entry is applied or dropped.
        f.whenComplete((reply, t) -> {
            batch.forEach(q -> q.fate.complete(null));
            answer(batch, reply, t);
        });
        return f;
    }

    private void answer(List<Queued> batch, RaftClientReply reply, Throwable t) {
        List<LogEntry.Applied> applied;
        try {
            if (t != null) {
                throw failure(unwrap(t));
            }
            check(reply);
            applied = LogEntry.Applied.decodeAll(reply.getMessage().getContent().toByteArray());
            if (applied.size() != batch.size()) {
                throw new IllegalStateException("the directory's state machine answered " + applied.size() + " outcomes to a pack of "
                        + batch.size());
            }
        } catch (RuntimeException x) {
            batch.forEach(q -> q.result.completeExceptionally(x));
            return;
        }
        for (int i = 0; i < batch.size(); i++) {
            Queued q = batch.get(i);
            try {
                q.result.complete(value(q.entry, applied.get(i)));
            } catch (ApiException x) {
                q.result.completeExceptionally(x);
            }
        }
    }

    /** A change's value from what applying it did, or the ApiException its caller is answered. */
    private static long value(LogEntry entry, LogEntry.Applied a) {
        return switch (a.outcome()) {
            case APPLIED -> a.value();
            case STALE_TERM -> throw DirectoryErrors.NO_LEADER.exception("the leader changed while this change was made; "
                    + "nothing was changed; retry");
            case REPEATED -> throw DirectoryErrors.REQUEST_REPEATED.exception("request " + entry.request().id()
                    + " was applied already; nothing was changed again");
            case LEASE_LOST -> throw DirectoryErrors.LEASE_LOST.exception("raid lease epoch " + entry.fence().epoch()
                    + " is no longer the cluster's raid lease (another raid-node took it, or it ran out); nothing was changed");
        };
    }

    /** The fate of a change whose caller was answered "timed out": tracked until Ratis applies or drops its entry. */
    private void trackUnresolved(CompletableFuture<?> f) {
        if (f != null && !f.isDone()) {
            unresolved.add(f);
            f.whenComplete((r, x) -> unresolved.remove(f));
        }
    }

    private static Throwable unwrap(Throwable t) {
        return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    }

    private ApiException failure(Throwable t) {
        if (t instanceof ApiException a) {
            return a;
        }
        if (t instanceof TimeoutException) {
            return DirectoryErrors.NO_LEADER.exception("not committed by a majority of the directory's replicas within "
                    + timeoutMillis + " ms (this replica may be cut off from them); the change may still be applied later");
        }
        if (t instanceof NotLeaderException nle) {
            return notLeader(nle.getSuggestedLeader() == null ? null : nle.getSuggestedLeader().getId());
        }
        return DirectoryErrors.NO_LEADER.exception("the directory's group did not take the change: " + t);
    }

    private RaftClientReply submit(RaftClientRequest.Type type, Message message) {
        RaftClientRequest req = RaftClientRequest.newBuilder().setClientId(clientId).setServerId(self).setGroupId(GROUP)
                .setCallId(callIds.incrementAndGet()).setMessage(message).setType(type).build();
        try {
            return await(server.submitClientRequestAsync(req));
        } catch (IOException e) {
            throw DirectoryErrors.NO_LEADER.exception("the directory's group did not take the request: " + e.getMessage());
        }
    }

    private RaftClientReply await(CompletableFuture<RaftClientReply> f) {
        try {
            return f.get(timeoutMillis, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            f.cancel(false);
            throw DirectoryErrors.NO_LEADER.exception("not committed by a majority of the directory's replicas within "
                    + timeoutMillis + " ms (this replica may be cut off from them); the change may still be applied later");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw DirectoryErrors.NO_LEADER.exception("interrupted");
        } catch (ExecutionException e) {
            Throwable t = e.getCause();
            if (t instanceof NotLeaderException nle) {
                throw notLeader(nle.getSuggestedLeader() == null ? null : nle.getSuggestedLeader().getId());
            }
            throw DirectoryErrors.NO_LEADER.exception("the directory's group did not take the request: " + t);
        }
    }

    private void check(RaftClientReply r) {
        if (r.isSuccess()) {
            return;
        }
        NotLeaderException nle = r.getNotLeaderException();
        if (nle != null) {
            throw notLeader(nle.getSuggestedLeader() == null ? null : nle.getSuggestedLeader().getId());
        }
        if (r.getStateMachineException() != null) {
            throw new IllegalStateException("the directory's state machine failed: " + r.getStateMachineException().getMessage(),
                    r.getStateMachineException());
        }
        throw DirectoryErrors.NO_LEADER.exception("the directory's group did not take the request: "
                + (r.getException() == null ? "no reason given" : r.getException().getMessage()));
    }

    /** NOT_LEADER naming the leader's HTTP address, or NO_LEADER when no leader is known. */
    private ApiException notLeader(RaftPeerId leader) {
        String http = leader == null || leader.equals(self) ? null : httpOf(leader);
        if (http == null) {
            return DirectoryErrors.NO_LEADER.exception("directory replica " + self + " is not the leader and knows no leader now; retry");
        }
        return DirectoryErrors.NOT_LEADER.exception("directory replica " + self + " is a follower; the leader is " + leader + " at " + http)
                .with("leader", http);
    }

    private String httpOf(RaftPeerId id) {
        RaftPeer p = division().getRaftConf().getPeer(id, RaftPeerRole.FOLLOWER, RaftPeerRole.LISTENER);
        if (p == null) {
            for (RaftPeer q : division().getRaftConf().getAllPeers()) {
                if (q.getId().equals(id)) {
                    p = q;
                }
            }
        }
        return p == null || p.getClientAddress() == null || p.getClientAddress().isEmpty() ? null : p.getClientAddress();
    }

    @Override
    public boolean leads() {
        DivisionInfo info = division().getInfo();
        return info.isLeader() && info.isLeaderReady();
    }

    /** The first leader of a new group gives every replica its cluster id. */
    private void initCluster() {
        try {
            if (meta.clusterAdopted()) {
                initDuty.cancel(false); // every replica took the group's id, from the log or a snapshot: nothing left to do
                return;
            }
            if (leads()) {
                commit(begin().term(), null, new Change.InitCluster(meta.clusterId()));
                LOG.info("directory group initialised with cluster id {}", meta.clusterId());
            }
        } catch (RuntimeException e) {
            LOG.debug("cluster id not committed yet: {}", e.toString());
        }
    }

    @Override
    public Group group() {
        RaftServer.Division d = division();
        DivisionInfo info = d.getInfo();
        RaftPeerId leader = info.getLeaderId();
        List<Replica> out = new ArrayList<>();
        Collection<RaftPeer> peers = d.getRaftConf().getCurrentPeers();
        for (RaftPeer p : peers) {
            boolean me = p.getId().equals(self);
            String role = me ? roleName(info) : p.getId().equals(leader) ? "LEADER" : "FOLLOWER";
            Long applied = me ? info.getLastAppliedIndex() : null;
            Long committed = me ? d.getRaftLog().getLastCommittedIndex() : null;
            out.add(new Replica(p.getId().toString(), p.getClientAddress(), p.getAddress(), role, applied, committed));
        }
        return new Group(self.toString(), leader == null ? null : leader.toString(), info.getCurrentTerm(), out);
    }

    private static String roleName(DivisionInfo info) {
        return switch (info.getCurrentRole()) {
            case LEADER -> "LEADER";
            case FOLLOWER -> "FOLLOWER";
            case CANDIDATE -> "CANDIDATE";
            default -> info.getCurrentRole().name();
        };
    }

    @Override
    public long appliedIndex() {
        return division().getInfo().getLastAppliedIndex();
    }

    @Override
    public long snapshot() {
        // Creation gap 1: a snapshot whenever an entry was applied since the last one (Ratis' default gap, 1024
        // entries, would answer the old snapshot's index to an operator who asked for one now).
        RaftClientReply r = awaitAdmin(server.snapshotManagementAsync(SnapshotManagementRequest.newCreate(clientId, self, GROUP,
                callIds.incrementAndGet(), 60_000, 1)));
        return r.getLogIndex();
    }

    /** Log entries of changes this replica submitted as leader since it started. */
    public long entriesSent() {
        return entriesSent.get();
    }

    /** Changes in those entries: more than the entries when changes were packed. */
    public long changesSent() {
        return changesSent.get();
    }

    /** The first index still in this replica's log (entries below it were purged behind a snapshot). */
    public long logStartIndex() {
        return division().getRaftLog().getStartIndex();
    }

    /** Snapshots this replica installed from a leader since it started. */
    public long installedSnapshots() {
        return sm.installedSnapshots();
    }

    // ------------------------------------------------------------------ operator verbs

    /** Adds a replica to the group (run on the leader): the new peer must be running with the new peer list. */
    public void addPeer(DirectoryConfig.Peer p) {
        List<RaftPeer> next = new ArrayList<>(division().getRaftConf().getCurrentPeers());
        if (next.stream().anyMatch(q -> q.getId().toString().equals(p.id))) {
            throw DirectoryErrors.WRONG_STATE.exception("replica " + p.id + " is in the group already");
        }
        next.add(peer(p));
        setPeers(next);
    }

    /** Removes a replica from the group (run on the leader). */
    public void removePeer(String id) {
        List<RaftPeer> next = new ArrayList<>(division().getRaftConf().getCurrentPeers());
        if (!next.removeIf(q -> q.getId().toString().equals(id))) {
            throw DirectoryErrors.WRONG_STATE.exception("no replica " + id + " in the group");
        }
        if (next.isEmpty()) {
            throw DirectoryErrors.WRONG_STATE.exception("cannot remove the group's last replica");
        }
        setPeers(next);
    }

    private void setPeers(List<RaftPeer> peers) {
        requireLeader();
        try {
            awaitAdmin(server.setConfigurationAsync(new SetConfigurationRequest(clientId, self, GROUP, callIds.incrementAndGet(), peers)));
        } catch (IOException e) {
            throw DirectoryErrors.NO_LEADER.exception("the group's configuration was not changed: " + e.getMessage());
        }
    }

    /** Hands the leadership to replica {@code id} (for a rolling upgrade). */
    public void transferLeader(String id) {
        requireLeader();
        if (division().getRaftConf().getCurrentPeers().stream().noneMatch(q -> q.getId().toString().equals(id))) {
            throw DirectoryErrors.WRONG_STATE.exception("no replica " + id + " in the group");
        }
        try {
            awaitAdmin(server.transferLeadershipAsync(new TransferLeadershipRequest(clientId, self, GROUP, callIds.incrementAndGet(),
                    RaftPeerId.valueOf(id), timeoutMillis)));
        } catch (IOException e) {
            throw DirectoryErrors.NO_LEADER.exception("leadership not transferred: " + e.getMessage());
        }
    }

    @Override
    public void checkLeader() {
        requireLeader();
    }

    private void requireLeader() {
        DivisionInfo info = division().getInfo();
        if (!info.isLeader()) {
            throw notLeader(info.getLeaderId());
        }
    }

    private RaftClientReply awaitAdmin(CompletableFuture<RaftClientReply> f) {
        RaftClientReply r;
        try {
            r = f.get(Math.max(timeoutMillis, 30_000), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw DirectoryErrors.NO_LEADER.exception("the group did not answer within " + Math.max(timeoutMillis, 30_000) + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw DirectoryErrors.NO_LEADER.exception("interrupted");
        } catch (ExecutionException e) {
            throw DirectoryErrors.NO_LEADER.exception("the group refused: " + e.getCause());
        }
        if (!r.isSuccess()) {
            NotLeaderException nle = r.getNotLeaderException();
            if (nle != null) {
                throw notLeader(nle.getSuggestedLeader() == null ? null : nle.getSuggestedLeader().getId());
            }
            throw DirectoryErrors.WRONG_STATE.exception("the group refused: " + (r.getException() == null ? "no reason" : r.getException().getMessage()));
        }
        return r;
    }

    // ------------------------------------------------------------------ metrics

    /** Registers role, term, applied and committed index, log size and leader changes. */
    public void bindMetrics(MeterRegistry registry) {
        Gauge.builder("hayloft_directory_raft_leader", this, l -> l.leads() ? 1 : 0)
                .description("1 while this replica leads its group").register(registry);
        Gauge.builder("hayloft_directory_raft_term", this, l -> l.division().getInfo().getCurrentTerm())
                .description("the Raft term this replica is in").register(registry);
        Gauge.builder("hayloft_directory_raft_applied_index", this, l -> l.division().getInfo().getLastAppliedIndex())
                .description("the last log index applied to this replica's state").register(registry);
        Gauge.builder("hayloft_directory_raft_committed_index", this, l -> l.division().getRaftLog().getLastCommittedIndex())
                .description("the last log index this replica knows to be committed").register(registry);
        Gauge.builder("hayloft_directory_raft_log_entries", this, l -> {
            var log = l.division().getRaftLog();
            return Math.max(0, log.getNextIndex() - log.getStartIndex());
        }).description("entries in this replica's Raft log (since its last purge)").register(registry);
        Gauge.builder("hayloft_directory_raft_leader_changes", this, l -> l.sm.leaderChanges())
                .description("leader changes this replica saw since it started").register(registry);
        Gauge.builder("hayloft_directory_raft_entries_sent", this, RaftChangeLog::entriesSent)
                .description("log entries of changes this replica submitted as leader since it started").register(registry);
        Gauge.builder("hayloft_directory_raft_changes_sent", this, RaftChangeLog::changesSent)
                .description("changes in those entries (more than the entries when changes were packed)").register(registry);
        Gauge.builder("hayloft_directory_raft_snapshot_index", this, l -> l.division().getRaftLog().getSnapshotIndex())
                .description("the log index of this replica's newest snapshot").register(registry);
    }

    @Override
    public void close() {
        duties.shutdownNow();
        sender.shutdown();
        failQueued();
        try {
            server.close();
        } catch (IOException e) {
            LOG.warn("closing the Raft server: {}", e.toString());
        }
    }
}
