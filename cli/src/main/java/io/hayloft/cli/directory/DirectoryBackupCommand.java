package io.hayloft.cli.directory;

import io.hayloft.format.directory.BackupManifest;
import io.hayloft.cli.Hayloft;
import io.hayloft.cli.client.ClientOptions;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.RemoteException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hayloft directory backup --to DIR}: asks the running directory ({@code POST /v1/backup},
 * admin) to write a consistent checkpoint of its database into {@code DIR}, a new directory on the
 * directory's own host (docs/operations.md "Backing up the directory"); in a directory group, on the
 * leader's host (a follower answers 421 naming it, which the client follows).
 *
 * <p>Not thread-safe (one command run).
 */
@Command(name = "backup", mixinStandardHelpOptions = true,
        description = {"Back up the running directory's database: a consistent RocksDB checkpoint written by the directory",
                "into DIR, a new directory ON THE DIRECTORY'S HOST (copy it elsewhere afterwards). Needs the admin token."},
        footer = {"", "Examples:", "  hayloft directory backup -d d1:7000 --to /var/backups/hayloft/dir-$(date +%F-%H%M)",
                "  HAYLOFT_ADMIN_TOKEN=... hayloft directory backup --to /srv/backups/directory-1 --timeout 600"})
public final class DirectoryBackupCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Option(names = "--to", required = true, paramLabel = "DIR",
            description = "absolute path of a new (missing or empty) directory on the directory's host")
    String to;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        BackupManifest m;
        try (HayloftClient c = client.client()) {
            m = Futures.await(c.directory().backup(to));
        } catch (RemoteException e) {
            if (e.kind() == RemoteException.Kind.ERROR && e.httpStatus() >= 400 && e.httpStatus() < 500) {
                spec.commandLine().getErr().println("hayloft: backup refused: " + e.serverMessage());
                return Hayloft.EXIT_USAGE;
            }
            throw e;
        }
        out.printf("backup of cluster %s written to %s on the directory's host (a group's leader): %d files, %d bytes, "
                        + "%d stores, %d volumes, %d delete-log entries, key high-water mark %d, in %d ms%n",
                m.clusterId(), m.dir(), m.files(), m.bytes(), m.stores(), m.volumes(), m.deleteLogEntries(),
                m.keyHighWaterMark(), m.millis());
        out.flush();
        return 0;
    }
}
