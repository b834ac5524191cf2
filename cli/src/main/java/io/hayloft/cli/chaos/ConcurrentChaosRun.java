package io.hayloft.cli.chaos;

import io.hayloft.cli.chaos.History.Event;
import io.hayloft.cli.chaos.History.Kind;
import io.hayloft.cli.chaos.History.Outcome;
import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.raid.EncodeJob;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.ThreadPoolRunner;
import io.hayloft.serverkit.io.SimulatedDisk;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One concurrent schedule of the life-cycle checker ({@code --clients N}, N &gt; 1): a fresh embedded
 * cluster; N {@link ChaosClient} threads through one shared client; the {@link BackgroundJobs}; the
 * {@link FaultInjector}; then, the clients done and the faults stopped, the quiet phase: the cluster
 * made whole, every volume holding photos sealed and encoded (codecs in turn), every damaged stripe
 * repaired and checked by a scrub, coded volumes with dead needles reclaimed, and every needle read
 * back against the final model. The {@link History} is then checked by the {@link HistoryChecker}.
 * Violations (of the history, of progress: a background job failing with no fault in effect, a
 * volume left uncoded) are gathered; the first ends the schedule early, and the schedule throws a
 * {@link ChaosFailure} naming it, the needle's history and the events around it.
 *
 * <p>Thread-safe where its threads share it (the history, the needles written, the counters);
 * {@link #run()} is called once, by one thread.
 */
final class ConcurrentChaosRun implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ConcurrentChaosRun.class);
    private static final int AROUND = 30;

    /** Something that breaks the model: the event, the needle if any, why. */
    record Problem(Event event, PhotoId needle, String why) {
    }

    private final ChaosOptions options;
    private final long seed;
    private final Path dir;
    private final EmbeddedCluster cluster;
    private final ReplicaGroup group; // null: the cluster's own single directory
    private final StoreFaults storeFaults;
    private final HayloftClient client;
    private final History history = new History();
    private final FaultWindows windows = new FaultWindows();
    private final RaidProcess raid = new RaidProcess();
    private final Map<PhotoId, HistoryChecker.Written> written = new ConcurrentHashMap<>();
    private final List<PhotoId> published = Collections.synchronizedList(new ArrayList<>());
    private final ConcurrentLinkedQueue<Problem> problems = new ConcurrentLinkedQueue<>();
    private final Map<String, Long> faults = new ConcurrentHashMap<>();
    private final Map<String, Long> codecs = new ConcurrentHashMap<>();
    private final ChaosStats stats = new ChaosStats();
    private volatile boolean aborted;

    ConcurrentChaosRun(ChaosOptions options, long seed) throws Exception {
        this.options = options;
        this.seed = seed;
        this.dir = options.dataDir().resolve("schedule-" + seed);
        Files.createDirectories(dir.resolve("spool"));
        if (options.directories() > 1) {
            ClusterOptions co = ChaosRun.clusterOptions(options, dir);
            ReplicaGroup.Factory groups = options.directoryGroups() != null ? options.directoryGroups() : DirectoryGroup::start;
            this.group = groups.start(options.directories(), () -> EmbeddedCluster.directoryConfig(co), dir);
            EmbeddedCluster c;
            try {
                c = ChaosRun.startCluster(options, seed, dir, group);
            } catch (IOException | InterruptedException | RuntimeException e) {
                group.close();
                throw e;
            }
            this.cluster = c;
        } else {
            this.group = null;
            this.cluster = ChaosRun.startCluster(options, seed, dir);
        }
        this.storeFaults = StoreFaults.of(cluster);
        this.client = cluster.newClient(); // coalesced puts on (the builder's default)
    }

    /** The generator of thread {@code index} of schedule {@code seed}: the same choices on every replay. */
    static Random random(long seed, int index) {
        return new Random(seed * 0x9E3779B97F4A7C15L + 0x632BE59BD9B4E019L * (index + 1));
    }

    /** An exception in one line, for the history. */
    static String brief(Throwable t) {
        String m = String.valueOf(t.getMessage());
        m = m.length() > 300 ? m.substring(0, 300) + "..." : m;
        return t.getClass().getSimpleName() + ": " + m.replace('\n', ' ');
    }

    ChaosOptions options() {
        return options;
    }

    long seed() {
        return seed;
    }

    EmbeddedCluster cluster() {
        return cluster;
    }

    /** The directory's replicas with {@code --directories N}, or null (the cluster's own directory). */
    ReplicaGroup group() {
        return group;
    }

    StoreFaults storeFaults() {
        return storeFaults;
    }

    HayloftClient client() {
        return client;
    }

    History history() {
        return history;
    }

    FaultWindows windows() {
        return windows;
    }

    RaidProcess raid() {
        return raid;
    }

    ChaosStats stats() {
        return stats;
    }

    boolean aborted() {
        return aborted;
    }

    /** A needle whose id a put made known: from now on any client may read it. */
    void written(PhotoId id, byte[] value, Event put) {
        written.put(id, new HistoryChecker.Written(id, value, put));
        published.add(id);
    }

    byte[] value(PhotoId id) {
        return written.get(id).value();
    }

    /** Any client's needle, or null when none is known yet. */
    PhotoId anyNeedle(Random rnd) {
        int pick = rnd.nextInt(1 << 30);
        synchronized (published) {
            return published.isEmpty() ? null : published.get(pick % published.size());
        }
    }

    void fault(String kind) {
        faults.merge(kind, 1L, Long::sum);
    }

    void coded(String codec) {
        codecs.merge(codec, 1L, Long::sum);
    }

    /**
     * A background job failed: a violation when it refused its volume (an encode's self-check: no fault
     * makes good replicas disagree with their own stripes), or when no fault was in effect meanwhile.
     */
    void jobFailed(Event e, Throwable t) {
        String refusal = refusal(t);
        if (refusal != null) {
            LOG.warn("seed {}: {} refused its volume", seed, e.job(), t);
            problem(new Problem(e, null, "a background " + e.job() + " refused its volume (" + refusal + "): " + e.detail()));
            return;
        }
        String bug = bug(t);
        if (bug != null) {
            LOG.warn("seed {}: {} failed with {}", seed, e.job(), bug, t);
            problem(new Problem(e, null, "a background " + e.job() + " failed with " + bug + " (a bug, whatever the faults): "
                    + e.detail()));
            return;
        }
        if (windows.overlaps(e.invoke(), e.complete())) {
            LOG.info("seed {}: {} failed during a fault; allowed", seed, e.job(), t);
            return;
        }
        LOG.warn("seed {}: {} failed with no fault in effect", seed, e.job(), t);
        problem(new Problem(e, null, "a background job failed with no fault in effect: " + e.detail()));
    }

    /** A fault left the directory group broken past its bound (no single leader, a replica that never caught up): a violation. */
    void groupNotWhole(Event fault, String why) {
        LOG.warn("seed {}: the directory group did not recover from {}: {}", seed, fault.job(), why);
        problem(new Problem(fault, null, "the directory group did not recover from a " + fault.job() + ": " + why));
    }

    /** What makes {@code t} an encode's or reclaim's refusal of a volume (not a fault's doing), or null. */
    static String refusal(Throwable t) {
        for (Throwable x = t; x != null; x = x.getCause()) { // by type, never by message text
            if (x instanceof EncodeJob.IndexMismatchException) {
                return "IndexMismatchException";
            }
            if (x instanceof EncodeJob.NotCleanVolumeException) {
                return "not a clean sealed volume";
            }
        }
        return null;
    }

    /** The programming error in {@code t}'s causes (no fault explains one), or null. */
    static String bug(Throwable t) {
        for (Throwable x = t; x != null; x = x.getCause()) {
            if (x instanceof NullPointerException || x instanceof IndexOutOfBoundsException || x instanceof ClassCastException
                    || x instanceof ArithmeticException || x instanceof ConcurrentModificationException) {
                return x.toString();
            }
        }
        return null;
    }

    private void problem(Problem p) {
        problems.add(p);
        aborted = true;
    }

    /** Whether a needle written (acknowledged or in doubt) is on volume {@code v}. */
    boolean holdsPhotos(int v) {
        for (PhotoId id : written.keySet()) {
            if (id.volume() == v) {
                return true;
            }
        }
        return false;
    }

    /** Ids of the directory's volumes in {@code state} (only those holding needles written, when asked), sorted. */
    List<Integer> volumes(VolumeState state, boolean withPhotos) {
        Set<Integer> used = null;
        if (withPhotos) {
            used = new TreeSet<>();
            for (PhotoId id : written.keySet()) {
                used.add(id.volume());
            }
        }
        return BackgroundJobs.ids(Futures.await(client.directory().volumes()), state, used);
    }

    RaidConfig raidConfig(String codec, long blockSize) {
        return ChaosRun.raidConfig(cluster.directoryAddress(), options, dir, codec, blockSize);
    }

    /** Runs the schedule: clients, jobs and faults at once, the quiet phase, the checks. */
    ChaosStats run() throws Exception {
        long start = System.nanoTime();
        stats.schedules = 1;
        List<Thread> clients = new ArrayList<>();
        for (int i = 0; i < options.clients(); i++) {
            Thread t = new Thread(new ChaosClient(this, i), "chaos-client-" + i);
            t.setDaemon(true);
            clients.add(t);
        }
        BackgroundJobs jobs = new BackgroundJobs(this);
        FaultInjector injector = new FaultInjector(this);
        Thread faultThread = new Thread(injector, "chaos-faults");
        faultThread.setDaemon(true);
        clients.forEach(Thread::start);
        jobs.start();
        faultThread.start();
        for (Thread t : clients) {
            t.join();
        }
        injector.stop();
        faultThread.join();
        jobs.stop();
        long busy = System.nanoTime();
        LOG.info("seed {}: clients done in {} s; quiet phase", seed, (busy - start) / 1_000_000_000L);
        if (!aborted) {
            new QuietPhase(this, jobs).run();
        }
        List<Event> events = history.events();
        HistoryChecker checker = new HistoryChecker(written, events);
        for (HistoryChecker.Violation v : checker.check()) {
            problems.add(new Problem(v.event(), v.needle(), v.why()));
        }
        figures(events, checker, start);
        List<String> lines = new ArrayList<>();
        events.forEach(e -> lines.add(e.describe(history.origin())));
        Files.write(dir.resolve("history.txt"), lines); // the whole history, for a closer look (kept with --dir)
        if (!problems.isEmpty()) {
            throw failure();
        }
        return stats;
    }

    /** The needles' final model, for the quiet phase's read of every needle. */
    Model finalModel() {
        return new HistoryChecker(written, history.events()).finalModel();
    }

    /** Records a violation found by the quiet phase (it stops the phase). */
    void quietViolation(String job, long invoke, PhotoId needle, String why) {
        Event e = history.record("quiet", needle == null ? Kind.JOB : Kind.GET, needle == null ? job : "", needle == null
                ? List.of() : List.of(needle), invoke, Outcome.FAILED, why);
        problem(new Problem(e, needle, why));
    }

    private void figures(List<Event> events, HistoryChecker checker, long start) {
        Map<String, Long> kinds = new TreeMap<>();
        long operations = 0;
        for (Event e : events) {
            if (e.kind() == Kind.FAULT || e.outcome() == Outcome.SKIPPED) {
                continue;
            }
            String k = e.kind() == Kind.JOB ? "job " + e.job() : e.kind().label();
            if (e.outcome() == Outcome.FAILED || e.outcome() == Outcome.CRASHED) {
                k += " (" + e.outcome().name().toLowerCase(Locale.ROOT) + ")";
            }
            kinds.merge(k, 1L, Long::sum);
            operations++;
        }
        stats.ops.putAll(kinds);
        stats.faults.putAll(faults);
        stats.codecs.putAll(codecs);
        stats.operations = operations;
        stats.steps = operations;
        Model model = checker.finalModel();
        stats.photosChecked = model.photos().size();
        stats.needlesChecked = model.needleCount();
        stats.inDoubt = model.needles().stream().filter(Model.Needle::inDoubt).count();
        stats.violations = problems.size();
        stats.losses = problems.size();
        for (int i = 0; i < cluster.storeCount(); i++) {
            if (cluster.disk(i) instanceof SimulatedDisk d) {
                stats.bytesLost += d.bytesLost();
                stats.tornWrites += d.tornWrites();
            }
        }
        stats.nanos = System.nanoTime() - start;
    }

    private ChaosFailure failure() {
        List<Problem> all = new ArrayList<>(problems);
        all.sort((a, b) -> Long.compare(a.event().complete(), b.event().complete()));
        Problem first = all.get(0);
        StringBuilder b = new StringBuilder();
        b.append("VIOLATION in schedule seed ").append(seed).append(" (").append(all.size()).append(all.size() == 1
                ? " violation" : " violations").append("): ").append(first.why()).append('\n');
        for (Problem p : all.subList(1, Math.min(all.size(), 10))) {
            b.append("  also: ").append(p.why()).append(p.needle() == null ? "" : " (needle " + p.needle() + ")").append('\n');
        }
        if (first.needle() != null) {
            b.append("history of needle ").append(first.needle()).append(":\n");
            history.of(first.needle()).forEach(l -> b.append(l).append('\n'));
        }
        b.append("the events around it (times from the schedule's start; => the violation):\n");
        history.around(first.event(), AROUND).forEach(l -> b.append(l).append('\n'));
        b.append("replay: ").append(options.replayCommand(seed));
        return new ChaosFailure(seed, b.toString());
    }

    @Override
    public void close() {
        client.close();
        cluster.close();
        if (group != null) {
            group.close();
        }
    }
}
