package io.hayloft.bench;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code hayloft bench <command>}: JMH benchmarks of the codes and load tools for the servers.
 * {@code hayloft bench jmh [JMH options]} runs the JMH benchmarks in this jar.
 */
@Command(name = "hayloft bench", mixinStandardHelpOptions = true,
        description = "Benchmarks: JMH for code paths, load tools for servers.",
        subcommands = {CommandLine.HelpCommand.class, Bench.Jmh.class, io.hayloft.bench.store.StoreBench.class,
                io.hayloft.bench.cluster.ClusterLoad.class, io.hayloft.bench.cache.CacheLoad.class, io.hayloft.bench.raid.RaidBench.class,
                io.hayloft.bench.raid.ReclaimBench.class, io.hayloft.bench.raid.EncodeThroughput.class,
                io.hayloft.bench.raid.RaidRecoveryBench.class, io.hayloft.bench.chaos.ChaosBench.class})
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
    static final class Jmh implements java.util.concurrent.Callable<Integer> {
        @CommandLine.Parameters(arity = "0..*", description = "JMH arguments")
        java.util.List<String> args = new java.util.ArrayList<>();

        @Override
        public Integer call() throws Exception {
            org.openjdk.jmh.Main.main(args.toArray(new String[0]));
            return 0;
        }
    }
}
