package io.hayloft.cli.directory;

import static org.assertj.core.api.Assertions.assertThat;
import io.hayloft.format.directory.BackupManifest;

import io.hayloft.cli.Hayloft;
import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.client.PutResult;
import io.hayloft.format.wire.Wire;
import io.hayloft.directory.DirectoryBackup;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import io.hayloft.testkit.Await;
import io.hayloft.testkit.Closing;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Directory backups (docs/operations.md "Backing up the directory"): a backup taken through
 * {@code hayloft directory backup} while a client writes, restored with {@code hayloft directory
 * restore} into a fresh data directory and started as a real directory server next to the real
 * stores, answers for every photo committed before the backup, and never hands out a key or a
 * volume id the live directory handed out after it. Bad targets are refused with 4xx JSON and exit 2.
 */
class DirectoryBackupTest {
    private static final Duration WAIT = Duration.ofSeconds(60);

    private static final String ADMIN = "backup-admin-token";

    @TempDir
    Path dir;

    private EmbeddedCluster cluster;
    private final List<AutoCloseable> closeLast = new ArrayList<>();

    @AfterEach
    void stop() throws Exception {
        Closing.all(Closing.each(closeLast), cluster);
    }

    private void startCluster() throws Exception {
        // Small allocator steps (the default is 1,000,000 keys), so keys handed out after the backup pass the
        // backup's high-water mark and only the restore's key margin keeps them from being handed out again.
        cluster = EmbeddedCluster.start(ClusterOptions.of(dir.resolve("cluster")).withStores(3, 3)
                .withTiming(100, 60_000, 3).withFsync(false).withSecrets(null, ADMIN), i -> null, c -> c.keyRangeSize = 1000);
    }

    private record Photo(PhotoId id, byte[] data) {
    }

    private static String[] run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Hayloft.run(new PrintWriter(out), new PrintWriter(err), args);
        return new String[] {Integer.toString(code), out.toString(), err.toString()};
    }

    private DirectoryServer startRestored(Path dataDir) throws InterruptedException {
        DirectoryConfig c = new DirectoryConfig();
        c.dataDir = dataDir.toString();
        c.port = 0;
        c.adminToken = ADMIN;
        c.probeIntervalMillis = 60_000;
        DirectoryServer s = DirectoryServer.start(c);
        closeLast.add(s);
        return s;
    }

    @Test
    void aBackupTakenUnderWritesRestoresEveryCommittedPhotoAndNeverReissuesAKeyOrVolume() throws Exception {
        startCluster();
        String live = cluster.directoryAddress();
        List<Photo> committed = new CopyOnWriteArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> writerFailed = new AtomicReference<>();
        Thread writer = new Thread(() -> {
            Random random = new Random(11);
            try (HayloftClient client = cluster.newClient()) {
                while (!stop.get()) {
                    byte[] data = new byte[100 + random.nextInt(4000)];
                    random.nextBytes(data);
                    PutResult r = client.put(data);
                    committed.add(new Photo(r.id(), data));
                }
            } catch (Throwable t) {
                writerFailed.set(t);
            }
        }, "backup-test-writer");
        writer.start();
        List<Photo> beforeBackup;
        try {
            Await.until("30 photos before the backup", WAIT, () -> committed.size() >= 30 || writerFailed.get() != null);
            beforeBackup = List.copyOf(committed); // acknowledged before the backup began
            Path backup = dir.resolve("backups").resolve("b1");
            String[] r = run("directory", "backup", "-d", live, "--admin-token", ADMIN, "--to", backup.toString());
            assertThat(r[0]).as("exit code; stderr: %s", r[2]).isEqualTo("0");
            assertThat(r[1]).contains("backup of cluster").contains(backup.toString());
            assertThat(backup.resolve(DirectoryBackup.MANIFEST)).isRegularFile();
            int atBackup = committed.size();
            Await.until("30 photos after the backup", WAIT, () -> committed.size() >= atBackup + 30 || writerFailed.get() != null);
        } finally {
            stop.set(true);
            writer.join(30_000);
        }
        assertThat(writerFailed.get()).as("the writer").isNull();

        // The live directory goes on handing out keys (some never written) and volume ids after the backup.
        long maxLiveKey;
        int newestLiveVolume;
        try (HayloftClient admin = HayloftClient.builder().directory(live).adminToken(ADMIN).build()) {
            long max = committed.stream().mapToLong(p -> p.id().key()).max().orElseThrow();
            for (int i = 0; i < 3; i++) {
                Wire.Lease a = Futures.await(admin.directory().lease(1000, List.of()));
                max = Math.max(max, a.first() + a.count() - 1);
            }
            maxLiveKey = max;
            newestLiveVolume = Futures.await(admin.directory().createVolumes(1)).get(0).id();
        }
        Path backup = dir.resolve("backups").resolve("b1");
        BackupManifest manifest = DirectoryBackup.readManifest(backup);
        assertThat(manifest.keyHighWaterMark()).as("the backup predates keys the live directory handed out").isLessThan(maxLiveKey);
        assertThat(manifest.volumeSequence()).isLessThanOrEqualTo(newestLiveVolume);

        Path restoredDir = dir.resolve("restored").resolve("directory");
        String[] r = run("directory", "restore", "--from", backup.toString(), "dataDir=" + restoredDir);
        assertThat(r[0]).as("exit code; stderr: %s", r[2]).isEqualTo("0");
        assertThat(r[1]).contains("restored cluster " + manifest.clusterId());
        assertThat(Files.exists(restoredDir.resolveSibling("directory.restoring"))).isFalse();

        DirectoryServer restored = startRestored(restoredDir);
        try (HayloftClient client = HayloftClient.builder().directory(restored.address()).adminToken(ADMIN)
                .requestTimeout(Duration.ofSeconds(10)).build()) {
            assertThat(beforeBackup).hasSizeGreaterThanOrEqualTo(30);
            for (Photo p : beforeBackup) {
                assertThat(client.get(p.id())).as("photo %s committed before the backup", p.id()).isEqualTo(p.data());
            }
            // Photos written after the backup read back too, when the backup knows their volume: the stores,
            // not the directory, know which photos exist (the directory keeps no per-photo state).
            int afterBackup = 0;
            for (Photo p : committed.subList(beforeBackup.size(), committed.size())) {
                if (p.id().volume() < manifest.volumeSequence()) {
                    assertThat(client.get(p.id())).as("photo %s written after the backup", p.id()).isEqualTo(p.data());
                    afterBackup++;
                }
            }
            assertThat(afterBackup).as("photos written after the backup on volumes it knows").isPositive();
            long first = Futures.await(client.directory().lease(1, List.of())).first();
            assertThat(first).as("first key of the restored directory").isGreaterThan(maxLiveKey);
            int volume = Futures.await(client.directory().createVolumes(1)).get(0).id();
            assertThat(volume).as("first volume created by the restored directory").isGreaterThan(newestLiveVolume);
        }

        // Raid work is held until an operator releases it: no raid-node may sweep blocks as orphans.
        HttpClient http = HttpClient.newHttpClient();
        HttpRequest lease = HttpRequest.newBuilder(URI.create("http://" + restored.address() + "/v1/raid-lease"))
                .header("Authorization", "Bearer " + ADMIN)
                .POST(HttpRequest.BodyPublishers.ofString("{\"holder\":\"raid1\",\"ttlMillis\":30000}")).build();
        HttpResponse<String> refused = http.send(lease, HttpResponse.BodyHandlers.ofString());
        assertThat(refused.statusCode()).isEqualTo(409);
        assertThat(refused.body()).contains("\"code\":210").contains("restored from the backup").contains("release-raid");
        r = run("directory", "release-raid", "-d", restored.address(), "--admin-token", ADMIN);
        assertThat(r[0]).as(r[2]).isEqualTo("0");
        assertThat(r[1]).contains("released: raid work is held");
        assertThat(http.send(lease, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
        r = run("directory", "release-raid", "-d", restored.address(), "--admin-token", ADMIN);
        assertThat(r[1]).contains("nothing to release");
    }

    @Test
    void withoutMarginsARestoredDirectoryWouldReissueKeysAndHeartbeatsStillProtectVolumeIds() throws Exception {
        startCluster();
        String live = cluster.directoryAddress();
        Path backup = dir.resolve("b0");
        assertThat(run("directory", "backup", "-d", live, "--admin-token", ADMIN, "--to", backup.toString())[0]).isEqualTo("0");
        long liveFirst;
        int liveVolume;
        try (HayloftClient admin = HayloftClient.builder().directory(live).adminToken(ADMIN).build()) {
            liveFirst = Futures.await(admin.directory().lease(10, List.of())).first();
            liveVolume = Futures.await(admin.directory().createVolumes(1)).get(0).id();
        }
        Path data = dir.resolve("unsafe");
        String[] r = run("directory", "restore", "--from", backup.toString(), "--key-margin", "0", "--volume-margin", "0",
                "dataDir=" + data);
        assertThat(r[0]).as(r[2]).isEqualTo("0");
        DirectoryServer restored = startRestored(data);
        try (HayloftClient client = HayloftClient.builder().directory(restored.address()).adminToken(ADMIN).build()) {
            // The hazard the margin exists for: a key the live directory already handed out.
            assertThat(Futures.await(client.directory().lease(1, List.of())).first()).isLessThanOrEqualTo(liveFirst + 9);
            // A store reporting a volume the restored database never created moves the volume sequence past it.
            Futures.await(client.directory().heartbeat(new Wire.Heartbeat(EmbeddedCluster.storeId(0), cluster.storeAddress(0),
                    "rack-0", 1L << 40, 1L << 39, List.of(new Wire.VolumeReport(liveVolume, 32, false)))));
            assertThat(Futures.await(client.directory().createVolumes(1)).get(0).id()).isGreaterThan(liveVolume);
        }
    }

    @Test
    void badTargetsAndIncompleteBackupsAreRefusedNamingTheProblem() throws Exception {
        startCluster();
        String live = cluster.directoryAddress();
        Path full = Files.createDirectories(dir.resolve("full"));
        Files.writeString(full.resolve("something"), "x");
        String[] r = run("directory", "backup", "-d", live, "--admin-token", ADMIN, "--to", full.toString());
        assertThat(r[0]).isEqualTo("2");
        assertThat(r[2]).contains("already exists and is not an empty directory").contains(full.toString());
        assertThat(full.resolve("CURRENT")).doesNotExist();

        HttpClient http = HttpClient.newHttpClient();
        Map<String, Integer> statusByBody = new ConcurrentHashMap<>();
        for (String body : List.of("{\"dir\":\"" + full + "\"}", "{\"dir\":\"relative/path\"}", "{}", "not json")) {
            HttpResponse<String> resp = http.send(HttpRequest.newBuilder(URI.create("http://" + live + "/v1/backup"))
                    .header("Authorization", "Bearer " + ADMIN).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(resp.body()).as(body).startsWith("{\"error\":");
            statusByBody.put(body, resp.statusCode());
        }
        assertThat(statusByBody).containsEntry("{\"dir\":\"" + full + "\"}", 409).containsEntry("{\"dir\":\"relative/path\"}", 400)
                .containsEntry("{}", 400).containsEntry("not json", 400);
        HttpResponse<String> noToken = http.send(HttpRequest.newBuilder(URI.create("http://" + live + "/v1/backup"))
                .POST(HttpRequest.BodyPublishers.ofString("{\"dir\":\"" + dir.resolve("x") + "\"}")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(noToken.statusCode()).isEqualTo(401);
        assertThat(dir.resolve("x")).doesNotExist();

        // An existing empty directory is accepted.
        Path empty = Files.createDirectories(dir.resolve("empty"));
        assertThat(run("directory", "backup", "-d", live, "--admin-token", ADMIN, "--to", empty.toString())[0]).isEqualTo("0");

        // Restore refuses a backup without its manifest and a data directory that holds something.
        Path partial = Files.createDirectories(dir.resolve("partial"));
        Files.writeString(partial.resolve("CURRENT"), "MANIFEST-000001\n");
        r = run("directory", "restore", "--from", partial.toString(), "dataDir=" + dir.resolve("d1"));
        assertThat(r[0]).isEqualTo("2");
        assertThat(r[2]).contains("not a complete directory backup");
        r = run("directory", "restore", "--from", empty.toString(), "dataDir=" + full);
        assertThat(r[0]).isEqualTo("2");
        assertThat(r[2]).contains("is not empty");
        assertThat(Files.readString(full.resolve("something"))).isEqualTo("x");
    }
}
