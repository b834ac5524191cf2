package io.hayloft.cli.chaos;

import io.hayloft.cli.chaos.History.Kind;
import io.hayloft.cli.chaos.History.Outcome;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.client.Futures;
import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.raid.BlockFixer;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.ReclaimJob;
import io.hayloft.raid.Scrubber;
import io.hayloft.raid.ThreadPoolRunner;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The end of a concurrent schedule, with no fault and no client: the cluster made whole (every store
 * running and UP), then the background jobs run to completion, each failure
 * a violation: every writable volume holding photos sealed, every read-only volume encoded (the codecs
 * of {@code --codecs} in turn), every coded volume with dead needles reclaimed, every damaged or
 * missing block repaired, and a scrub of every block that finds nothing; no volume holding photos
 * may be left uncoded. Last, every needle is read back against the final model ({@link ChaosReads}).
 *
 * <p>Not thread-safe: the schedule's thread runs it once.
 */
final class QuietPhase {
    private static final Pattern NEEDLE = Pattern.compile("needle (\\d+),(\\d+),(-?\\d+),");

    private final ConcurrentChaosRun run;
    private final BackgroundJobs jobs;

    QuietPhase(ConcurrentChaosRun run, BackgroundJobs jobs) {
        this.run = run;
        this.jobs = jobs;
    }

    void run() throws Exception {
        try (ThreadPoolRunner runner = new ThreadPoolRunner(2)) {
            if (!settle(runner) || !encodeAll(runner) || !repairAll(runner) || !reclaimAll(runner)
                    || !repairAll(runner) || !allCoded()) {
                return;
            }
            readAll();
        }
    }

    /** Every store running and UP in the directory. */
    private boolean settle(ThreadPoolRunner runner) throws Exception {
        long invoke = System.nanoTime();
        EmbeddedCluster cluster = run.cluster();
        for (int i = 0; i < cluster.storeCount(); i++) {
            if (cluster.store(i) == null) {
                cluster.startStore(i);
            }
        }
        cluster.heartbeat();
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (true) {
            List<String> notUp = new ArrayList<>();
            for (StoreInfo s : Futures.await(run.client().directory().stores())) {
                if (s.state() == null || !s.state().up()) {
                    notUp.add(s.id());
                }
            }
            if (notUp.isEmpty()) {
                break;
            }
            for (String id : notUp) {
                Futures.await(run.client().directory().restoreStore(id)); // the operator brings it back
            }
            if (System.nanoTime() > deadline) {
                run.quietViolation("settle", invoke, null, "stores not UP 30 s after the last fault: " + notUp);
                return false;
            }
            Thread.sleep(200); // poll the directory's view
        }
        // No recover() here: the raid-node process did not restart (a simulated crash recovers at once), so
        // what a failed job left behind must be cleaned up as a long-lived daemon does: the first step of
        // its pass rolls back the plans and pending reclaims whose rollback could not reach a store.
        int rolledBack = new RaidNode(run.raidConfig("rs", ChaosRun.BLOCK_SIZES[0]), runner).rollBackUnfinished();
        run.history().record("quiet", Kind.JOB, "settle", List.of(), invoke, Outcome.OK,
                "every store UP; " + rolledBack + " unfinished plans rolled back (the daemon's pass)");
        return true;
    }

    /** Seals every writable volume holding photos, then encodes every read-only volume. */
    private boolean encodeAll(ThreadPoolRunner runner) {
        for (int v : run.volumes(VolumeState.WRITABLE, true)) {
            long invoke = System.nanoTime();
            Futures.await(run.client().directory().markReadOnly(v, "chaos final seal"));
            run.history().record("quiet", Kind.JOB, "seal", List.of(), invoke, Outcome.OK, "seal volume " + v);
        }
        List<String> codecs = run.options().codecs();
        int n = 0;
        for (int v : run.volumes(VolumeState.READ_ONLY, false)) {
            String codec = codecs.get(n % codecs.size());
            long block = ChaosRun.BLOCK_SIZES[n % ChaosRun.BLOCK_SIZES.length];
            n++;
            if (!job("final-encode", () -> jobs.encode(v, codec, block, runner, new String[1]), "encode volume " + v + " "
                    + codec + " block " + block)) {
                return false;
            }
        }
        return true;
    }

    /** Repairs every damaged or missing block; then a scrub and the fixer's scan must find nothing. */
    private boolean repairAll(ThreadPoolRunner runner) {
        RaidNode node = new RaidNode(run.raidConfig("rs", ChaosRun.BLOCK_SIZES[0]), runner);
        return job("final-repair", () -> {
            List<Scrubber.Finding> found = new Scrubber(node.cluster(), 1 << 20).cycle(0);
            List<BlockFixer.Damage> damage = new ArrayList<>();
            for (Scrubber.Finding f : found) {
                damage.add(new BlockFixer.Damage(f.volume(), f.stripe(), new int[] {f.unit()}, "scrub"));
            }
            BlockFixer fixer = new BlockFixer(node.cluster(), node.config());
            BlockFixer.Report a = damage.isEmpty() ? null : fixer.repairAll(damage);
            BlockFixer.Report b = fixer.repairAll();
            if (a != null && !a.failures().isEmpty() || !b.failures().isEmpty()) {
                throw new IOException("repairs failed: " + (a == null ? "" : a.failures() + " ") + b.failures());
            }
            List<Scrubber.Finding> again = new Scrubber(node.cluster(), 1 << 20).cycle(0);
            List<BlockFixer.Damage> left = fixer.scan();
            if (!again.isEmpty() || !left.isEmpty()) {
                throw new IOException("after the repairs a scrub finds " + again + " and the scan " + left.size()
                        + " damaged stripes");
            }
            return (found.size() + b.blocks()) + " blocks rebuilt";
        }, "repair every damaged stripe, scrub everything");
    }

    /** Reclaims every coded volume with dead needles. */
    private boolean reclaimAll(ThreadPoolRunner runner) {
        for (int v : run.volumes(VolumeState.ERASURE_CODED, false)) {
            if (!job("final-reclaim", () -> jobs.reclaim(v, 0.0, runner, new String[1]), "reclaim volume " + v)) {
                return false;
            }
        }
        return true;
    }

    /** No volume holding photos is left uncoded. */
    private boolean allCoded() {
        long invoke = System.nanoTime();
        List<Integer> coded = run.volumes(VolumeState.ERASURE_CODED, true);
        List<String> left = new ArrayList<>();
        for (VolumeInfo v : Futures.await(run.client().directory().volumes())) {
            int id = v.id();
            if (run.holdsPhotos(id) && !coded.contains(id)) {
                left.add(id + " " + v.state() + " " + (v.reason() == null ? "" : v.reason()));
            }
        }
        if (!left.isEmpty()) {
            run.quietViolation("all-coded", invoke, null, "volumes holding photos not coded at the end: " + left);
            return false;
        }
        run.history().record("quiet", Kind.JOB, "all-coded", List.of(), invoke, Outcome.OK, coded.size() + " volumes coded");
        return true;
    }

    /** Reads every needle back against the final model (errors retried 30 s, as the sequential checker does). */
    private void readAll() throws Exception {
        long invoke = System.nanoTime();
        Model model = run.finalModel();
        ChaosReads reads = new ChaosReads(run.client(), run.stats(), what -> {
            throw new QuietFailure(what);
        });
        try {
            reads.checkAll(model);
            List<Model.Needle> all = model.needles();
            Random rnd = ConcurrentChaosRun.random(run.seed(), -1);
            for (int i = 0; i < Math.min(50, all.size()); i++) {
                reads.checkWrongCookie(all.get(rnd.nextInt(all.size())));
            }
            run.history().record("quiet", Kind.JOB, "read-all", List.of(), invoke, Outcome.OK, all.size() + " needles read");
        } catch (QuietFailure f) {
            Matcher m = NEEDLE.matcher(f.getMessage());
            PhotoId needle = null;
            if (m.find()) {
                for (Model.Needle n : model.needles()) {
                    if (n.id.volume() == Integer.parseInt(m.group(1)) && n.id.key() == Long.parseLong(m.group(2))
                            && n.id.alt() == Integer.parseInt(m.group(3))) {
                        needle = n.id;
                    }
                }
            }
            run.quietViolation("read-all", invoke, needle, "final read: " + f.getMessage());
        }
    }

    /** Runs one job of the quiet phase; its failure is a violation. */
    private boolean job(String kind, Callable<String> job, String what) {
        long invoke = System.nanoTime();
        try {
            String done = job.call();
            run.history().record("quiet", Kind.JOB, kind, List.of(), invoke, Outcome.OK, what + ": " + done);
            return true;
        } catch (Exception e) {
            run.quietViolation(kind, invoke, null, kind + " failed with no fault in effect: " + what + ": "
                    + ConcurrentChaosRun.brief(e));
            return false;
        }
    }

    /** A wrong read in the final check. */
    private static final class QuietFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        QuietFailure(String what) {
            super(what, null, false, false);
        }
    }
}
