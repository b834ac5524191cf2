package io.hayloft.cli.cluster;

import io.hayloft.client.http.HttpTransport;
import io.hayloft.testkit.Await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.cache.CacheConfig;
import io.hayloft.cache.CacheServer;
import io.hayloft.cli.Hayloft;
import io.hayloft.serverkit.http.ClusterStance;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import io.hayloft.raid.Checkpoints;
import io.hayloft.raid.RaidServer;
import io.hayloft.raid.RaidServerConfig;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server configured with a different security stance than its directory (a cluster secret or an
 * admin token on one side only) refuses to start, with a message naming the mismatch; the directory
 * refuses a heartbeat without the admin token, saying what to set. Real servers on loopback.
 */
class HalfSecuredStartTest {
    private static final String SECRET = "half-secured-secret-0123";
    private static final String ADMIN = "half-secured-admin-0123";

    @TempDir
    Path dir;

    private final List<AutoCloseable> closers = new ArrayList<>();
    private DirectoryServer directory;

    @AfterEach
    void stop() throws Exception {
        for (int i = closers.size() - 1; i >= 0; i--) {
            closers.get(i).close();
        }
    }

    private void directory(String secret, String admin) throws Exception {
        DirectoryConfig d = new DirectoryConfig();
        d.dataDir = dir.resolve("directory").toString();
        d.port = 0;
        d.init = true;
        d.clusterSecret = secret;
        d.adminToken = admin;
        d.probeIntervalMillis = 60_000;
        directory = DirectoryServer.start(d.validate());
        closers.add(directory::close);
    }

    private StoreConfig store(String secret, String admin) {
        StoreConfig c = new StoreConfig();
        c.dataDirs = List.of(dir.resolve("store").toString());
        c.host = "127.0.0.1";
        c.port = 0;
        c.directory = directory.address();
        c.heartbeatMillis = 50;
        c.clusterSecret = secret;
        c.adminToken = admin;
        return c;
    }

    @Test
    void aStoreWithoutTheSecretsRefusesToStartAgainstASecuredDirectory() throws Exception {
        directory(SECRET, ADMIN);
        assertThatThrownBy(() -> StoreServer.start(store(null, null))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("this cluster is secured").hasMessageContaining("set clusterSecret on the store");
        assertThatThrownBy(() -> StoreServer.start(store(SECRET, null))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("this cluster is secured").hasMessageContaining("set adminToken on the store");
        assertThat(directory.directory().stores()).as("nothing registered").isEmpty();

        StoreServer good = StoreServer.start(store(SECRET, ADMIN));
        closers.add(good);
        Await.until("the secured store registers", () -> directory.directory().stores().size() == 1);
    }

    @Test
    void hayloftStoreExitsOneWithTheMismatchOnStandardError() throws Exception {
        directory(SECRET, ADMIN);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Hayloft.run(new PrintWriter(out, true), new PrintWriter(err, true), "store", "host=127.0.0.1", "port=0",
                "dataDirs=" + dir.resolve("cli-store"), "directory=" + directory.address(), "clusterSecret=" + SECRET);
        assertThat(exit).as(err.toString()).isEqualTo(1);
        assertThat(err.toString()).contains("hayloft: store refuses to start: this cluster is secured")
                .contains("set adminToken on the store").doesNotContain(SECRET).doesNotContain(ADMIN);
    }

    @Test
    void aSecuredStoreRefusesToStartAgainstAnOpenDirectory() throws Exception {
        directory(null, null);
        assertThatThrownBy(() -> StoreServer.start(store(SECRET, null))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("clusterSecret is set here but the directory at " + directory.address()
                        + " has no clusterSecret");
        assertThatThrownBy(() -> StoreServer.start(store(null, ADMIN))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("has no adminToken");
    }

    @Test
    void aSecuredDirectoryRefusesAHeartbeatWithoutTheAdminTokenSayingWhatToSet() throws Exception {
        directory(SECRET, ADMIN);
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        String hb = "{\"storeId\":\"rogue\",\"address\":\"127.0.0.1:1\",\"rack\":\"r\",\"capacityBytes\":1,\"freeBytes\":1,"
                + "\"volumes\":[]}";
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + directory.address() + "/v1/heartbeat"))
                .POST(HttpRequest.BodyPublishers.ofString(hb)).header("Content-Type", "application/json").build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(401);
        assertThat(r.body()).contains("this cluster is secured: set clusterSecret/adminToken on the store");
        r = http.send(HttpRequest.newBuilder(URI.create("http://" + directory.address() + "/v1/heartbeat"))
                .POST(HttpRequest.BodyPublishers.ofString(hb)).header("Authorization", "Bearer wrong")
                .header("Content-Type", "application/json").build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(401);
        assertThat(r.body()).contains("adminToken is not the directory's");
        assertThat(directory.directory().stores()).as("the rogue store is not registered").isEmpty();
    }

    @Test
    void aCacheOrRaidNodeConfiguredUnlikeTheDirectoryRefusesToStart() throws Exception {
        directory(SECRET, ADMIN);
        CacheConfig c = BesideTheCluster.cache(directory.address());
        assertThatThrownBy(() -> CacheServer.start(c)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("cache refuses to start: this cluster is secured")
                .hasMessageContaining("set clusterSecret on the cache");
        c.clusterSecret = SECRET;
        closers.add(CacheServer.start(c)::close);

        RaidServerConfig rc = BesideTheCluster.raid(directory.address(), dir.resolve("spool"));
        assertThatThrownBy(() -> RaidServer.start(rc, Checkpoints.NONE)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("raid-node refuses to start: this cluster is secured")
                .hasMessageContaining("set adminToken on the raid-node");
    }

    @Test
    void aRaidNodeWithATokenRefusesAnOpenDirectory() throws Exception {
        directory(null, null);
        RaidServerConfig rc = BesideTheCluster.raid(directory.address(), dir.resolve("spool"));
        rc.adminToken = ADMIN;
        assertThatThrownBy(() -> RaidServer.start(rc, Checkpoints.NONE)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("adminToken is set here but the directory at " + directory.address() + " has no adminToken");
    }

    @Test
    void aDirectoryThatNeverAnswersIsAClearErrorAfterTheDeadline() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closed = s.getLocalPort();
        }
        HttpTransport transport = HttpTransport.create();
        assertThatThrownBy(() -> ClusterStance.require("store", "127.0.0.1:" + closed, "clusterSecret", true, "adminToken", true,
                Duration.ofMillis(300), p -> transport.getPatiently("127.0.0.1:" + closed, "/health", p, ClusterStance.PERIOD)))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("store refuses to start: cannot check its security settings against the directory at 127.0.0.1:"
                        + closed).hasMessageContaining("did not answer within 300 ms");
    }
}
