package io.hayloft.bench.store;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code hayloft bench store ...}: the store server's load tool and its storage micro-benchmarks. */
@Command(name = "store", mixinStandardHelpOptions = true,
        description = "Store server benchmarks: HTTP load, files vs needles, index memory, restart time.",
        subcommands = {StoreLoad.class, StoreMicro.FilesVsNeedles.class, StoreMicro.IndexMemory.class,
            StoreMicro.Restart.class, StoreMicro.HotPath.class})
public final class StoreBench implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}
