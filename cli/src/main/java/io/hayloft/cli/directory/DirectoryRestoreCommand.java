package io.hayloft.cli.directory;

import io.hayloft.directory.DirectoryBackup;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.raft.RaftChangeLog;
import io.hayloft.serverkit.config.ConfigLoader;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code hayloft directory restore --from BACKUP}: offline, with the directory stopped, puts a backup
 * in place as the configured {@code dataDir} (which must be missing or empty; for a replica of a
 * directory group, as {@code dataDir/db} with no Raft log beside it, the old group's records dropped)
 * and moves the key
 * allocator and the volume sequence past anything the lost directory may have handed out after the
 * backup ({@link DirectoryBackup#restore}).
 *
 * <p>Not thread-safe (one command run).
 */
@Command(name = "restore", mixinStandardHelpOptions = true,
        description = {"Restore a directory backup into the configured dataDir (missing or empty), with the directory STOPPED.",
                "A replica of a directory group (a raft section): into dataDir/db, on every replica; then start them all with --init.",
                "Skips --key-margin keys and --volume-margin volume ids past the backup's counters, so keys and volumes",
                "handed out after the backup are never handed out again. Then start the directory as usual (without --init)."},
        footer = {"", "Examples:", "  hayloft directory restore --from /var/backups/hayloft/dir-2026-11-23-2200 --config /etc/hayloft/directory.yaml",
                "  hayloft directory restore --from /srv/backups/directory-1 dataDir=/var/lib/hayloft/directory"})
public final class DirectoryRestoreCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Option(names = "--from", required = true, paramLabel = "BACKUP", description = "the backup directory (holding hayloft-backup.json)")
    Path from;

    @Option(names = "--config", paramLabel = "FILE", description = "the directory's YAML configuration (for dataDir)")
    Path config;

    @Option(names = "--key-margin", paramLabel = "N", defaultValue = "1099511627776",
            description = "photo keys skipped past the backup's high-water mark (default 2^40 = ${DEFAULT-VALUE})")
    long keyMargin;

    @Option(names = "--volume-margin", paramLabel = "N", defaultValue = "100000",
            description = "volume ids skipped past the backup's volume sequence (default ${DEFAULT-VALUE})")
    long volumeMargin;

    @Parameters(paramLabel = "KEY=VALUE", arity = "0..*", description = "configuration overrides, e.g. dataDir=/var/lib/hayloft/directory")
    List<String> overrides = new ArrayList<>();

    @Override
    public Integer call() throws Exception {
        DirectoryConfig c = ConfigLoader.load(config, overrides, DirectoryConfig.class).validate();
        Path dataDir = Path.of(c.dataDir);
        Path target = dataDir;
        if (c.replicated()) {
            // A replica: the database is dataDir/db; the old group's Raft log must not be replayed over it.
            Path raft = RaftChangeLog.raftDir(dataDir);
            if (Files.exists(raft) && !isEmptyDir(raft)) {
                throw new IllegalArgumentException(raft + " holds the Raft log of the old directory group: stop this replica and"
                        + " move " + dataDir + " aside first (a restore forms a new group; restore the same backup on every replica)");
            }
            target = RaftChangeLog.databaseDir(dataDir);
        }
        DirectoryBackup.Restored r = DirectoryBackup.restore(from, target, keyMargin, volumeMargin, c.replicated());
        PrintWriter out = spec.commandLine().getOut();
        out.printf("restored cluster %s from %s (taken at %s) into %s%n", r.backup().clusterId(), from,
                Instant.ofEpochMilli(r.backup().createdMillis()), r.dataDir());
        out.printf("key high-water mark %d -> %d, volume sequence %d -> %d%n", r.backup().keyHighWaterMark(),
                r.keyHighWaterMark(), r.backup().volumeSequence(), r.volumeSequence());
        out.println("photos committed after the backup are not in it. Raid work is held: no raid-node gets the raid lease");
        out.println("until 'hayloft directory release-raid', after the checks in docs/operations.md (\"After a restore\").");
        if (c.replicated()) {
            out.printf("replica %s of a directory group: restore the same backup on every replica of %s, then start them all with"
                    + " --init: they form a new group with this state%n", c.raft.id,
                    c.raft.peers.stream().map(p -> p.id).toList());
        }
        out.flush();
        return 0;
    }

    private static boolean isEmptyDir(Path p) throws IOException {
        if (!Files.isDirectory(p)) {
            return false;
        }
        try (Stream<Path> s = Files.list(p)) {
            return s.findAny().isEmpty();
        }
    }
}
