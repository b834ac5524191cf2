package io.hayloft.cli.s3;

import io.hayloft.cli.UntilStopped;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.NamespaceClient;
import io.hayloft.s3.S3Config;
import io.hayloft.s3.S3Server;
import io.hayloft.s3.data.ChunkStore;
import io.hayloft.serverkit.config.ConfigLoader;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code hayloft s3 --config s3.yaml [key=value...]}: runs an S3 gateway until it is stopped (SIGTERM
 * or Ctrl-C); {@code hayloft s3 sweep} runs the orphan sweep once and exits. Keys: {@link S3Config}
 * (docs/s3.md). Not thread-safe (one command run).
 */
@Command(name = "s3", mixinStandardHelpOptions = true, subcommands = S3Command.Sweep.class,
        description = {"Run an S3 gateway in front of a cluster: S3's API (SigV4, multipart, checksums), objects kept as needles,",
                "the namespace in the directory. Keys and defaults: docs/s3.md and S3Config; any key can be overridden as key=value."},
        footer = {"", "Examples:", "  hayloft s3 --config s3.yaml",
                "  hayloft s3 directory=10.0.0.5:7000 port=9000 accessKey=hayloft secretKey=$SECRET",
                "  hayloft s3 sweep --config s3.yaml orphanAfterMillis=600000"})
public final class S3Command implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--config", paramLabel = "FILE", description = "YAML configuration file")
    Path config;

    @Parameters(paramLabel = "KEY=VALUE", arity = "0..*", description = "configuration overrides, e.g. port=9000 region=eu-west-1")
    List<String> overrides = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        S3Config c = ConfigLoader.load(config, overrides, S3Config.class).validate();
        S3Server server = S3Server.start(c);
        return UntilStopped.run("hayloft-s3-shutdown", server::close, () -> {
            PrintWriter out = spec.commandLine().getOut();
            out.println("hayloft s3 listening on " + c.host + ":" + server.port() + ", directory " + c.directory
                    + ", region " + c.region + ", " + c.users().size() + " user(s)");
            out.flush();
        });
    }

    /** {@code hayloft s3 sweep}: the orphan sweep once (docs/s3.md "How objects are stored"); prints the needles deleted. */
    @Command(name = "sweep", mixinStandardHelpOptions = true,
            description = {"Run the orphan sweep once: doom pending records older than orphanAfterMillis, abort uploads older",
                    "than abandonedUploadMillis, delete the needles of every doomed record. Prints the needles deleted."})
    static final class Sweep implements Callable<Integer> {
        @Spec
        picocli.CommandLine.Model.CommandSpec spec;

        @Option(names = "--config", paramLabel = "FILE", description = "YAML configuration file (the gateway's)")
        Path config;

        @Parameters(paramLabel = "KEY=VALUE", arity = "0..*", description = "configuration overrides, e.g. orphanAfterMillis=600000")
        List<String> overrides = new ArrayList<>();

        @Override
        public Integer call() throws Exception {
            S3Config c = ConfigLoader.load(config, overrides, S3Config.class).validate();
            HayloftClient.Builder b = HayloftClient.builder().directories(c.directories()).adminToken(c.directoryToken);
            if (c.tlsTrustStore != null) {
                b.trustStore(c.tlsTrustStore, c.tlsTrustStorePassword);
            }
            try (HayloftClient client = b.build();
                 ChunkStore chunks = new ChunkStore(client, new NamespaceClient(client.directory()), c.chunkBytes)) {
                long deleted = chunks.sweep(c.orphanAfterMillis, c.abandonedUploadMillis);
                PrintWriter out = spec.commandLine().getOut();
                out.println(deleted + " needles deleted");
                out.flush();
            }
            return 0;
        }
    }
}
