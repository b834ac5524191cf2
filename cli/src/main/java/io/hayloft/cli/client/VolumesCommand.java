package io.hayloft.cli.client;

import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;

/**
 * {@code hayloft volumes}: the logical volumes with state, size, limit and replicas.
 *
 * <p>Not thread-safe (one command run).
 */
@Command(name = "volumes", mixinStandardHelpOptions = true, description = "List the logical volumes.",
        subcommands = {VolumeVerbs.Seal.class, VolumeVerbs.Show.class})
public final class VolumesCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (HayloftClient c = client.client()) {
            List<VolumeInfo> volumes = Futures.await(c.directory().volumes());
            out.printf("%-6s %-14s %12s %12s  %-30s %s%n", "ID", "STATE", "BYTES", "LIMIT", "REPLICAS", "REASON");
            for (VolumeInfo v : volumes) {
                out.printf("%-6s %-14s %12d %12d  %-30s %s%n", v.id(), v.state(), v.sizeBytes(), v.limitBytes(),
                        String.join(",", v.replicas()), v.reason() == null ? "" : v.reason());
            }
        }
        out.flush();
        return 0;
    }
}
