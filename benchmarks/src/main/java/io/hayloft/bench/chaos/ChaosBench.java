package io.hayloft.bench.chaos;

import io.hayloft.cli.chaos.ChaosFailure;
import io.hayloft.cli.chaos.ChaosOptions;
import io.hayloft.cli.chaos.ChaosStats;
import io.hayloft.cli.chaos.LifeCycleChecker;
import io.hayloft.serverkit.io.FileTrees;
import io.hayloft.testkit.SimulatedHosts;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine;

/**
 * {@code hayloft bench chaos}: the life-cycle model checker ({@link LifeCycleChecker}) over long random
 * schedules against embedded clusters; prints every schedule's seed and replay command, then a summary
 * (schedules, steps, operations and faults by kind, photos and reads checked, losses, wall time).
 * Exit 0 when nothing was lost, 1 at the first loss (its step, the last steps and the replay command
 * are printed), 2 on bad usage (also {@code --directory-processes} where network namespaces cannot be made).
 * With {@code --directory-processes} the directory group's replicas are separate processes on simulated
 * hosts ({@link ProcessReplicaGroup}), killed with SIGKILL and cut off the network among the faults.
 *
 * <p>Not thread-safe (one run).
 */
@Command(name = "chaos", mixinStandardHelpOptions = true,
        description = "Life-cycle model checker: random schedules of puts, deletes, encodes, reclaims and faults against an "
                + "embedded cluster, every photo checked against a model after every step.")
public final class ChaosBench implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--seed", defaultValue = "1", description = "seed of the first schedule; schedule j uses seed + j (default ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--steps", description = "steps per schedule; with --clients > 1, operations per client "
            + "(default 500; 800 with --clients > 1)")
    Integer steps;

    @Option(names = "--clients", defaultValue = "1", description = "client threads: 1 runs one step at a time; more run "
            + "clients, background jobs (seal, encode, reclaim, compact, drain, repair, scrub) and faults at once, and "
            + "check the history (default ${DEFAULT-VALUE})")
    int clients;

    @Option(names = "--min-faults", defaultValue = "0", paramLabel = "N", description = "concurrent schedules: inject at least N "
            + "faults, going on after the clients are done when they finish sooner (default ${DEFAULT-VALUE})")
    int minFaults;

    @Option(names = "--directories", defaultValue = "1", description = "directory replicas: 1, or a Raft group of 3 (or 5) "
            + "in-process replicas with leader kills and follower wipes among the faults; needs --clients > 1 (default ${DEFAULT-VALUE})")
    int directories;

    @Option(names = "--directory-processes", description = "with --directories 3: the replicas are separate processes "
            + "(hayloft directory --init --config F, from this jar's class path, 512 MiB heaps), each on a simulated host of its own (a Linux "
            + "network namespace; needs root and iproute2's ip), so leader kills are kill -9 and a replica's host is cut off "
            + "the network for 2 to 5 s among the faults (partition); the stores, raid-node and clients stay in this process")
    boolean directoryProcesses;

    @Option(names = "--schedules", defaultValue = "1", description = "schedules, each on a fresh cluster (default ${DEFAULT-VALUE})")
    int schedules;

    @Option(names = "--stores", defaultValue = "8", description = "store servers per cluster, >= k + r + 2 (default ${DEFAULT-VALUE})")
    int stores;

    @Option(names = "--codecs", split = ",", defaultValue = "rs,hh-xor,hh-xor+,hh-nonxor",
            description = "codecs encodes choose from (default ${DEFAULT-VALUE})")
    List<String> codecs;

    @Option(names = "-k", defaultValue = "4", description = "data blocks per stripe (default ${DEFAULT-VALUE})")
    int k;

    @Option(names = "-r", defaultValue = "2", description = "parity blocks per stripe, >= 2 (default ${DEFAULT-VALUE})")
    int r;

    @Option(names = "--power-cuts", description = "also cut the power of stores' (simulated) disks")
    boolean powerCuts;

    @Option(names = "--volume-limit", defaultValue = "2097152", description = "bytes at which a volume is full (default ${DEFAULT-VALUE})")
    long volumeLimit;

    @Option(names = "--sample", defaultValue = "8", description = "needles read back after each step besides those it touched (default ${DEFAULT-VALUE})")
    int sample;

    @Option(names = "--dir", description = "where the clusters' data go (default: a temporary directory, deleted afterwards)")
    Path dir;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        Path data = dir != null ? dir : Files.createTempDirectory("hayloft-chaos-");
        ChaosOptions options;
        try {
            int n = steps != null ? steps : clients > 1 ? 800 : 500;
            options = new ChaosOptions(seed, n, schedules, stores, codecs, k, r, powerCuts, volumeLimit, sample, data, clients, directories)
                    .withMinFaults(minFaults);
            if (directoryProcesses) {
                if (directories != 3) {
                    throw new IllegalArgumentException("--directory-processes needs --directories 3, was " + directories);
                }
                SimulatedHosts.Availability a = ProcessReplicaGroup.available();
                if (!a.usable()) {
                    throw new IllegalArgumentException("--directory-processes needs simulated hosts (Linux network namespaces: "
                            + "root and iproute2's ip and tc), which cannot be made here: " + a.reason());
                }
                options = options.withDirectoryGroups(ProcessReplicaGroup.factory(ProcessReplicaGroup.launcher()));
            }
        } catch (IllegalArgumentException e) {
            spec.commandLine().getErr().println("hayloft bench chaos: " + e.getMessage());
            return 2;
        }
        LifeCycleChecker checker = new LifeCycleChecker(options, out);
        try {
            ChaosStats stats = checker.run();
            out.println();
            out.print(stats.table());
            out.flush();
            return stats.losses() == 0 ? 0 : 1;
        } catch (ChaosFailure f) {
            out.flush();
            spec.commandLine().getErr().println(f.getMessage());
            spec.commandLine().getErr().flush();
            out.println();
            out.print(checker.stats().table());
            out.flush();
            return 1;
        } finally {
            if (dir == null) {
                try {
                    FileTrees.delete(data);
                } catch (IOException e) {
                    spec.commandLine().getErr().println("cannot delete " + data + ": " + e.getMessage());
                }
            }
        }
    }
}
