package io.hayloft.cli.ec;

import io.hayloft.erasure.CodecKind;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code hayloft ec encode}: see {@link EcEncoder}. Stateless. */
@Command(name = "encode", mixinStandardHelpOptions = true,
        description = "Cut FILE into stripes of k data blocks, add r parity blocks each, and write one file per"
                + " block plus manifest.json into DIR.")
public final class EncodeCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--codec", required = true, converter = EcCommand.CodecConverter.class,
            description = "rs, hh-xor, hh-xor+ or hh-nonxor.")
    CodecKind codec;

    @Option(names = "--k", defaultValue = "10", description = "Data blocks per stripe (default ${DEFAULT-VALUE}).")
    int k;

    @Option(names = "--r", defaultValue = "4", description = "Parity blocks per stripe (default ${DEFAULT-VALUE}).")
    int r;

    @Option(names = "--block-size", defaultValue = "256m", converter = SizeConverter.class,
            description = "Bytes per block: 64k, 16m, 256m, 1g... (default ${DEFAULT-VALUE}; even for hh-*).")
    long blockSize;

    @CommandLine.Mixin
    EcCommand.ProgressOption progress;

    @Parameters(index = "0", paramLabel = "FILE", description = "The file to encode.")
    Path file;

    @Parameters(index = "1", paramLabel = "DIR", description = "Where to write the blocks (created if missing).")
    Path dir;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        EcEncoder.Result res = new EcEncoder(codec, k, r, blockSize, progress.factory(spec)).encode(file, dir);
        Manifest m = res.manifest();
        long parity = m.layout().stripes() * m.layout().r() * m.layout().blockSize();
        out.println("encoded " + file + " into " + dir + ": " + EcCommand.describe(m));
        if (m.layout().blockSize() != blockSize) {
            out.println("  note: the file is smaller than one block, so the block size is "
                    + m.layout().blockSize() + " bytes instead of " + blockSize);
        }
        out.println("  wrote " + SizeConverter.format(m.layout().length()) + " of data and "
                + SizeConverter.format(parity) + " of parity in " + EcCommand.seconds(res.nanos()) + " ("
                + EcCommand.rate(m.layout().length(), res.nanos()) + "); file CRC32C " + Manifest.hex(m.fileCrc32c()));
        out.flush();
        return 0;
    }
}
