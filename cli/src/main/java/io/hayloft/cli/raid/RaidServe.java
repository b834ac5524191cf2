package io.hayloft.cli.raid;

import io.hayloft.cli.UntilStopped;
import io.hayloft.serverkit.config.ConfigLoader;
import io.hayloft.raid.Checkpoints;
import io.hayloft.raid.RaidServer;
import io.hayloft.raid.RaidServerConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code hayloft raid serve}: runs the raid-node daemon until it is stopped (SIGTERM or Ctrl-C):
 * recovery at start, then policy passes (encode, repair, scrub, reclaim) and its HTTP API.
 */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = {"Run the raid-node daemon: encode the backlog, repair, scrub, on a hot-reloaded policy file.",
                "Configuration keys: docs/raid.md \"Daemon\"; any key can be overridden as key=value."},
        footer = {"", "Examples:", "  hayloft raid serve --directory 10.0.0.1:7000 --policy /etc/hayloft/raid-policy.json",
                "  hayloft raid serve --config raid.yaml port=7300"})
final class RaidServe implements Callable<Integer> {

    @Option(names = "--config", paramLabel = "FILE", description = "YAML or JSON daemon configuration (RaidServerConfig keys)")
    Path config;

    @Option(names = "--policy", paramLabel = "FILE", description = "JSON policy file, reloaded when it changes (docs/raid.md \"Policy file\")")
    String policy;

    @Option(names = "--directory", paramLabel = "HOST:PORT[,HOST:PORT...]",
            description = "directory host:port, or a directory group's replicas comma-separated")
    String directory;

    @Option(names = "--port", description = "HTTP port (default 7300; 0 picks one)")
    Integer port;

    @Parameters(paramLabel = "KEY=VALUE", arity = "0..*", description = "configuration overrides, e.g. host=0.0.0.0 spoolDir=/var/tmp")
    List<String> overrides = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        List<String> all = new ArrayList<>(overrides);
        if (policy != null) {
            all.add("policyFile=" + policy);
        }
        if (directory != null) {
            all.add("directory=" + directory);
        }
        if (port != null) {
            all.add("port=" + port);
        }
        RaidServerConfig c = ConfigLoader.load(config, all, RaidServerConfig.class).validate();
        RaidServer server = RaidServer.start(c, Checkpoints.NONE);
        return UntilStopped.run("hayloft-raid-shutdown", server::close, () -> System.out.println("hayloft raid-node listening on "
                + server.address() + " for directory " + c.directory
                + " (policy " + (c.policyFile == null ? "defaults" : c.policyFile) + ")"));
    }
}
