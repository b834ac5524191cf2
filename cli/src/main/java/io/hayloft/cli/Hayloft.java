package io.hayloft.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code hayloft <command>}: the one entry point for every server and tool. Exit codes: 0 success,
 * 1 the operation failed (damage found, data unrecoverable), 2 bad usage or input.
 */
@Command(name = "hayloft", mixinStandardHelpOptions = true, versionProvider = Hayloft.Version.class,
        description = "Hayloft: a blob store for billions of small write-once objects.",
        subcommands = {CommandLine.HelpCommand.class, io.hayloft.cli.store.StoreCommand.class,
                io.hayloft.cli.directory.DirectoryCommand.class,
                io.hayloft.cli.cluster.ClusterCommand.class, io.hayloft.cli.client.PutCommand.class,
                io.hayloft.cli.client.GetCommand.class, io.hayloft.cli.client.RmCommand.class,
                io.hayloft.cli.client.StatCommand.class, io.hayloft.cli.client.VolumesCommand.class,
                io.hayloft.cli.client.StoresCommand.class,
                io.hayloft.cli.ec.EcCommand.class, io.hayloft.cli.demo.DemoCommand.class,
                io.hayloft.cli.cache.CacheCommand.class, io.hayloft.cli.raid.RaidCommand.class})
public final class Hayloft implements Runnable {

    /** Exit code when the command ran but its operation failed (damaged data, too many losses). */
    public static final int EXIT_FAILED = 1;
    /** Exit code for bad usage or bad input (unknown option, missing file, corrupt manifest). */
    public static final int EXIT_USAGE = 2;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(run(args));
    }

    /** Runs a command line and returns its exit code; the entry point for tests. */
    public static int run(String... args) {
        return commandLine().execute(args);
    }

    /** Runs a command line with its output and errors going to {@code out} and {@code err}; for tests. */
    public static int run(java.io.PrintWriter out, java.io.PrintWriter err, String... args) {
        CommandLine cl = commandLine();
        cl.setOut(out);
        cl.setErr(err);
        try {
            return cl.execute(args);
        } finally {
            out.flush();
            err.flush();
        }
    }

    public static CommandLine commandLine() {
        CommandLine cl = new CommandLine(new Hayloft());
        cl.setExitCodeExceptionMapper(t -> t instanceof CommandLine.ParameterException ? EXIT_USAGE : EXIT_FAILED);
        cl.setParameterExceptionHandler((ex, a) -> {
            ex.getCommandLine().getErr().println("hayloft: " + ex.getMessage());
            ex.getCommandLine().getErr().println("Try '" + ex.getCommandLine().getCommandSpec().qualifiedName() + " --help'.");
            return EXIT_USAGE;
        });
        cl.setExecutionExceptionHandler((ex, c, parsed) -> {
            c.getErr().println("hayloft: " + (ex.getMessage() == null ? ex.toString() : ex.getMessage()));
            return ex instanceof IllegalArgumentException || ex instanceof java.io.FileNotFoundException
                    || ex instanceof java.nio.file.NoSuchFileException ? EXIT_USAGE : EXIT_FAILED;
        });
        return cl;
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Hayloft.class.getPackage().getImplementationVersion();
            return new String[] {"hayloft " + (v == null ? "dev" : v), "Java " + Runtime.version()};
        }
    }
}
