package io.hayloft.directory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.format.wire.Wire;
import io.hayloft.format.wire.WriteToken;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import io.hayloft.store.cluster.DirectoryHeartbeat;
import io.hayloft.testkit.Await;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Stores that register and heartbeat by themselves, and refuse writes without the directory's token. */
class ClusterSecurityTest extends DirectoryOverHttp {

    static final String SECRET = "cluster-secret-for-tests-0123";
    static final String ADMIN = "admin-token-for-tests";

    private StoreConfig storeConfig(int i) {
        StoreConfig c = new StoreConfig();
        c.dataDirs = List.of(dir.resolve("store" + i).toString());
        c.host = "127.0.0.1";
        c.port = 0;
        c.directory = directory.address();
        c.rack = "rack" + i;
        c.heartbeatMillis = 50;
        c.clusterSecret = SECRET;
        c.adminToken = ADMIN;
        return c;
    }

    private void startCluster() throws Exception {
        DirectoryConfig d = new DirectoryConfig();
        d.dataDir = dir.resolve("directory").toString();
        d.port = 0;
        d.init = true;
        d.clusterSecret = SECRET;
        d.adminToken = ADMIN;
        d.probeIntervalMillis = 60_000;
        directory = DirectoryServer.start(d);
        for (int i = 0; i < 3; i++) {
            stores.add(StoreServer.start(storeConfig(i)));
        }
        Await.until("3 stores registered", () -> directory.directory().stores().size() == 3);
    }

    private int send(String method, String url, byte[] body, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        if (token != null) {
            b.header(WriteToken.HEADER, token);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString()).statusCode();
    }

    @Test
    void storesRegisterThemselvesAndWritesNeedTheDirectorysToken() throws Exception {
        startCluster();
        assertThat(directory.directory().stores()).extracting(s -> s.rack()).containsExactlyInAnyOrder("rack0", "rack1", "rack2");
        Wire.Lease a = directory.directory().hotPath().lease(new Wire.LeaseRequest(2, List.of()));
        long key = a.first();
        String cookie = "8000000000000096"; // the writer's choice: the directory keeps no cookie
        byte[] photo = "a photo".getBytes();
        for (String replica : a.replicas()) {
            String url = "http://" + replica + "/" + a.volume() + "/" + key + "/0?cookie=" + cookie;
            assertThat(send("PUT", url, photo, null)).as("no token").isEqualTo(403);
            assertThat(send("PUT", url, photo, "1.1.1.00")).as("forged token").isEqualTo(403);
            assertThat(send("PUT", url, photo, a.token())).isEqualTo(201);
            assertThat(send("GET", url, null, null)).isEqualTo(200);
            String outside = "http://" + replica + "/" + a.volume() + "/" + (key + 2) + "/0?cookie=" + cookie;
            assertThat(send("PUT", outside, photo, a.token())).as("key outside the token's range").isEqualTo(403);
        }
        // A batch with one key outside the token's range is refused whole: nothing of it is written.
        long inRange = a.first() + 1;
        String replica = a.replicas().get(0);
        byte[] batch = batch(new long[] {inRange, key + 7}, cookie);
        assertThat(send("POST", "http://" + replica + "/" + a.volume() + "/batch", batch, a.token())).isEqualTo(403);
        assertThat(send("GET", "http://" + replica + "/" + a.volume() + "/" + inRange + "/0?cookie=" + cookie, null, null))
                .isEqualTo(404);
        assertThat(send("POST", "http://" + replica + "/" + a.volume() + "/batch", batch(new long[] {inRange}, cookie), a.token()))
                .isEqualTo(201);
        // A delete needs the token the directory hands out with the photo's delete-log entry.
        String url0 = "http://" + replica + "/" + a.volume() + "/" + key + "/0?cookie=" + cookie;
        assertThat(send("DELETE", url0, null, a.token().replace(".2.", ".9."))).isEqualTo(403);
        String deleteToken = directory.directory().hotPath().logDeletes(a.volume(),
                new Wire.DeleteRequest(List.of(new Wire.DeleteEntry(0, key, cookie, 1)))).token();
        assertThat(send("DELETE", url0, null, deleteToken)).isEqualTo(204);
        assertThat(send("GET", url0, null, null)).isEqualTo(404);
        // Admin operations need the admin token.
        assertThat(send("POST", "http://" + replica + "/admin/volumes/999", null, null)).isEqualTo(403);
    }

    @Test
    void heartbeatsReportVolumeSizesAndTheStoreIdIsStable() throws Exception {
        startCluster();
        Wire.Lease a = directory.directory().hotPath().lease(new Wire.LeaseRequest(1, List.of()));
        String url = "http://" + a.replicas().get(0) + "/" + a.volume() + "/" + a.first() + "/0?cookie=0";
        assertThat(send("PUT", url, new byte[5000], a.token())).isEqualTo(201);
        Await.until("the volume's size in a heartbeat", () -> directory.directory().volume(a.volume()).sizeBytes() >= 5000);

        Path data = dir.resolve("store0");
        String id = DirectoryHeartbeat.storeId(data, null);
        assertThat(DirectoryHeartbeat.storeId(data, null)).isEqualTo(id);
        assertThatThrownBy(() -> DirectoryHeartbeat.storeId(data, "someone-else"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("does not match '" + id + "'");
        VolumeInfo v = directory.directory().volume(a.volume());
        assertThat(v.replicas()).hasSize(3);
    }

    private static byte[] batch(long[] keys, String cookieHex) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        for (long k : keys) {
            out.writeLong(k);
            out.writeLong(Long.parseUnsignedLong(cookieHex, 16));
            out.writeInt(0);
            out.writeInt(3);
            out.write(new byte[] {1, 2, 3});
        }
        return bytes.toByteArray();
    }

}
