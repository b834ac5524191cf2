package io.hayloft.cli.chaos;

import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PartialFailureException;
import io.hayloft.client.PhotoStat;
import io.hayloft.client.PutResult;
import io.hayloft.client.Upload;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.Wire;
import io.hayloft.raid.BlockFixer;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.ReclaimJob;
import io.hayloft.raid.Scrubber;
import io.hayloft.raid.ThreadPoolRunner;
import io.hayloft.serverkit.io.Disk;
import io.hayloft.serverkit.io.SimulatedDisk;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToIntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One schedule of the life-cycle checker: a fresh embedded cluster, {@code steps} random steps drawn
 * from the seed, and after each step a read-back of every needle the step touched plus a random
 * sample (every needle after a fault and at the end) compared against the {@link Model}.
 *
 * <p>Step {@code n}'s operation and its parameters come from a random generator seeded with the
 * schedule's seed and {@code n} alone, so replaying a seed replays the same operations in the same
 * order whatever the cluster's timing did to earlier steps; an operation whose target does not exist
 * (no read-only volume to encode, say) is recorded as skipped.
 *
 * <p>Not thread-safe: one thread runs a schedule.
 */
final class ChaosRun implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ChaosRun.class);

    /** The operations, with their weights. */
    enum Op {
        PUT(16), PUT_BATCH(10), DELETE(8), OVERWRITE(5), SEAL(5), ENCODE(7), RECLAIM(4), COMPACT(3), FIX(1),
        STORE_RESTART(2), STORE_CRASH(3), STORE_DOWN(2), POWER_CUT(3), DIRECTORY_RESTART(2), CLUSTER_CRASH(1),
        BLOCK_DELETE(3), BLOCK_CORRUPT(3);

        final int weight;

        Op(int weight) {
            this.weight = weight;
        }

        String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /** Alternate keys drawn half of the time: the edges of the 32-bit range, and neighbours ((k, 31) and (k + 1, 0)) that a {@code key * 31 + alt} hash would confuse, which the cold needle index keeps apart. */
    static final int[] SPECIAL_ALTS = {0, 1, 30, 31, 32, 62, 1000, -1, Integer.MIN_VALUE, Integer.MAX_VALUE};
    static final List<String> ENCODE_STEPS = List.of("begun", "stripe-0", "stripe-1", "index", "verified", "committed", "dropped");
    static final List<String> RECLAIM_STEPS = List.of("compacted", "reclaim-begun", "stripe-0", "index", "verified", "swapped",
            "old-deleted");
    static final long[] BLOCK_SIZES = {64 << 10, 128 << 10, 256 << 10};
    private static final Pattern DATA_BLOCK = Pattern.compile("v(\\d+)-[0-9a-f]{8}-s\\d+-u\\d+\\.blk");
    private static final int HISTORY = 30;

    /** A simulated raid-node crash: thrown from a checkpoint, caught by nothing in the raid-node, so nothing rolls back. */
    static final class RaidCrash extends Error {
        private static final long serialVersionUID = 1L;

        RaidCrash(String step) {
            super("simulated raid-node crash at " + step, null, false, false);
        }
    }

    private final ChaosOptions options;
    private final long seed;
    private final ChaosStats stats = new ChaosStats();
    private final Model model = new Model();
    private final ChaosReads reads;
    private final Deque<String> history = new ArrayDeque<>();
    private final EmbeddedCluster cluster;
    private final StoreFaults faults;
    private final HayloftClient client;
    private final ThreadPoolRunner runner;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2)).build();
    private final Path dir;
    private int step;
    private int downStore = -1;
    private int downUntil;
    private final Set<Model.Needle> touched = new LinkedHashSet<>();
    private boolean faulted;

    ChaosRun(ChaosOptions options, long seed) throws IOException, InterruptedException {
        this.options = options;
        this.seed = seed;
        this.dir = options.dataDir().resolve("schedule-" + seed);
        Files.createDirectories(dir.resolve("spool"));
        this.cluster = startCluster(options, seed, dir);
        this.faults = StoreFaults.of(cluster);
        this.client = cluster.newClient();
        this.runner = new ThreadPoolRunner(2);
        this.reads = new ChaosReads(client, stats, this::fail);
    }

    ChaosStats stats() {
        return stats;
    }

    /** Runs every step, then the final check of every needle. */
    ChaosStats run() throws Exception {
        long start = System.nanoTime();
        stats.schedules = 1;
        for (step = 1; step <= options.steps(); step++) {
            step(step);
            stats.steps++;
            stats.operations++;
        }
        step = options.steps() + 1;
        if (downStore >= 0) {
            cluster.startStore(downStore);
            downStore = -1;
        }
        record("final: every needle, stores all up");
        reads.checkAll(model);
        Random r = new Random(seed);
        List<Model.Needle> all = model.needles();
        for (int i = 0; i < Math.min(50, all.size()); i++) {
            reads.checkWrongCookie(all.get(r.nextInt(all.size())));
        }
        stats.photosChecked = model.photos().size();
        stats.needlesChecked = model.needleCount();
        stats.inDoubt = all.stream().filter(Model.Needle::inDoubt).count();
        for (int i = 0; i < cluster.storeCount(); i++) {
            if (cluster.disk(i) instanceof SimulatedDisk d) {
                stats.bytesLost += d.bytesLost();
                stats.tornWrites += d.tornWrites();
            }
        }
        stats.nanos = System.nanoTime() - start;
        return stats;
    }

    private void step(int n) throws Exception {
        Random rnd = new Random(seed * 0x9E3779B97F4A7C15L + n);
        touched.clear();
        faulted = false;
        if (downStore >= 0 && n >= downUntil) {
            cluster.startStore(downStore);
            record("#" + n + " store " + downStore + " back up");
            downStore = -1;
        }
        Op op = pick(rnd);
        String what;
        try {
            what = execute(op, rnd);
            if (what.startsWith(op.label()) && what.contains(": skipped")) {
                stats.op(op.label() + " (skipped)");
            }
        } catch (ChaosFailure f) {
            throw f;
        } catch (Exception e) {
            // An operation may fail (a store down, a timeout); what it did is in the model as in doubt.
            what = op.label() + " failed: " + e;
            LOG.info("step {}: {}", n, what);
        }
        record("#" + n + " " + what);
        if (faulted) {
            reads.checkAll(model);
        } else {
            for (Model.Needle t : touched) {
                reads.check(t);
            }
            List<Model.Needle> all = model.needles();
            for (int i = 0; i < options.sample() && !all.isEmpty(); i++) {
                reads.check(all.get(rnd.nextInt(all.size())));
            }
        }
        if (rnd.nextInt(8) == 0) {
            List<Model.Needle> all = model.needles();
            if (!all.isEmpty()) {
                reads.checkWrongCookie(all.get(rnd.nextInt(all.size())));
            }
        }
    }

    private Op pick(Random rnd) {
        return weighted(rnd, Op.values(), o -> o.weight);
    }

    private String execute(Op op, Random rnd) throws Exception {
        stats.op(op.label());
        return switch (op) {
            case PUT -> put(rnd, 1);
            case PUT_BATCH -> put(rnd, 2 + rnd.nextInt(7));
            case DELETE -> delete(rnd);
            case OVERWRITE -> overwrite(rnd);
            case SEAL -> seal(rnd);
            case ENCODE -> encode(rnd);
            case RECLAIM -> reclaim(rnd);
            case COMPACT -> compact(rnd);
            case FIX -> fix("fix");
            case STORE_RESTART -> storeFault(rnd, "store-restart");
            case STORE_CRASH -> storeFault(rnd, "store-crash");
            case STORE_DOWN -> storeDown(rnd);
            case POWER_CUT -> powerCut(rnd);
            case DIRECTORY_RESTART -> {
                fault("directory-restart");
                cluster.restartDirectory();
                yield "directory restarted";
            }
            case CLUSTER_CRASH -> clusterCrash();
            case BLOCK_DELETE -> damageBlock(rnd, false);
            case BLOCK_CORRUPT -> damageBlock(rnd, true);
        };
    }

    // ---------------------------------------------------------------- operations

    /** A put in flight: what was sent, for the model when it completes. */
    private record PendingPut(CompletableFuture<List<PutResult>> result, List<int[]> alts, List<byte[][]> data, int needles,
                              String what) {
    }

    private String put(Random rnd, int photos) {
        return finishPut(startPut(rnd, photos));
    }

    /** Draws {@code photos} photos (1 to 4 alternates each, random sizes) and starts putting them. */
    private PendingPut startPut(Random rnd, int photos) {
        List<Upload> uploads = new ArrayList<>();
        List<int[]> alts = new ArrayList<>();
        List<byte[][]> data = new ArrayList<>();
        int needles = 0;
        for (int p = 0; p < photos; p++) {
            int count = rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(4) : 1;
            Set<Integer> chosen = new LinkedHashSet<>();
            while (chosen.size() < count) {
                chosen.add(drawAlt(rnd));
            }
            int[] a = chosen.stream().mapToInt(Integer::intValue).toArray();
            byte[][] d = new byte[a.length][];
            Upload u = Upload.empty();
            for (int i = 0; i < a.length; i++) {
                d[i] = drawData(rnd);
                u.alt(a[i], d[i]);
            }
            uploads.add(u);
            alts.add(a);
            data.add(d);
            needles += a.length;
        }
        String what = (photos == 1 ? "put" : "put-batch") + " " + photos + " photos, " + needles + " needles (alts "
                + altsText(alts) + ")";
        CompletableFuture<List<PutResult>> f = photos == 1 && rnd.nextBoolean() ? client.putAsync(uploads.get(0))
                : client.putAllUploadsAsync(uploads);
        return new PendingPut(f, alts, data, needles, what);
    }

    /** Waits for a put and records it: acknowledged needles exact, those of a partial failure in doubt. */
    private String finishPut(PendingPut put) {
        List<PutResult> results;
        try {
            results = Futures.await(put.result());
        } catch (RuntimeException failed) {
            Throwable e = Futures.unwrap(failed);
            if (e instanceof PartialFailureException pf && pf.ids().size() == put.needles()) {
                int i = 0;
                for (int p = 0; p < put.alts().size(); p++) {
                    for (int j = 0; j < put.alts().get(p).length; j++) {
                        touched.add(model.put(pf.ids().get(i++), put.data().get(p)[j], false));
                    }
                }
                return put.what() + " -> in doubt (" + e.getMessage() + ")";
            }
            return put.what() + " -> failed, nothing known (" + e + ")";
        }
        int i = 0;
        List<String> keys = new ArrayList<>();
        for (int p = 0; p < put.alts().size(); p++) {
            for (int j = 0; j < put.alts().get(p).length; j++) {
                PhotoId id = results.get(i++).id();
                touched.add(model.put(id, put.data().get(p)[j], true));
                if (j == 0) {
                    keys.add(id.volume() + "/" + id.key());
                }
            }
        }
        return put.what() + " -> ok " + keys;
    }

    private String delete(Random rnd) {
        List<Model.Photo> live = model.livePhotos();
        if (live.isEmpty()) {
            return "delete: skipped (no photo)";
        }
        Model.Photo p = live.get(rnd.nextInt(live.size()));
        Model.Needle first = p.alts.values().iterator().next();
        touched.addAll(p.alts.values());
        try {
            client.delete(first.id);
            // Cold readers decide deletes from the volume's delete log alone: log it as the client
            // will (idempotent: a key logged before keeps its first entry).
            Futures.await(client.directory().logDeletes(p.volume, List.of(new Wire.DeleteEntry(0, p.key,
                    String.format(Locale.ROOT, "%016x", p.cookie), p.alts.size()))));
            model.delete(p, true);
            return "delete " + p.volume + "/" + p.key + " -> ok";
        } catch (RuntimeException e) {
            model.delete(p, false);
            return "delete " + p.volume + "/" + p.key + " -> in doubt (" + e.getMessage() + ")";
        }
    }

    /** Writes new bytes over an exact needle of a writable volume, straight to every replica (the store's overwrite). */
    private String overwrite(Random rnd) {
        List<Model.Needle> exact = model.needles().stream().filter(Model.Needle::exact).toList();
        if (exact.isEmpty()) {
            return "overwrite: skipped (no needle)";
        }
        Model.Needle n = exact.get(rnd.nextInt(exact.size()));
        byte[] data = drawData(rnd);
        PhotoStat l;
        try {
            l = client.stat(n.id);
        } catch (RuntimeException e) {
            return "overwrite " + n.id + ": skipped (lookup failed: " + e.getMessage() + ")";
        }
        if (!l.volumeState().writable()) {
            return "overwrite " + n.id + ": skipped (volume " + l.volumeState() + ")";
        }
        touched.add(n);
        List<CompletableFuture<Void>> writes = new ArrayList<>();
        for (String replica : l.replicas()) {
            writes.add(client.stores().write(replica, n.id, data, null));
        }
        boolean ok = !writes.isEmpty();
        String why = "";
        for (CompletableFuture<Void> w : writes) {
            try {
                Futures.await(w);
            } catch (RuntimeException e) {
                ok = false;
                why = e.getMessage();
            }
        }
        model.overwrite(n, data, ok);
        return "overwrite " + n.id + " with " + data.length + " bytes on " + l.replicas().size() + " replicas -> "
                + (ok ? "ok" : "in doubt (" + why + ")");
    }

    private String seal(Random rnd) throws IOException {
        List<Integer> writable = volumes(VolumeState.WRITABLE, true);
        if (writable.isEmpty()) {
            return "seal: skipped (no writable volume with photos)";
        }
        int v = writable.get(rnd.nextInt(writable.size()));
        Futures.await(client.directory().markReadOnly(v, "chaos seal"));
        touchVolume(v);
        return "seal volume " + v;
    }

    private String encode(Random rnd) throws Exception {
        List<Integer> readOnly = volumes(VolumeState.READ_ONLY, false);
        String codec = options.codecs().get(rnd.nextInt(options.codecs().size()));
        long blockSize = BLOCK_SIZES[rnd.nextInt(BLOCK_SIZES.length)];
        boolean crash = rnd.nextInt(4) == 0;
        String at = ENCODE_STEPS.get(rnd.nextInt(ENCODE_STEPS.size()));
        if (readOnly.isEmpty()) {
            return "encode: skipped (no read-only volume)";
        }
        int v = readOnly.get(rnd.nextInt(readOnly.size()));
        touchVolume(v);
        RaidConfig config = raidConfig(codec, blockSize);
        String what = "encode volume " + v + " " + codec + "(" + options.k() + "," + options.r() + ") block " + blockSize
                + (crash ? " crashing at " + at : "");
        RaidNode node = raidNode(config, crash ? at : null);
        try {
            node.encode(v);
            stats.codec(codec);
            return what + " -> coded";
        } catch (Throwable t) {
            if (!crashed(t)) {
                return what + " -> failed (" + t + ")";
            }
            fault("raid-crash");
            new RaidNode(config, runner).recover();
            return what + " -> crashed, recovered: volume " + volumeState(v);
        }
    }

    /** A raid-node that dies (a {@link RaidCrash}) when it reaches checkpoint {@code crashAt}, if not null. */
    private RaidNode raidNode(RaidConfig config, String crashAt) {
        RaidNode node = new RaidNode(config, runner);
        if (crashAt != null) {
            node.checkpoints(s -> {
                if (s.equals(crashAt)) {
                    throw new RaidCrash(s);
                }
            });
        }
        return node;
    }

    private String reclaim(Random rnd) throws Exception {
        List<Integer> coded = volumes(VolumeState.ERASURE_CODED, false);
        boolean crash = rnd.nextInt(4) == 0;
        String at = RECLAIM_STEPS.get(rnd.nextInt(RECLAIM_STEPS.size()));
        double threshold = rnd.nextInt(3) == 0 ? 0.2 : 0.0;
        if (coded.isEmpty()) {
            return "reclaim: skipped (no coded volume)";
        }
        int v = coded.get(rnd.nextInt(coded.size()));
        touchVolume(v);
        RaidConfig config = raidConfig("rs", BLOCK_SIZES[0]);
        String what = "reclaim volume " + v + " over " + threshold + (crash ? " crashing at " + at : "");
        RaidNode node = raidNode(config, crash ? at : null);
        try {
            ReclaimJob.Result r = node.reclaim(v, threshold);
            return what + " -> " + (r.reclaimed() ? "reclaimed " + r.before().deadNeedles() + " dead needles as job " + r.newJob()
                    : "left alone (" + r.before().deadBytes() + " dead bytes)");
        } catch (Throwable t) {
            if (!crashed(t)) {
                return what + " -> failed (" + t + ")";
            }
            fault("raid-crash");
            new RaidNode(config, runner).recover();
            return what + " -> crashed, recovered";
        }
    }

    private String compact(Random rnd) throws Exception {
        int i = runningStore(rnd);
        var server = cluster.store(i);
        List<Long> ids = server == null ? List.of() : server.store().volumes().stream().map(v -> v.status().id()).sorted().toList();
        int pickVolume = rnd.nextInt(1 << 20);
        if (ids.isEmpty()) {
            return "compact: skipped (store " + i + " has no volume)";
        }
        long v = ids.get(pickVolume % ids.size());
        touchVolume((int) v);
        HttpRequest req = HttpRequest.newBuilder(HttpTransport.create().uri(cluster.storeAddress(i),
                        "/admin/volumes/" + v + "/compact"))
                .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.noBody()).build();
        HttpResponse<String> resp = http.send(req, HttpResponse.BodyHandlers.ofString());
        return "compact volume " + v + " on store " + i + " -> " + resp.statusCode() + " " + resp.body();
    }

    private String fix(String why) throws Exception {
        BlockFixer fixer = new BlockFixer(new RaidNode(raidConfig("rs", BLOCK_SIZES[0]), runner).cluster(),
                raidConfig("rs", BLOCK_SIZES[0]));
        BlockFixer.Report r = fixer.repairAll();
        return why + ": " + r.blocks() + " blocks rebuilt in " + r.stripes() + " stripes"
                + (r.failures().isEmpty() ? "" : ", failures " + r.failures());
    }

    private String storeFault(Random rnd, String kind) throws Exception {
        int i = runningStore(rnd);
        fault(kind);
        if (kind.equals("store-crash")) {
            PendingPut racing = startPut(rnd, 1 + rnd.nextInt(4)); // in flight when the store dies
            faults.crash(cluster, i);
            cluster.startStore(i);
            return "store " + i + " crashed (kill -9) and restarted, racing " + finishPut(racing);
        }
        cluster.restartStore(i);
        return "store " + i + " restarted";
    }

    /** Every store crashed at once and the directory stopped, then all started again: the whole cluster process killed. */
    private String clusterCrash() throws Exception {
        fault("cluster-crash");
        for (int i = 0; i < cluster.storeCount(); i++) {
            if (cluster.store(i) != null) {
                faults.crash(cluster, i);
            }
        }
        cluster.stopDirectory();
        cluster.startDirectory();
        for (int i = 0; i < cluster.storeCount(); i++) {
            if (i != downStore) {
                cluster.startStore(i);
            }
        }
        cluster.heartbeat();
        return "cluster crashed (every store killed, the directory stopped) and restarted";
    }

    private String storeDown(Random rnd) throws Exception {
        int i = runningStore(rnd);
        boolean crash = rnd.nextBoolean();
        int steps = 1 + rnd.nextInt(6);
        if (downStore >= 0) {
            return "store-down: skipped (store " + downStore + " is down)";
        }
        fault("store-down");
        if (crash) {
            faults.crash(cluster, i);
        } else {
            cluster.stopStore(i);
        }
        downStore = i;
        downUntil = step + steps;
        return "store " + i + (crash ? " crashed" : " stopped") + " for " + steps + " steps";
    }

    private String powerCut(Random rnd) throws Exception {
        int i = runningStore(rnd);
        if (!options.powerCuts()) {
            return "power-cut: skipped (power cuts off)";
        }
        fault("power-cut");
        int photos = 1 + rnd.nextInt(4);
        if (rnd.nextBoolean()) {
            faults.powerCut(cluster, i);
            cluster.startStore(i);
            return "store " + i + " lost power (idle) and restarted";
        }
        // The power goes at the first fsync of a put in flight, on whichever store reaches it first.
        PendingPut[] racing = new PendingPut[1];
        int cut = faults.powerCutDuringWrites(cluster, () -> racing[0] = startPut(rnd, photos), i);
        cluster.startStore(cut);
        return "store " + cut + " lost power during a put and restarted: " + finishPut(racing[0]);
    }

    /** Deletes or corrupts one data or parity block file on disk; checks degraded reads, repairs, checks again. */
    private String damageBlock(Random rnd, boolean corrupt) throws Exception {
        // Through the store's Disk, so a simulated disk (which keeps its files in memory) works too.
        List<Path> blocks = new ArrayList<>();
        List<Integer> owners = new ArrayList<>();
        blockFiles(cluster, DATA_BLOCK, blocks, owners);
        int pick = rnd.nextInt(1 << 20);
        long offsetSeed = rnd.nextLong();
        byte[] garbage = new byte[1 + rnd.nextInt(64)];
        rnd.nextBytes(garbage);
        String kind = corrupt ? "block-corrupt" : "block-delete";
        if (blocks.isEmpty()) {
            return kind + ": skipped (no block)";
        }
        Path victim = blocks.get(pick % blocks.size());
        Disk disk = cluster.disk(owners.get(pick % blocks.size()));
        Matcher m = DATA_BLOCK.matcher(victim.getFileName().toString());
        m.matches();
        int volume = Integer.parseInt(m.group(1));
        String where = victim.getParent().getParent().getFileName() + "/" + victim.getFileName();
        String what;
        if (corrupt) {
            long size = disk.size(victim);
            if (size == 0) {
                return kind + ": skipped (empty block " + where + ")";
            }
            fault(kind);
            try (FileChannel ch = disk.open(victim, StandardOpenOption.WRITE, StandardOpenOption.READ)) {
                long at = Math.floorMod(offsetSeed, Math.max(1, size - garbage.length));
                ch.write(ByteBuffer.wrap(garbage, 0, (int) Math.min(garbage.length, size - at)), at);
                ch.force(true);
                what = "corrupted " + garbage.length + " bytes at " + at + " of " + where;
            }
        } else {
            fault(kind);
            disk.deleteIfExists(victim);
            disk.syncDirectory(victim.getParent());
            what = "deleted " + where;
        }
        // Degraded reads must work before any repair.
        record("#" + step + " " + what + " (checking degraded reads of volume " + volume + ")");
        touchVolume(volume);
        for (Model.Needle n : touched) {
            reads.check(n);
        }
        if (corrupt) {
            RaidNode node = new RaidNode(raidConfig("rs", BLOCK_SIZES[0]), runner);
            List<Scrubber.Finding> found = new Scrubber(node.cluster(), 1 << 20).cycle(0);
            List<BlockFixer.Damage> damage = damage(found);
            BlockFixer.Report r = new BlockFixer(node.cluster(), node.config()).repairAll(damage);
            return what + "; scrub found " + found.size() + ", rebuilt " + r.blocks()
                    + (r.failures().isEmpty() ? "" : ", failures " + r.failures());
        }
        return what + "; " + fix("fix");
    }

    private void fail(String what) {
        stats.losses++;
        stats.violations++;
        what += "; " + where(what);
        throw new ChaosFailure(seed, step, what, List.copyOf(history), options.replayCommand(seed));
    }

    // ---------------------------------------------------------------- helpers

    /** For a failure report: the state of the volume named in {@code what} and, if coded, its stripe map. */
    private String where(String what) {
        Matcher m = Pattern.compile("needle (\\d+),").matcher(what);
        if (!m.find()) {
            return "";
        }
        int v = Integer.parseInt(m.group(1));
        StringBuilder b = new StringBuilder("volume " + v + " " + volumeState(v) + ", store down: "
                + (downStore < 0 ? "none" : "store-" + downStore));
        try {
            StripeMap map = new RaidNode(raidConfig("rs", BLOCK_SIZES[0]), runner).cluster().stripeMap(v);
            if (map != null) {
                b.append(", ").append(map.codec()).append('(').append(map.k()).append(',').append(map.r()).append(") block ")
                        .append(map.blockSize()).append(" bytes ").append(map.volumeBytes()).append(" job ").append(map.job());
                for (StripeMap.Stripe st : map.stripes()) {
                    b.append(" s").append(st.index()).append('=');
                    for (StripeMap.Block bl : st.blocks()) {
                        b.append(bl.store()).append(':').append(bl.name().substring(bl.name().lastIndexOf('-') + 1)).append(' ');
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            b.append(" (no stripe map: ").append(e.getMessage()).append(')');
        }
        return b.toString();
    }

    private void fault(String kind) {
        stats.fault(kind);
        faulted = true;
    }

    private void record(String line) {
        history.addLast(line);
        while (history.size() > HISTORY) {
            history.removeFirst();
        }
        LOG.info("seed {} {}", seed, line);
    }

    private void touchVolume(int v) {
        for (Model.Photo p : model.photos()) {
            if (p.volume == v) {
                touched.addAll(p.alts.values());
            }
        }
    }

    /** Ids of the directory's volumes in {@code state} (only those holding model photos when asked), sorted. */
    private List<Integer> volumes(VolumeState state, boolean withPhotos) {
        Set<Integer> used = new TreeSet<>();
        for (Model.Photo p : model.photos()) {
            used.add(p.volume);
        }
        List<Integer> out = new ArrayList<>();
        for (VolumeInfo v : Futures.await(client.directory().volumes())) {
            int id = v.id();
            if (v.state() == state && (!withPhotos || used.contains(id))) {
                out.add(id);
            }
        }
        out.sort(null);
        return out;
    }

    private String volumeState(int v) {
        try {
            return String.valueOf(Futures.await(client.directory().volume(v)).state());
        } catch (RuntimeException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }

    private int runningStore(Random rnd) {
        int x = rnd.nextInt(cluster.storeCount());
        for (int i = 0; i < cluster.storeCount(); i++) {
            int s = (x + i) % cluster.storeCount();
            if (s != downStore) {
                return s;
            }
        }
        return x;
    }

    static boolean crashed(Throwable t) {
        for (Throwable x = t; x != null; x = x.getCause()) {
            if (x instanceof RaidCrash) {
                return true;
            }
            for (Throwable s : x.getSuppressed()) {
                if (s instanceof RaidCrash) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * A schedule's cluster under {@code dir}: {@code options.stores()} stores on as many racks, 3
     * replicas, heartbeats and probes every 200 ms; with power cuts every store lives on its own
     * simulated disk (in memory), seeded from the schedule.
     */
    static EmbeddedCluster startCluster(ChaosOptions options, long seed, Path dir) throws IOException, InterruptedException {
        ClusterOptions c = clusterOptions(options, dir);
        return options.powerCuts() ? EmbeddedCluster.start(c, i -> new SimulatedDisk(seed * 64 + i)) : EmbeddedCluster.start(c);
    }

    /** The cluster's options for schedule {@code seed} under {@code dir}: as {@link #startCluster} uses them. */
    static ClusterOptions clusterOptions(ChaosOptions options, Path dir) {
        return ClusterOptions.of(dir.resolve("cluster")).withStores(options.stores(), options.stores())
                .withReplication(3).withVolumeLimit(options.volumeLimit()).withTiming(200, 200, 2);
    }

    /**
     * As {@link #startCluster}, the stores registered with {@code group} (its replicas' addresses) instead of a
     * directory of their own, on the group's {@link ReplicaGroup#storeHost()} (where its replicas reach them).
     */
    static EmbeddedCluster startCluster(ChaosOptions options, long seed, Path dir, ReplicaGroup group)
            throws IOException, InterruptedException {
        ClusterOptions c = clusterOptions(options, dir);
        return EmbeddedCluster.startWithDirectory(c, options.powerCuts() ? i -> new SimulatedDisk(seed * 64 + i) : i -> null,
                group.addresses(), group.storeHost());
    }

    /**
     * Adds every block file whose name matches {@code names} on the running stores to {@code blocks},
     * and its store's index to {@code owners}; listed through each store's Disk, so a simulated disk
     * (which keeps its files in memory) works too.
     */
    static void blockFiles(EmbeddedCluster cluster, Pattern names, List<Path> blocks, List<Integer> owners)
            throws IOException {
        for (int i = 0; i < cluster.storeCount(); i++) {
            if (cluster.store(i) == null) {
                continue;
            }
            Path d = cluster.storeDir(i).resolve("blocks");
            for (String name : cluster.disk(i).list(d)) {
                if (names.matcher(name).matches()) {
                    blocks.add(d.resolve(name));
                    owners.add(i);
                }
            }
        }
    }

    /** The scrubber's findings as the damage {@code BlockFixer.repairAll} takes: the units of each stripe together. */
    static List<BlockFixer.Damage> damage(List<Scrubber.Finding> found) {
        Map<String, TreeSet<Integer>> units = new TreeMap<>();
        for (Scrubber.Finding f : found) {
            units.computeIfAbsent(f.volume() + "/" + f.stripe(), k -> new TreeSet<>()).add(f.unit());
        }
        List<BlockFixer.Damage> damage = new ArrayList<>();
        units.forEach((k, u) -> {
            String[] vs = k.split("/");
            damage.add(new BlockFixer.Damage(Integer.parseInt(vs[0]), Integer.parseInt(vs[1]),
                    u.stream().mapToInt(Integer::intValue).toArray(), "scrub"));
        });
        return damage;
    }

    /** One of {@code values}, each drawn with probability proportional to its weight. */
    static <E> E weighted(Random rnd, E[] values, ToIntFunction<E> weight) {
        int total = 0;
        for (E e : values) {
            total += weight.applyAsInt(e);
        }
        int x = rnd.nextInt(total);
        for (E e : values) {
            x -= weight.applyAsInt(e);
            if (x < 0) {
                return e;
            }
        }
        throw new AssertionError("weights of " + Arrays.toString(values) + " sum to " + total);
    }

    RaidConfig raidConfig(String codec, long blockSize) {
        return raidConfig(cluster.directoryAddress(), options, dir, codec, blockSize);
    }

    /** The raid-node configuration of a schedule (sequential or concurrent) on {@code directory}, spooling under {@code dir}. */
    static RaidConfig raidConfig(String directory, ChaosOptions options, Path dir, String codec, long blockSize) {
        RaidConfig c = new RaidConfig();
        c.directory = directory;
        c.codec = codec;
        c.k = options.k();
        c.r = options.r();
        c.blockSize = blockSize;
        c.transferBytes = 64 << 10;
        c.requestTimeoutMillis = 5000;
        c.workers = 2;
        c.repairWorkers = 4;
        c.reclaimThreshold = 0.0;
        c.spoolDir = dir.resolve("spool").toString();
        return c.validate();
    }

    static int drawAlt(Random rnd) {
        return rnd.nextBoolean() ? SPECIAL_ALTS[rnd.nextInt(SPECIAL_ALTS.length)] : rnd.nextInt();
    }

    static byte[] drawData(Random rnd) {
        int x = rnd.nextInt(100);
        int size = x < 5 ? 0 : x < 10 ? 1 : x < 80 ? 2 + rnd.nextInt(4096) : x < 96 ? rnd.nextInt(64 << 10)
                : (64 << 10) + rnd.nextInt(256 << 10);
        byte[] b = new byte[size];
        rnd.nextBytes(b);
        return b;
    }

    private static String altsText(List<int[]> alts) {
        StringBuilder b = new StringBuilder();
        for (int[] a : alts) {
            b.append(b.length() == 0 ? "" : " ").append(Arrays.toString(a).replace(" ", ""));
        }
        return b.toString();
    }

    @Override
    public void close() {
        client.close();
        runner.close();
        cluster.close();
    }
}
