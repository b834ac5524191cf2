package io.hayloft.bench;

import io.hayloft.bench.cache.CacheLoad;
import io.hayloft.bench.chaos.ChaosBench;
import io.hayloft.bench.cluster.ClusterLoad;
import io.hayloft.bench.directory.DirectoryLoad;
import io.hayloft.bench.failover.FailoverBench;
import io.hayloft.bench.raid.EncodeThroughput;
import io.hayloft.bench.raid.RaidBench;
import io.hayloft.bench.raid.RaidRecoveryBench;
import io.hayloft.bench.raid.ReclaimBench;
import io.hayloft.bench.store.StoreBench;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.openjdk.jmh.Main;
import picocli.CommandLine.Command;
import picocli.CommandLine;

/**
 * {@code hayloft bench <command>}: JMH benchmarks of the codes and load tools for the servers.
 * {@code hayloft bench jmh [JMH options]} runs the JMH benchmarks in this jar.
 */
@Command(name = "hayloft bench", mixinStandardHelpOptions = true,
        description = "Benchmarks: JMH for code paths, load tools for servers.",
        subcommands = {CommandLine.HelpCommand.class, Bench.Jmh.class, StoreBench.class,
                ClusterLoad.class, CacheLoad.class, RaidBench.class,
                ReclaimBench.class, EncodeThroughput.class,
                RaidRecoveryBench.class, ChaosBench.class, FailoverBench.class, DirectoryLoad.class, io.hayloft.bench.s3.S3Load.class})
public final class Bench implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        // JMH's own options (-f, -wi, -p name=v, ...) must reach it untouched, not be rejected as unknown.
        CommandLine cl = new CommandLine(new Bench());
        cl.getSubcommands().get("jmh").setUnmatchedOptionsArePositionalParams(true);
        System.exit(cl.execute(args));
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    @Command(name = "jmh", description = "Run JMH benchmarks; every argument is passed to JMH (try -h, -l).")
    static final class Jmh implements Callable<Integer> {
        @CommandLine.Parameters(arity = "0..*", description = "JMH arguments")
        List<String> args = new ArrayList<>();

        @Override
        public Integer call() throws Exception {
            Main.main(args.toArray(new String[0]));
            return 0;
        }
    }
}
