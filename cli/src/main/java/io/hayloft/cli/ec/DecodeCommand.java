package io.hayloft.cli.ec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code hayloft ec decode}: see {@link EcDecoder}. Exit 0 when FILE was restored and matches the
 * original's CRC32C; 1 when too many blocks are lost ({@link EcDecoder.UnrecoverableException}). Stateless.
 */
@Command(name = "decode", mixinStandardHelpOptions = true,
        description = "Restore the original file from DIR into FILE, rebuilding missing or corrupt data blocks"
                + " (up to r per stripe).")
public final class DecodeCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--force", description = "Overwrite FILE if it exists.")
    boolean force;

    @CommandLine.Mixin
    EcCommand.ProgressOption progress;

    @Parameters(index = "0", paramLabel = "DIR", description = "A directory written by 'hayloft ec encode'.")
    Path dir;

    @Parameters(index = "1", paramLabel = "FILE", description = "The file to write.")
    Path file;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        EcDecoder.Result res = new EcDecoder(progress.factory(spec)).decode(dir, file, force);
        out.println("decoded " + dir + " into " + file + ": " + res.length() + " bytes, CRC32C verified, in "
                + EcCommand.seconds(res.nanos()) + " (" + EcCommand.rate(res.length(), res.nanos()) + ")");
        if (!res.rebuilt().isEmpty()) {
            out.println("  rebuilt from parity: "
                    + res.rebuilt().stream().map(BlockScanner.Damage::toString).collect(Collectors.joining("; ")));
        }
        out.flush();
        return 0;
    }
}
