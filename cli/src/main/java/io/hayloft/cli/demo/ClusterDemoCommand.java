package io.hayloft.cli.demo;

import io.hayloft.common.io.FileTrees;
import io.hayloft.cli.Hayloft;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code hayloft cluster-demo}: the embedded-cluster part of {@code hayloft demo} on its own (see
 * {@link ClusterDemo}). Works in a temporary directory that is removed afterwards, or in {@code --dir}
 * (kept). Exit 0 when every check passed, 1 otherwise. Stateless.
 */
@Command(name = "cluster-demo", mixinStandardHelpOptions = true,
        description = "Start an embedded cluster, put photos in four sizes (batched), read back, delete some,"
                + " restart, check again, and report throughput, volumes and bytes per needle.")
public final class ClusterDemoCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Option(names = "--photos", defaultValue = "1000", description = "Photos to put, each in 4 sizes (default ${DEFAULT-VALUE}).")
    int photos;

    @Option(names = "--batch", defaultValue = "50", description = "Photos per batch (default ${DEFAULT-VALUE}).")
    int batch;

    @Option(names = "--dir", description = "Keep the cluster's data here (default: a temp dir, removed).")
    Path dir;

    @Override
    public Integer call() throws Exception {
        ClusterDemo.Settings s = new ClusterDemo.Settings(photos, batch, ClusterDemo.Settings.defaults().inFlight(),
                ClusterDemo.Settings.defaults().seed());
        boolean temp = dir == null;
        Path work = temp ? Files.createTempDirectory("hayloft-cluster-demo") : Files.createDirectories(dir);
        try {
            return new ClusterDemo().run(work, s, spec.commandLine().getOut()).ok() ? 0 : Hayloft.EXIT_FAILED;
        } finally {
            if (temp) {
                FileTrees.delete(work);
            }
        }
    }

}
