package io.hayloft.cli.directory;

import io.hayloft.cli.UntilStopped;
import io.hayloft.serverkit.config.ConfigLoader;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code hayloft directory}: runs a directory server until it is stopped (SIGTERM or Ctrl-C). */
@Command(name = "directory", mixinStandardHelpOptions = true,
        subcommands = {DirectoryBackupCommand.class, DirectoryRestoreCommand.class, ReleaseRaidCommand.class,
                GroupCommand.class, SnapshotCommand.class},
        description = {"Run a directory server: cluster metadata in RocksDB, allocator leases, the volume map, delete logs, health checks.",
                "Configuration keys and defaults: see docs/directory-api.md and DirectoryConfig; any key can be overridden as key=value."},
        footer = {"", "Examples:", "  hayloft directory --init dataDir=/var/lib/hayloft/directory port=7000",
                "  hayloft directory --config directory.yaml clusterSecret=$SECRET",
                "  hayloft directory backup --to /var/backups/hayloft/dir-1   (asks the running directory)",
                "  hayloft directory restore --from /var/backups/hayloft/dir-1 --config directory.yaml   (directory stopped)"})
public final class DirectoryCommand implements Callable<Integer> {

    @Option(names = "--config", paramLabel = "FILE", description = "YAML configuration file")
    Path config;

    @Option(names = "--init", description = "create a new, empty cluster database if none exists (otherwise a missing database is an error)")
    boolean init;

    @Parameters(paramLabel = "KEY=VALUE", arity = "0..*", description = "configuration overrides, e.g. port=7000 dataDir=/data/dir")
    List<String> overrides = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        DirectoryConfig c = ConfigLoader.load(config, overrides, DirectoryConfig.class);
        if (init) {
            c.init = true;
        }
        c.validate();
        DirectoryServer server = DirectoryServer.start(c);
        return UntilStopped.run("hayloft-directory-shutdown", server::close,
                () -> System.out.println("hayloft directory listening on " + server.address() + " (data " + c.dataDir + ")"));
    }
}
