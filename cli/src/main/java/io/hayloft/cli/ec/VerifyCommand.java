package io.hayloft.cli.ec;

import io.hayloft.cli.Hayloft;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code hayloft ec verify}: see {@link EcVerifier}. Exit 0 when every block is intact, 1 otherwise. Stateless. */
@Command(name = "verify", mixinStandardHelpOptions = true,
        description = "Check every block's size and CRC32C and every stripe's parity; report damaged or missing"
                + " blocks. Exit 0 when clean, 1 when anything is damaged.")
public final class VerifyCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--crc-only", description = "Skip the parity check (re-encoding every stripe); check CRCs only.")
    boolean crcOnly;

    @CommandLine.Mixin
    EcCommand.ProgressOption progress;

    @Parameters(index = "0", paramLabel = "DIR", description = "A directory written by 'hayloft ec encode'.")
    Path dir;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        EcVerifier.Result res = new EcVerifier(progress.factory(spec), !crcOnly).verify(dir);
        Manifest m = res.manifest();
        out.println(dir + ": " + EcCommand.describe(m));
        int damagedStripes = 0;
        boolean unrecoverable = false;
        for (EcVerifier.StripeReport s : res.stripes()) {
            for (BlockScanner.Damage d : s.damaged()) {
                out.println("DAMAGED " + d);
            }
            if (!s.damaged().isEmpty()) {
                damagedStripes++;
                unrecoverable |= !s.recoverable();
                out.println("  stripe " + s.stripe() + ": " + s.damaged().size() + " damaged block"
                        + (s.damaged().size() == 1 ? "" : "s") + ", " + (s.recoverable() ? "recoverable"
                        : "NOT recoverable (at most " + m.layout().r() + " can be lost)")
                        + (s.parityChecked() || crcOnly ? "" : "; parity not checked (data damaged)"));
            }
        }
        String how = crcOnly ? "CRC32C" : "CRC32C and parity";
        if (res.clean()) {
            out.println("verify: all " + m.blocks().size() + " blocks intact (" + how + ") in "
                    + EcCommand.seconds(res.nanos()));
            out.flush();
            return 0;
        }
        out.println("verify: " + res.damaged().size() + " of " + m.blocks().size() + " blocks damaged in "
                + damagedStripes + " stripe" + (damagedStripes == 1 ? "" : "s") + " (" + how + "); "
                + (unrecoverable ? "some stripes cannot be rebuilt" : "run 'hayloft ec repair " + dir + "'"));
        out.flush();
        return Hayloft.EXIT_FAILED;
    }
}
