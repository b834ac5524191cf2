package io.hayloft.cli;

import io.hayloft.cli.cache.CacheCommand;
import io.hayloft.cli.client.GetCommand;
import io.hayloft.cli.client.PutCommand;
import io.hayloft.cli.client.RmCommand;
import io.hayloft.cli.client.StatCommand;
import io.hayloft.cli.client.StoresCommand;
import io.hayloft.cli.client.VolumesCommand;
import io.hayloft.cli.cluster.ClusterCommand;
import io.hayloft.cli.demo.DemoCommand;
import io.hayloft.cli.directory.DirectoryCommand;
import io.hayloft.cli.ec.EcCommand;
import io.hayloft.cli.raid.RaidCommand;
import io.hayloft.cli.s3.S3Command;
import io.hayloft.cli.store.StoreCommand;
import java.io.FileNotFoundException;
import java.io.PrintWriter;
import java.nio.file.NoSuchFileException;
import picocli.CommandLine.Command;
import picocli.CommandLine;

/**
 * {@code hayloft <command>}: the one entry point for every server and tool. Exit codes: 0 success,
 * 1 the operation failed (damage found, data unrecoverable), 2 bad usage or input.
 */
@Command(name = "hayloft", mixinStandardHelpOptions = true, versionProvider = Hayloft.Version.class,
        description = "Hayloft: a blob store for billions of small write-once objects.",
        subcommands = {CommandLine.HelpCommand.class, StoreCommand.class,
                DirectoryCommand.class,
                ClusterCommand.class, PutCommand.class,
                GetCommand.class, RmCommand.class,
                StatCommand.class, VolumesCommand.class,
                StoresCommand.class,
                EcCommand.class, DemoCommand.class,
                CacheCommand.class, RaidCommand.class, S3Command.class})
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
    public static int run(PrintWriter out, PrintWriter err, String... args) {
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
            return ex instanceof IllegalArgumentException || ex instanceof FileNotFoundException
                    || ex instanceof NoSuchFileException ? EXIT_USAGE : EXIT_FAILED;
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
