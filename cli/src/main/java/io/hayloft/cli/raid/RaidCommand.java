package io.hayloft.cli.raid;

import io.hayloft.cli.Hayloft;
import io.hayloft.cli.ec.Progress;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.raid.BlockFixer;
import io.hayloft.raid.Cluster;
import io.hayloft.raid.EncodeJob;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidLease;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.ReclaimJob;
import io.hayloft.raid.ThreadPoolRunner;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine;

/**
 * {@code hayloft raid serve|encode|status|fsck|fix|reclaim|recover}: the raid-node daemon and the cold tier
 * by hand (docs/raid.md). Each subcommand talks to the directory and stores over HTTP ({@code status}
 * also to a running raid-node); exit 0 ok, 1 operation failed or damage found, 2 bad usage.
 * Stateless; one command per process.
 */
@Command(name = "raid", mixinStandardHelpOptions = true,
        description = "Erasure-code sealed volumes, check and repair the cold tier.",
        subcommands = {RaidServe.class, RaidCommand.Encode.class, RaidCommand.Status.class, RaidCommand.Fsck.class,
                RaidCommand.Fix.class, RaidCommand.Reclaim.class, RaidCommand.Reindex.class, RaidCommand.Recover.class})
public final class RaidCommand implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** How long a command's raid lease lasts without renewal (renewed every third of it). */
    static final long LEASE_TTL_MILLIS = 60_000;

    /** Options every raid subcommand shares. */
    static class Common {
        @Option(names = "--directory", defaultValue = "127.0.0.1:7000", paramLabel = "HOST:PORT[,HOST:PORT...]",
                description = "directory host:port, or a directory group's replicas comma-separated (default ${DEFAULT-VALUE})")
        String directory;
        @Option(names = "--admin-token", description = "the directory's admin token, if it has one")
        String adminToken;
        @Option(names = "--codec", defaultValue = "hh-xor+", description = "rs, hh-xor, hh-xor+, hh-nonxor (default ${DEFAULT-VALUE})")
        String codec;
        @Option(names = "-k", defaultValue = "10", description = "data blocks per stripe (default ${DEFAULT-VALUE})")
        int k;
        @Option(names = "-r", defaultValue = "4", description = "parity blocks per stripe (default ${DEFAULT-VALUE})")
        int r;
        @Option(names = "--block-size", defaultValue = "268435456", description = "bytes per block (default ${DEFAULT-VALUE})")
        long blockSize;
        @Option(names = "--workers", defaultValue = "4", description = "stripes encoded in parallel (default ${DEFAULT-VALUE})")
        int workers;
        @Option(names = "--repair-workers", defaultValue = "16",
                description = "most stripes repaired at once by fix (default ${DEFAULT-VALUE})")
        int repairWorkers;
        @Option(names = "--repair-bandwidth", defaultValue = "0", description = "repair bytes/s per store, 0 = unlimited")
        long repairBandwidth;
        @Option(names = "--encode-at", defaultValue = "store", description = {"where stripes are encoded: store (a replica holder",
                "reads its own file and sends the blocks; the raid-node when none can) or raid-node (default ${DEFAULT-VALUE})"})
        String encodeAt;
        @Option(names = "--progress", description = "Show a progress bar on stderr even when it is not a terminal.")
        boolean progress;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        RaidConfig config() {
            RaidConfig c = new RaidConfig();
            c.directory = directory;
            c.adminToken = adminToken;
            c.codec = codec;
            c.k = k;
            c.r = r;
            c.blockSize = blockSize;
            c.workers = workers;
            c.repairWorkers = repairWorkers;
            c.repairBytesPerSecondPerStore = repairBandwidth;
            c.encodeAt = encodeAt;
            return c.validate();
        }

        PrintWriter out() {
            return spec.commandLine().getOut();
        }

        /**
         * Takes the cluster's raid lease for this command (one raid-node at a time deletes and
         * rewrites blocks); fails with a message naming the holder when a daemon or another
         * command has it.
         */
        RaidLease lease(RaidNode node) throws IOException {
            return RaidLease.acquire(node.cluster(), RaidLease.commandHolder(), LEASE_TTL_MILLIS);
        }

        Progress.Factory bars() {
            return Progress.Factory.of(spec.commandLine().getErr(), progress);
        }

        /** One volume's work; throws what the job throws. */
        @FunctionalInterface
        interface VolumeJob {
            void run(int volume) throws IOException;
        }

        /**
         * Runs {@code job} on each volume, going on past failures: a message per failed volume, exit 2
         * when a volume is unknown, 1 when a job failed, else 0.
         */
        int eachVolume(List<Integer> volumes, String verb, VolumeJob job) {
            int exit = 0;
            for (int v : volumes) {
                try {
                    job.run(v);
                } catch (Cluster.HttpStatusException e) {
                    spec.commandLine().getErr().println("volume " + v + ": " + e.getMessage());
                    exit = Math.max(exit, e.status() == 404 ? Hayloft.EXIT_USAGE : Hayloft.EXIT_FAILED);
                } catch (IOException | IllegalStateException e) {
                    spec.commandLine().getErr().println("volume " + v + ": " + verb + " failed: " + e.getMessage());
                    exit = Math.max(exit, Hayloft.EXIT_FAILED);
                }
            }
            return exit;
        }
    }

    @Command(name = "encode", mixinStandardHelpOptions = true, description = "Encode one READ_ONLY volume now, whatever its age.")
    static final class Encode extends Common implements Callable<Integer> {
        @Parameters(paramLabel = "VOLUME", description = "logical volume id")
        int volume;

        @Override
        public Integer call() throws Exception {
            try (ThreadPoolRunner runner = new ThreadPoolRunner(workers)) {
                RaidNode node = new RaidNode(config(), runner);
                try (RaidLease lease = lease(node)) {
                    return encode(node);
                }
            }
        }

        private int encode(RaidNode node) throws Exception {
            node.recover();
            EncodeJob.Result r;
            EncodeProgress bar = new EncodeProgress(node, volume, bars(), encodeAt);
            try {
                r = node.encode(volume, bar);
            } finally {
                bar.close();
            }
            double secs = r.nanos() / 1e9;
            out().printf(Locale.ROOT, "volume %d encoded as job %s: %d stripes, %d bytes in %.2f s (%.1f MB/s)%n",
                    r.volume(), r.job(), r.stripes(), r.volumeBytes(), secs, r.volumeBytes() / 1e6 / Math.max(secs, 1e-9));
            return 0;
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true, description = {"Backlog, volumes by state, stripes and damaged blocks; with --raid-node,",
            "also running jobs, repair rate, bytes read per repaired byte, scrub progress and the policy."})
    static final class Status extends Common implements Callable<Integer> {
        @Option(names = "--raid-node", paramLabel = "HOST:PORT", description = "a running raid-node (hayloft raid serve) to ask")
        String raidNode;

        @Override
        public Integer call() throws Exception {
            if (raidNode != null) {
                return RaidStatus.print(raidNode, out());
            }
            try (ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
                RaidNode node = new RaidNode(config(), runner);
                Map<String, Integer> states = new TreeMap<>();
                for (VolumeInfo v : node.cluster().volumes()) {
                    states.merge(v.state().name(), 1, Integer::sum); // by name, as printed
                }
                List<StripeMap> maps = node.cluster().stripeMaps();
                long stripes = maps.stream().mapToLong(m -> m.stripes().size()).sum();
                List<BlockFixer.Damage> damage = new BlockFixer(node.cluster(), node.config()).scan();
                out().println("volumes by state: " + states);
                out().println("encode backlog:   " + node.backlog().size() + " volumes " + node.backlog());
                out().println("stripe maps:      " + maps.size() + " volumes, " + stripes + " stripes");
                out().println("damaged stripes:  " + damage.size() + ", blocks to rebuild: "
                        + damage.stream().mapToInt(d -> d.units().length).sum());
                List<ReclaimJob.Survey> surveys = node.surveys();
                long dead = surveys.stream().mapToLong(ReclaimJob.Survey::deadBytes).sum();
                long all = surveys.stream().mapToLong(ReclaimJob.Survey::volumeBytes).sum();
                List<ReclaimJob.Survey> due = surveys.stream().filter(x -> x.deadFraction() > node.config().reclaimThreshold).toList();
                out().printf(Locale.ROOT, "dead bytes:       %d of %d in coded volumes (%.1f%%); %d volumes over the reclaim "
                        + "threshold %.2f%n", dead, all, 100.0 * dead / Math.max(1, all), due.size(), node.config().reclaimThreshold);
                for (ReclaimJob.Survey x : surveys) {
                    if (x.deadBytes() > 0) {
                        out().printf(Locale.ROOT, "  volume %d: %d of %d bytes dead (%.1f%%), %d live needles, %d dead%n",
                                x.volume(), x.deadBytes(), x.volumeBytes(), 100 * x.deadFraction(), x.liveNeedles(), x.deadNeedles());
                    }
                }
                out().println("repair rate:      unknown (the raid-node measures it: --raid-node HOST:PORT)");
                return 0;
            }
        }
    }

    @Command(name = "fsck", mixinStandardHelpOptions = true, description = "Check every block of every stripe (exit 1 if any is lost or corrupt).")
    static final class Fsck extends Common implements Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            try (ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
                RaidNode node = new RaidNode(config(), runner);
                List<BlockFixer.Damage> damage = new BlockFixer(node.cluster(), node.config()).scan();
                long stripes = node.cluster().stripeMaps().stream().mapToLong(m -> m.stripes().size()).sum();
                for (BlockFixer.Damage d : damage) {
                    out().printf(Locale.ROOT, "volume %d stripe %d: %s%n", d.volume(), d.stripe(), d.why());
                }
                out().printf(Locale.ROOT, "%d stripes checked, %d damaged%n", stripes, damage.size());
                return damage.isEmpty() ? 0 : Hayloft.EXIT_FAILED;
            }
        }
    }

    @Command(name = "fix", mixinStandardHelpOptions = true, description = "Rebuild every lost or corrupt block onto new stores (the BlockFixer, once).")
    static final class Fix extends Common implements Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            try (ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
                RaidNode node = new RaidNode(config(), runner);
                try (RaidLease lease = lease(node)) {
                    return fix(node);
                }
            }
        }

        private int fix(RaidNode node) throws Exception {
            BlockFixer fixer = new BlockFixer(node.cluster(), node.config());
            List<BlockFixer.Damage> damage = fixer.scan();
            long total = 0;
            Map<Integer, Long> blockSizes = new TreeMap<>();
            for (BlockFixer.Damage d : damage) {
                Long b = blockSizes.get(d.volume());
                if (b == null) {
                    b = node.cluster().stripeMap(d.volume()).blockSize();
                    blockSizes.put(d.volume(), b);
                }
                total += d.units().length * b;
            }
            BlockFixer.Report r;
            try (Progress bar = bars().start("fix", total)) {
                long[] shown = {0};
                // Bytes decoded window by window (a block of 256 MiB moves the bar as it is rebuilt, not at its end).
                fixer.checkpoints(step -> {
                    if (step.equals("window") || step.equals("rebuilt")) {
                        synchronized (shown) {
                            long w = fixer.bytesDecoded();
                            if (w > shown[0]) {
                                bar.add(w - shown[0]);
                                shown[0] = w;
                            }
                        }
                    }
                });
                r = fixer.repairAll(damage);
            }
            double secs = r.nanos() / 1e9;
            out().printf(Locale.ROOT, "%d stripes, %d blocks rebuilt in %.2f s; %d bytes read, %d written "
                            + "(%.2f bytes read per byte rebuilt)%n", r.stripes(), r.blocks(), secs, r.bytesRead(),
                    r.bytesWritten(), r.readAmplification());
            r.failures().forEach(f -> out().println("FAILED: " + f));
            return r.failures().isEmpty() ? 0 : Hayloft.EXIT_FAILED;
        }
    }

    @Command(name = "reclaim", mixinStandardHelpOptions = true, description = "Re-encode erasure-coded volumes without their dead needles: the named ones, "
            + "or every one over the threshold.")
    static final class Reclaim extends Common implements Callable<Integer> {
        @Parameters(paramLabel = "VOLUME", arity = "0..*", description = "logical volume ids (default: every coded volume)")
        List<Integer> volumes;
        @Option(names = "--threshold", defaultValue = "0.3",
                description = "reclaim when more than this fraction of a volume's bytes is dead, in [0, 1) (default ${DEFAULT-VALUE})")
        double threshold;

        @Override
        public Integer call() throws Exception {
            RaidConfig config = config();
            config.reclaimThreshold = threshold;
            config.validate();
            try (ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
                RaidNode node = new RaidNode(config, runner);
                try (RaidLease lease = lease(node)) {
                    return reclaim(node);
                }
            }
        }

        private int reclaim(RaidNode node) throws Exception {
            node.recover();
            if (volumes == null || volumes.isEmpty()) {
                List<ReclaimJob.Result> rs = node.reclaimDue();
                rs.forEach(this::print);
                out().printf(Locale.ROOT, "%d coded volumes surveyed, %d reclaimed%n", rs.size(),
                        rs.stream().filter(ReclaimJob.Result::reclaimed).count());
                return 0;
            }
            return eachVolume(volumes, "reclaim", v -> print(node.reclaim(v, threshold)));
        }

        private void print(ReclaimJob.Result r) {
            ReclaimJob.Survey s = r.before();
            if (!r.reclaimed()) {
                out().printf(Locale.ROOT, "volume %d: %d of %d bytes dead (%.1f%%), not over %.2f: left alone%n", s.volume(),
                        s.deadBytes(), s.volumeBytes(), 100 * s.deadFraction(), threshold);
                return;
            }
            out().printf(Locale.ROOT, "volume %d: %d of %d bytes dead (%.1f%%); reclaimed as job %s (was %s): %d → %d stripes, "
                            + "%d block bytes freed in %.2f s%n", s.volume(), s.deadBytes(), s.volumeBytes(), 100 * s.deadFraction(),
                    r.newJob(), s.job(), s.stripes(), r.newStripes(), r.blockBytesFreed(), r.nanos() / 1e9);
        }
    }

    @Command(name = "reindex", mixinStandardHelpOptions = true, description = {"Rebuild erasure-coded volumes' needle indexes from their stripes (a re-encode",
            "through the reclaim protocol): for volumes encoded with index format version 1, which may lack needles",
            "whose (key, alt) collided; those needles read again. Every needle of the old index must be kept."})
    static final class Reindex extends Common implements Callable<Integer> {
        @Parameters(paramLabel = "VOLUME", arity = "1..*", description = "logical volume ids")
        List<Integer> volumes;

        @Override
        public Integer call() throws Exception {
            RaidConfig config = config();
            config.validate();
            try (ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
                RaidNode node = new RaidNode(config, runner);
                try (RaidLease lease = lease(node)) {
                    node.recover();
                    return eachVolume(volumes, "reindex", v -> {
                        ReclaimJob.Result r = node.reindex(v);
                        out().printf(Locale.ROOT, "volume %d: reindexed as job %s (was %s)%n", v, r.newJob(), r.before().job());
                    });
                }
            }
        }
    }

    @Command(name = "recover", mixinStandardHelpOptions = true, description = "Roll back interrupted encodes, finish replica drops, delete orphan blocks.")
    static final class Recover extends Common implements Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            try (ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
                RaidNode node = new RaidNode(config(), runner);
                try (RaidLease lease = lease(node)) {
                    node.recover();
                }
                out().println("recovered");
                return 0;
            }
        }
    }
}
