package io.hayloft.cli.directory;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.cli.Hayloft;
import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.directory.DirectoryBackup;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import io.hayloft.format.directory.BackupManifest;
import io.hayloft.format.wire.Wire;
import io.hayloft.serverkit.config.ConfigLoader;
import io.hayloft.serverkit.config.Ports;
import io.hayloft.testkit.Await;
import io.hayloft.testkit.Closing;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Backup and restore with a directory group (docs/operations.md "Backup and restore with a group"):
 * a backup asked of a follower is taken by the leader; the same backup restored with {@code hayloft
 * directory restore --config F} (a raft section) on each of three new replicas goes into
 * {@code dataDir/db} without the old group's records; the three started with {@code --init} form a new
 * group with the backup's state and cluster id. A replica whose {@code dataDir/raft} holds a log is
 * refused (exit 2).
 */
class GroupRestoreTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String ADMIN = "restore-admin-token";

    @TempDir
    Path dir;

    private EmbeddedCluster cluster;
    private final List<AutoCloseable> servers = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        Closing.all(Closing.each(servers), cluster);
    }

    private static String[] run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Hayloft.run(new PrintWriter(out), new PrintWriter(err), args);
        return new String[] {Integer.toString(code), out.toString(), err.toString()};
    }

    @Test
    void theSameBackupRestoredOnEveryReplicaFormsANewGroupWithItsState() throws Exception {
        cluster = EmbeddedCluster.start(ClusterOptions.of(dir.resolve("cluster")).withStores(3, 3).withDirectories(3)
                .withTiming(100, 60_000, 3).withFsync(false).withSecrets(null, ADMIN));
        try (HayloftClient c = cluster.newClient()) {
            for (int i = 0; i < 5; i++) {
                c.put(new byte[] {(byte) i});
            }
        }
        String clusterId = cluster.directory().directory().meta().clusterId();
        int volumes = cluster.directory().directory().volumes().size();
        DirectoryServer leader = cluster.directory();
        List<String> followerFirst = new ArrayList<>(cluster.directoryAddresses());
        followerFirst.remove(leader.address());
        followerFirst.add(leader.address());
        Path backup = dir.resolve("backups").resolve("b1");
        String[] b = run("directory", "backup", "-d", String.join(",", followerFirst), "--admin-token", ADMIN,
                "--to", backup.toString());
        assertThat(b[0]).as("stdout %s stderr %s", b[1], b[2]).isEqualTo("0");
        BackupManifest m = DirectoryBackup.readManifest(backup);
        assertThat(m.clusterId()).isEqualTo(clusterId);
        assertThat(m.stores()).isEqualTo(3);
        cluster.close();
        cluster = null;

        // Three new replicas: a raft section each, the same backup restored on every one.
        List<DirectoryConfig.Peer> peers = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            peers.add(new DirectoryConfig.Peer("n" + i, "127.0.0.1:" + Ports.free(), "127.0.0.1:" + Ports.free()));
        }
        List<Path> configs = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            StringBuilder y = new StringBuilder("dataDir: " + dir.resolve("r" + i) + "\nadminToken: " + ADMIN
                    + "\nprobeIntervalMillis: 60000\nraft:\n  id: n" + i + "\n  electionTimeoutMillis: 300\n  peers:\n");
            for (DirectoryConfig.Peer p : peers) {
                y.append("    - {id: ").append(p.id).append(", raft: ").append(p.raft).append(", http: ").append(p.http).append("}\n");
            }
            Path f = dir.resolve("n" + i + ".yaml");
            Files.writeString(f, y.toString());
            configs.add(f);
            String[] r = run("directory", "restore", "--from", backup.toString(), "--config", f.toString());
            assertThat(r[0]).as("stdout %s stderr %s", r[1], r[2]).isEqualTo("0");
            assertThat(r[1]).contains("into " + dir.resolve("r" + i).resolve("db")).contains("replica n" + i);
            assertThat(dir.resolve("r" + i).resolve("db").resolve("CURRENT")).isRegularFile();
            assertThat(dir.resolve("r" + i).resolve("raft")).doesNotExist();
        }
        // A replica that still holds the old group's log is refused.
        Path stale = dir.resolve("stale");
        Files.createDirectories(stale.resolve("raft").resolve("some-group"));
        String[] refused = run("directory", "restore", "--from", backup.toString(), "--config", configs.get(0).toString(),
                "dataDir=" + stale);
        assertThat(refused[0]).isEqualTo("2");
        assertThat(refused[2]).contains("Raft log of the old directory group");

        // Started with --init, the three form a new group with the backup's state.
        List<CompletableFuture<DirectoryServer>> starting = new ArrayList<>();
        for (Path f : configs) {
            DirectoryConfig c = ConfigLoader.load(f, List.of(), DirectoryConfig.class);
            c.init = true;
            starting.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return DirectoryServer.start(c.validate());
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        List<DirectoryServer> group = new ArrayList<>();
        for (CompletableFuture<DirectoryServer> f : starting) {
            DirectoryServer s = f.get();
            servers.add(s);
            group.add(s);
        }
        String list = String.join(",", peers.stream().map(p -> p.http).toList());
        Await.until("the new group has a leader", WAIT, () -> run("directory", "group", "-d", list, "--json")[0].equals("0"));
        Await.until("every replica applied the new group's first entries", WAIT,
                () -> group.stream().allMatch(s -> s.directory().meta().clusterAdopted()));
        for (DirectoryServer s : group) {
            assertThat(s.directory().meta().clusterId()).isEqualTo(clusterId);
            assertThat(s.directory().stores()).hasSize(3);
            assertThat(s.directory().volumes()).hasSize(volumes);
            assertThat(s.directory().meta().appliedIndex()[0]).as("an index of the new group's log").isPositive();
        }
        // The new group takes changes: a key lease through any replica.
        try (HayloftClient c = HayloftClient.builder().directory(list.split(",")).adminToken(ADMIN).build()) {
            Wire.Lease lease = Futures.await(c.directory().lease(1, List.of()));
            assertThat(lease.first()).as("past the backup's mark and the restore's margin")
                    .isGreaterThanOrEqualTo(m.keyHighWaterMark() + DirectoryBackup.DEFAULT_KEY_MARGIN);
        }
    }
}
