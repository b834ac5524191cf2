package io.hayloft.cli.cluster;

import io.hayloft.cli.UntilStopped;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hayloft cluster --dir DATA --stores N --racks R [--directories 3]}: a directory (or a group
 * of directory replicas) and N stores in this process on loopback ports, data under DATA (a restart
 * keeps it). Prints {@code DIRECTORY host:port} (a group: every replica's address, comma-separated,
 * as {@code -d} takes them, then one {@code REPLICA id http-host:port raft raft-host:port} line per
 * replica), one {@code STORE i host:port} line per store, with {@code --s3 PORT} the gateway's
 * {@code S3 http://host:port} and its {@code S3_ACCESS_KEY}/{@code S3_SECRET_KEY}, and {@code READY}, then serves until stopped
 * (Ctrl-C or a kill; everything acknowledged is on disk).
 *
 * <p>Not thread-safe (one command run).
 */
@Command(name = "cluster", mixinStandardHelpOptions = true,
        description = {"Run a directory and N stores in one process on loopback, data kept under --dir.",
                "With --directories 3, the directory is a group of three replicas under Raft (docs/operations.md)."},
        footer = {"", "Examples:", "  hayloft cluster --dir /tmp/hayloft --stores 3",
                "  hayloft cluster --dir /tmp/hayloft-group --directories 3   (then: hayloft directory group -d <the DIRECTORY list>)",
                "  hayloft cluster --dir /tmp/hayloft --s3 9000   (then: aws --endpoint-url http://127.0.0.1:9000 s3 ls)"})
public final class ClusterCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--dir", required = true, paramLabel = "DATA", description = "Where the cluster keeps its data.")
    Path dir;

    @Option(names = "--stores", defaultValue = "3", description = "Number of stores (default: ${DEFAULT-VALUE}).")
    int stores;

    @Option(names = "--racks", defaultValue = "3", description = "Racks the stores are spread over (default: ${DEFAULT-VALUE}).")
    int racks;

    @Option(names = "--replication", defaultValue = "3", description = "Replicas per volume, at most --stores (default: ${DEFAULT-VALUE}).")
    int replication;

    @Option(names = "--port", defaultValue = "7000",
            description = "Directory port on first start, 0 for any (later starts reuse the recorded one; default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--directories", defaultValue = "1", paramLabel = "N",
            description = "Directory replicas: 1, or 3 (5, 7) for a directory group under Raft in this process;"
                    + " HTTP ports --port, +1, +2 (default: ${DEFAULT-VALUE}).")
    int directories;

    @Option(names = "--volume-limit", defaultValue = "268435456", paramLabel = "BYTES",
            description = "Volume size at which it becomes read-only (default: ${DEFAULT-VALUE}).")
    long volumeLimit;

    @Option(names = "--no-fsync", description = "Do not fsync before acknowledging (throw-away data only).")
    boolean noFsync;

    @Option(names = "--s3", paramLabel = "PORT", defaultValue = "-1",
            description = "Also run an S3 gateway on PORT (0: any) with the user hayloft / hayloft-secret-key (docs/s3.md).")
    int s3Port;

    @Override
    public Integer call() throws Exception {
        if (racks > stores) {
            racks = stores;
        }
        ClusterOptions o = ClusterOptions.of(dir).withStores(stores, racks).withReplication(Math.min(replication, stores))
                .withVolumeLimit(volumeLimit).withDirectoryPort(port).withFsync(!noFsync).withDirectories(directories)
                .withS3(s3Port);
        EmbeddedCluster cluster = EmbeddedCluster.start(o);
        return UntilStopped.run("hayloft-cluster-shutdown", cluster::close, () -> {
            PrintWriter out = spec.commandLine().getOut();
            out.println("DIRECTORY " + cluster.directoryAddress());
            if (directories > 1) {
                for (int i = 0; i < cluster.directoryCount(); i++) {
                    out.println("REPLICA " + EmbeddedCluster.replicaId(i) + " " + cluster.directoryAddresses().get(i)
                            + " raft " + cluster.replicaRaftAddress(i));
                }
            }
            for (int i = 0; i < cluster.storeCount(); i++) {
                out.println("STORE " + i + " " + cluster.storeAddress(i));
            }
            if (cluster.s3() != null) {
                out.println("S3 http://" + cluster.s3Address() + " (path-style, region " + cluster.s3Config().region + ")");
                out.println("S3_ACCESS_KEY " + o.s3AccessKey());
                out.println("S3_SECRET_KEY " + o.s3SecretKey());
            }
            out.println("DATA " + dir.toAbsolutePath());
            out.println("READY");
            out.flush();
        });
    }
}
