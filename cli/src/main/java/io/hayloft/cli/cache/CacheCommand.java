package io.hayloft.cli.cache;

import io.hayloft.cli.UntilStopped;
import io.hayloft.cache.CacheConfig;
import io.hayloft.cache.CacheServer;
import io.hayloft.serverkit.config.ConfigLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code hayloft cache}: runs a cache node (primary or gutter) until it is stopped (SIGTERM or Ctrl-C). */
@Command(name = "cache", mixinStandardHelpOptions = true,
        description = {"Run a cache node: a read-through photo cache in front of the stores, with leases and admission rules.",
                "Configuration keys and defaults: see docs/cache-api.md and CacheConfig; any key can be overridden as key=value."},
        footer = {"", "Examples:", "  hayloft cache port=8090 maxBytes=4294967296",
                "  hayloft cache --gutter port=8091 maxBytes=268435456 gutterTtlMillis=10000",
                "  hayloft cache --config cache.yaml clusterSecret=$SECRET cdnNetworks=10.20.0.0/16,10.21.0.0/16"})
public final class CacheCommand implements Callable<Integer> {

    @Option(names = "--config", paramLabel = "FILE", description = "YAML configuration file")
    Path config;

    @Option(names = "--gutter", description = "run as a gutter node (same as role=gutter): entries expire after gutterTtlMillis")
    boolean gutter;

    @Parameters(paramLabel = "KEY=VALUE", arity = "0..*", description = "configuration overrides, e.g. port=8090 maxBytes=1073741824")
    List<String> overrides = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        CacheConfig c = ConfigLoader.load(config, overrides, CacheConfig.class);
        if (gutter) {
            c.role = "gutter";
        }
        c.validate();
        CacheServer server = CacheServer.start(c);
        return UntilStopped.run("hayloft-cache-shutdown", server::close, () -> System.out.println("hayloft cache ("
                + (c.gutter() ? "gutter" : "primary") + ") listening on " + c.host + ":" + server.port()
                + ", " + c.maxBytes + " bytes" + (c.effectiveTtlMillis() > 0 ? ", ttl " + c.effectiveTtlMillis() + " ms" : "")));
    }
}
