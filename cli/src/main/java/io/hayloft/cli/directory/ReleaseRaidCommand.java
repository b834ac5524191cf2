package io.hayloft.cli.directory;

import io.hayloft.format.directory.RaidHoldRelease;
import io.hayloft.cli.client.ClientOptions;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;

/**
 * {@code hayloft directory release-raid}: after a restore has been checked, lets raid-nodes take the
 * raid lease again ({@code DELETE /v1/raid-hold}, admin).
 *
 * <p>Not thread-safe (one command run).
 */
@Command(name = "release-raid", mixinStandardHelpOptions = true,
        description = {"Release the hold a restore puts on raid work (no raid lease is granted while it is there),",
                "once the stores' blocks were checked against the stripe maps (docs/operations.md, \"After a restore\")."})
public final class ReleaseRaidCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (HayloftClient c = client.client()) {
            RaidHoldRelease r = Futures.await(c.directory().releaseRaidHold());
            out.println(r.released() == null ? "no hold on raid work; nothing to release"
                    : "released: " + r.released() + "\nraid-nodes may take the raid lease again");
        }
        out.flush();
        return 0;
    }
}
