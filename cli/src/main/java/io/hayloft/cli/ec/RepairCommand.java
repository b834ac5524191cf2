package io.hayloft.cli.ec;

import io.hayloft.cli.Hayloft;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code hayloft ec repair}: see {@link EcRepairer}. Exit 0 when everything was rebuilt, 1 otherwise. Stateless. */
@Command(name = "repair", mixinStandardHelpOptions = true,
        description = "Rebuild missing, truncated or corrupt blocks; print per block the bytes read and what"
                + " Reed-Solomon would have read (k x block size).")
public final class RepairCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @CommandLine.Mixin
    EcCommand.ProgressOption progress;

    @Parameters(index = "0", paramLabel = "DIR", description = "A directory written by 'hayloft ec encode'.")
    Path dir;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        EcRepairer.Result res = new EcRepairer(progress.factory(spec)).repair(dir);
        long read = 0;
        long rs = 0;
        for (EcRepairer.Rebuilt b : res.rebuilt()) {
            out.println("rebuilt " + b.damage() + ": read " + b.bytesRead() + " bytes ("
                    + SizeConverter.format(b.bytesRead()) + "), RS would read " + b.rsBytesRead() + " bytes ("
                    + SizeConverter.format(b.rsBytesRead()) + "): " + EcCommand.percent(b.bytesRead(), b.rsBytesRead())
                    + " of RS, in " + EcCommand.seconds(b.nanos())
                    + (b.rebuiltTogether() > 1 ? " (decoded together with the stripe's other "
                            + (b.rebuiltTogether() - 1) + " lost block" + (b.rebuiltTogether() > 2 ? "s" : "")
                            + "; the read is shared)" : ""));
        }
        // Count a shared read once per stripe.
        long lastStripe = -1;
        for (EcRepairer.Rebuilt b : res.rebuilt()) {
            if (b.damage().block().stripe() != lastStripe) {
                read += b.bytesRead();
                rs += b.rsBytesRead();
                lastStripe = b.damage().block().stripe();
            }
        }
        for (String f : res.failures()) {
            err.println("hayloft: " + f);
        }
        if (res.damaged().isEmpty()) {
            out.println("repair: nothing to do, all " + res.blocks() + " blocks intact (CRC32C)");
        } else {
            out.println("repair: " + res.rebuilt().size() + " of " + res.damaged().size() + " damaged blocks rebuilt;"
                    + " read " + SizeConverter.format(read) + ", RS would read " + SizeConverter.format(rs) + " ("
                    + EcCommand.percent(read, rs) + ") in " + EcCommand.seconds(res.nanos()));
        }
        EcCommand.flush(out, err);
        return res.ok() ? 0 : Hayloft.EXIT_FAILED;
    }
}
