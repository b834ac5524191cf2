package io.hayloft.cli.client;

import io.hayloft.format.directory.StoreInfo;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;

/**
 * {@code hayloft stores}: the registered stores with address, rack, state and free space.
 *
 * <p>Not thread-safe (one command run).
 */
@Command(name = "stores", mixinStandardHelpOptions = true, description = "List the registered stores.",
        subcommands = {StoreVerbs.Fail.class, StoreVerbs.Restore.class, StoreVerbs.Drain.class})
public final class StoresCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (HayloftClient c = client.client()) {
            List<StoreInfo> stores = Futures.await(c.directory().stores());
            out.printf("%-12s %-22s %-8s %-8s %14s %4s  %s%n", "ID", "ADDRESS", "RACK", "STATE", "FREE", "FAIL", "LAST ERROR");
            for (StoreInfo s : stores) {
                out.printf("%-12s %-22s %-8s %-8s %14d %4d  %s%n", s.id(), s.address(), s.rack(), s.state(), s.freeBytes(), s.failures(), s.lastError() == null ? "" : s.lastError());
            }
        }
        out.flush();
        return 0;
    }
}
