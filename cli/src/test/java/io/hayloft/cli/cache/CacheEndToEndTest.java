package io.hayloft.cli.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.cache.CacheConfig;
import io.hayloft.cache.CacheServer;
import io.hayloft.cache.CacheUrl;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PhotoNotFoundException;
import io.hayloft.client.PutResult;
import io.hayloft.serverkit.http.HttpResponses;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.format.wire.Wire;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import io.hayloft.store.cluster.ClusterAuthorizer;
import io.hayloft.testkit.Closing;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The client with the cache tier on a secured in-process cluster: a directory with
 * {@code readPolicy: cache}, three stores, two cache nodes and a gutter node, all real servers. A
 * put pushes the photo into its cache node (with the upload's write token), so the first read is a
 * hit; a delete invalidates it; when a photo's cache node dies, reads go through the gutter node.
 */
class CacheEndToEndTest {
    static final String SECRET = "cache-e2e-cluster-secret-0123";
    static final String ADMIN = "cache-e2e-admin";

    @TempDir
    Path dir;

    final List<StoreServer> stores = new ArrayList<>();
    final List<CacheServer> caches = new ArrayList<>();
    DirectoryServer directory;
    HayloftClient client;

    @AfterEach
    void stop() throws Exception {
        Closing.all(client, directory, Closing.each(caches), Closing.each(stores));
    }

    private CacheServer cache(String role) throws Exception {
        CacheConfig c = new CacheConfig();
        c.host = "127.0.0.1";
        c.port = 0;
        c.role = role;
        c.workerThreads = 16;
        c.clusterSecret = SECRET;
        CacheServer s = CacheServer.start(c);
        caches.add(s);
        return s;
    }

    private CacheServer byAddress(String address) {
        return caches.stream().filter(c -> c.address().equals(address)).findFirst().orElseThrow();
    }

    private static CacheUrl.NeedleKey needle(PhotoId id) {
        return new CacheUrl.NeedleKey(id.volume(), id.key(), id.alt());
    }

    @Test
    void putPushesDeleteInvalidatesAndADeadCacheNodeFallsBackToTheGutter() throws Exception {
        CacheServer c1 = cache("primary");
        CacheServer c2 = cache("primary");
        CacheServer gutter = cache("gutter");
        DirectoryConfig dc = new DirectoryConfig();
        dc.dataDir = dir.resolve("directory").toString();
        dc.host = "127.0.0.1";
        dc.port = 0;
        dc.init = true;
        dc.probeIntervalMillis = 60_000;
        dc.clusterSecret = SECRET;
        dc.adminToken = ADMIN;
        dc.readPolicy = "cache";
        dc.cacheNodes = List.of(c1.address(), c2.address());
        dc.gutterNodes = List.of(gutter.address());
        directory = DirectoryServer.start(dc.validate());
        HttpClient http = HttpClient.newHttpClient();
        for (int i = 0; i < 3; i++) {
            StoreConfig sc = new StoreConfig();
            sc.dataDirs = List.of(dir.resolve("store" + i).toString());
            sc.host = "127.0.0.1";
            sc.port = 0;
            sc.fsync = "never";
            StoreServer s = StoreServer.start(sc.validate(), new ClusterAuthorizer(SECRET, ADMIN, Clock.systemUTC()));
            stores.add(s);
            Wire.Heartbeat hb = new Wire.Heartbeat("s" + i, "127.0.0.1:" + s.port(), "r" + i, 1L << 30, 1L << 30, List.of());
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://" + directory.address() + "/v1/heartbeat"))
                    .header("Authorization", "Bearer " + ADMIN).POST(HttpRequest.BodyPublishers.ofByteArray(HttpResponses.JSON.writeValueAsBytes(hb))).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        }
        client = HayloftClient.builder().directory(directory.address())
                .cacheNodes(dc.cacheNodes, dc.gutterNodes).build();

        // Put: the photo is pushed into its cache node, so the first read is a hit without a store read.
        byte[] data = "a freshly uploaded photo".getBytes(StandardCharsets.UTF_8);
        PutResult put = client.put(data);
        PhotoId id = put.id();
        CacheServer owner = byAddress(client.cache().routing().nodeFor(id.key()));
        assertThat(owner.cache().contains(needle(id))).as("pushed").isTrue();
        assertThat(client.get(id)).isEqualTo(data);
        Map<String, Object> st = owner.cache().stats().snapshot();
        assertThat(st.get("hits")).isEqualTo(1L);
        assertThat(st.get("storeReads")).isEqualTo(0L);

        // Delete: the needle is dropped from its cache node, and the photo is gone.
        client.delete(id);
        assertThat(owner.cache().contains(needle(id))).isFalse();
        assertThat(owner.cache().stats().snapshot().get("invalidations")).isEqualTo(1L);
        assertThat(gutter.cache().stats().snapshot().get("invalidations")).isEqualTo(1L);
        assertThatThrownBy(() -> client.get(id)).isInstanceOf(PhotoNotFoundException.class);

        // A photo whose cache node dies is read through the gutter node (readFrom: node, gutter, stores).
        byte[] other = "another photo".getBytes(StandardCharsets.UTF_8);
        PhotoId id2 = client.put(other).id();
        CacheServer owner2 = byAddress(client.cache().routing().nodeFor(id2.key()));
        owner2.close();
        assertThat(client.get(id2)).isEqualTo(other);
        assertThat(gutter.cache().contains(needle(id2))).as("filled in the gutter").isTrue();
        assertThat(client.get(id2)).isEqualTo(other);
        assertThat(gutter.cache().stats().snapshot().get("hits")).isEqualTo(1L);
        assertThat(client.cache().failures()).isZero();
    }
}
