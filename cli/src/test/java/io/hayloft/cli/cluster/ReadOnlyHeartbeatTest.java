package io.hayloft.cli.cluster;

import io.hayloft.format.directory.VolumeState;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import io.hayloft.testkit.Await;
import io.hayloft.testkit.Closing;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A store whose volume turns read-only heartbeats at once: with a heartbeat interval of a minute,
 * the directory shows the volume READ_ONLY within a second of the store's 409 VOLUME_READ_ONLY
 * (full) or of a seal, so it stops leasing it.
 */
class ReadOnlyHeartbeatTest {
    @TempDir
    Path dir;

    private DirectoryServer directory;
    private StoreServer store;
    private final HttpClient http = HttpClient.newHttpClient();

    @AfterEach
    void stop() throws Exception {
        Closing.all(store, directory);
    }

    private int send(String method, String path, byte[] body) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + store.port() + path))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body))
                .build();
        return http.send(req, HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    private VolumeState state(int id) {
        return directory.directory().volume(id).state();
    }

    @Test
    void aVolumeThatTurnsReadOnlyIsReportedAtOnce() throws Exception {
        DirectoryConfig d = new DirectoryConfig();
        d.dataDir = dir.resolve("directory").toString();
        d.port = 0;
        d.init = true;
        d.replication = 1;
        d.minWritableVolumes = 1;
        d.probeIntervalMillis = 60_000;
        directory = DirectoryServer.start(d.validate());
        StoreConfig c = new StoreConfig();
        c.dataDirs = List.of(dir.resolve("store").toString());
        c.host = "127.0.0.1";
        c.port = 0;
        c.directory = directory.address();
        c.heartbeatMillis = 60_000; // the only heartbeats in this test: the first, and those a read-only volume sends
        c.volumeSizeLimit = 64 << 10;
        store = StoreServer.start(c);
        assertThat(directory.directory().stores()).as("registered by the first heartbeat, at start").hasSize(1);
        List<VolumeInfo> created = directory.directory().createVolumes(2);
        int full = created.get(0).id();
        int sealed = created.get(1).id();
        assertThat(state(full)).isEqualTo(VolumeState.WRITABLE);

        int status = 0;
        for (int key = 0; key < 100 && status != 409; key++) {
            status = send("PUT", "/" + full + "/" + key + "/0?cookie=abc", new byte[4000]);
        }
        assertThat(status).as("the volume filled up").isEqualTo(409);
        Await.until("the directory shows the full volume read-only", Duration.ofSeconds(2),
                () -> state(full) == VolumeState.READ_ONLY);
        assertThat(state(sealed)).isEqualTo(VolumeState.WRITABLE);

        assertThat(send("POST", "/admin/volumes/" + sealed + "/seal", new byte[0])).isEqualTo(200);
        Await.until("the directory shows the sealed volume read-only", Duration.ofSeconds(2),
                () -> state(sealed) == VolumeState.READ_ONLY);
    }
}
