package io.hayloft.cli.raid;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.cli.Hayloft;
import io.hayloft.raid.BlockFixer;
import io.hayloft.raid.EncodeJob;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidNode;
import io.hayloft.common.wire.StripeMap;
import io.hayloft.raid.ThreadPoolRunner;
import java.io.PrintWriter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code hayloft raid encode|status|fsck|fix|recover}: the cold tier by hand (docs/raid.md). Each
 * subcommand talks to the directory and stores over HTTP; exit 0 ok, 1 operation failed or damage
 * found, 2 bad usage. Stateless; one command per process.
 */
@Command(name = "raid", mixinStandardHelpOptions = true,
        description = "Erasure-code sealed volumes, check and repair the cold tier.",
        subcommands = {RaidCommand.Encode.class, RaidCommand.Status.class, RaidCommand.Fsck.class,
                RaidCommand.Fix.class, RaidCommand.Recover.class})
public final class RaidCommand implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** Options every raid subcommand shares. */
    static class Common {
        @Option(names = "--directory", defaultValue = "127.0.0.1:7000", description = "directory host:port (default ${DEFAULT-VALUE})")
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
        @Option(names = "--workers", defaultValue = "4", description = "parallel jobs (default ${DEFAULT-VALUE})")
        int workers;
        @Option(names = "--repair-bandwidth", defaultValue = "0", description = "repair bytes/s per store, 0 = unlimited")
        long repairBandwidth;

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
            c.repairBytesPerSecondPerStore = repairBandwidth;
            return c.validate();
        }

        PrintWriter out() {
            return spec.commandLine().getOut();
        }
    }

    @Command(name = "encode", description = "Encode one READ_ONLY volume now, whatever its age.")
    static final class Encode extends Common implements Callable<Integer> {
        @Parameters(paramLabel = "VOLUME", description = "logical volume id")
        int volume;

        @Override
        public Integer call() throws Exception {
            try (ThreadPoolRunner runner = new ThreadPoolRunner(workers)) {
                RaidNode node = new RaidNode(config(), runner);
                node.recover();
                EncodeJob.Result r = node.encode(volume);
                double secs = r.nanos() / 1e9;
                out().printf(Locale.ROOT, "volume %d encoded as job %s: %d stripes, %d bytes in %.2f s (%.1f MB/s)%n",
                        r.volume(), r.job(), r.stripes(), r.volumeBytes(), secs, r.volumeBytes() / 1e6 / Math.max(secs, 1e-9));
                return 0;
            }
        }
    }

    @Command(name = "status", description = "Backlog, volumes by state, stripes and damaged blocks.")
    static final class Status extends Common implements Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            try (ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
                RaidNode node = new RaidNode(config(), runner);
                Map<String, Integer> states = new TreeMap<>();
                for (JsonNode v : node.cluster().volumes()) {
                    states.merge(v.get("state").asText(), 1, Integer::sum);
                }
                List<StripeMap> maps = node.cluster().stripeMaps();
                long stripes = maps.stream().mapToLong(m -> m.stripes().size()).sum();
                List<BlockFixer.Damage> damage = new BlockFixer(node.cluster(), node.config()).scan();
                out().println("volumes by state: " + states);
                out().println("encode backlog:   " + node.backlog().size() + " volumes " + node.backlog());
                out().println("stripe maps:      " + maps.size() + " volumes, " + stripes + " stripes");
                out().println("damaged stripes:  " + damage.size() + ", blocks to rebuild: "
                        + damage.stream().mapToInt(d -> d.units().length).sum());
                return 0;
            }
        }
    }

    @Command(name = "fsck", description = "Check every block of every stripe (exit 1 if any is lost or corrupt).")
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

    @Command(name = "fix", description = "Rebuild every lost or corrupt block onto new stores (the BlockFixer, once).")
    static final class Fix extends Common implements Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            try (ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
                RaidNode node = new RaidNode(config(), runner);
                BlockFixer.Report r = new BlockFixer(node.cluster(), node.config()).repairAll();
                double secs = r.nanos() / 1e9;
                out().printf(Locale.ROOT, "%d stripes, %d blocks rebuilt in %.2f s; %d bytes read, %d written "
                                + "(%.2f bytes read per byte rebuilt)%n", r.stripes(), r.blocks(), secs, r.bytesRead(),
                        r.bytesWritten(), r.readAmplification());
                r.failures().forEach(f -> out().println("FAILED: " + f));
                return r.failures().isEmpty() ? 0 : Hayloft.EXIT_FAILED;
            }
        }
    }

    @Command(name = "recover", description = "Roll back interrupted encodes, finish replica drops, delete orphan blocks.")
    static final class Recover extends Common implements Callable<Integer> {
        @Override
        public Integer call() throws Exception {
            try (ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
                new RaidNode(config(), runner).recover();
                out().println("recovered");
                return 0;
            }
        }
    }
}
