package io.hayloft.cli.store;

import io.hayloft.cli.UntilStopped;
import io.hayloft.serverkit.config.ConfigLoader;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code hayloft store}: runs a store server until interrupted. Configuration comes from an
 * optional YAML file, then {@code key=value} (or {@code --set key=value}) overrides, then the explicit options.
 */
@Command(name = "store", mixinStandardHelpOptions = true,
        description = {"Run a store server: Haystack needle volumes and block files over HTTP.",
            "Config keys (YAML or --set): dataDirs, host, port, volumeSizeLimit, fsync (always|never), maxBodyBytes, maxBlockBytes,",
            "maxHeaderBytes, maxInitialLineBytes, maxConcurrentRequests, idleTimeoutMillis, diskThreads, ioThreads,",
            "idxFlushMillis, directory, storeId, rack, advertiseAddress, heartbeatMillis, clusterSecret, adminToken.",
            "directory is host:port, or a directory group's replicas comma-separated (h1:p1,h2:p2,h3:p3). See docs/store-api.md."},
        footer = {"", "Examples:", "  hayloft store --config /etc/hayloft/store-1.yaml",
                "  hayloft store --config store.yaml directory=10.0.0.1:7000,10.0.0.2:7000,10.0.0.3:7000",
                "  hayloft store --config store.yaml port=8081 dataDirs=/srv/hayloft/d1,/srv/hayloft/d2"})
public final class StoreCommand implements Callable<Integer> {
    @Option(names = "--config", paramLabel = "FILE", description = "YAML configuration file")
    Path config;

    @Option(names = "--set", paramLabel = "KEY=VALUE", description = "override a config key (repeatable)")
    List<String> overrides = new ArrayList<>();

    @Parameters(paramLabel = "KEY=VALUE", arity = "0..*", description = "configuration overrides, e.g. port=8080 rack=r2")
    List<String> positional = new ArrayList<>();

    @Option(names = "--port", description = "port to listen on (0 picks one)")
    Integer port;

    @Option(names = "--data-dir", paramLabel = "DIR", description = "a data directory (repeatable)")
    List<String> dataDirs = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        List<String> all = new ArrayList<>(overrides);
        all.addAll(positional);
        if (port != null) {
            all.add("port=" + port);
        }
        if (!dataDirs.isEmpty()) {
            all.add("dataDirs=" + String.join(",", dataDirs));
        }
        StoreConfig cfg = ConfigLoader.load(config, all, StoreConfig.class).validate();
        StoreServer server = StoreServer.start(cfg);
        return UntilStopped.run("hayloft-store-shutdown", server::close, () -> {
            System.out.println("hayloft store: listening on " + cfg.host + ":" + server.port() + ", data in " + cfg.dataDirs
                    + ", " + server.store().volumes().size() + " volumes");
            System.out.flush();
        });
    }
}
