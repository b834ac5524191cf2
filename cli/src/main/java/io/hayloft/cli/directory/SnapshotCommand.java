package io.hayloft.cli.directory;

import io.hayloft.cli.Hayloft;
import io.hayloft.cli.client.ClientOptions;
import io.hayloft.client.DirectoryClient;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;

/**
 * {@code hayloft directory snapshot}: asks the directory group's leader to take a Raft snapshot now
 * ({@code POST /v1/group/snapshot}, admin): a RocksDB checkpoint under each replica's
 * {@code dataDir/raft}, after which the log below it is purged. Replicas take one every
 * {@code raft.snapshotEvery} entries by themselves.
 *
 * <p>Not thread-safe (one command run).
 */
@Command(name = "snapshot", mixinStandardHelpOptions = true,
        description = {"Ask the directory group to take a Raft snapshot now (on the leader; needs the admin token).",
                "Replicas also take one every raft.snapshotEvery entries."},
        footer = {"", "Example:", "  hayloft directory snapshot -d 10.0.0.1:7000,10.0.0.2:7000,10.0.0.3:7000"})
public final class SnapshotCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Override
    public Integer call() {
        Long index = GroupCommand.run(spec, client, DirectoryClient::snapshot);
        if (index == null) {
            return Hayloft.EXIT_USAGE;
        }
        PrintWriter out = spec.commandLine().getOut();
        out.println("snapshot taken at log index " + index);
        out.flush();
        return 0;
    }
}
