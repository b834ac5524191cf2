package io.hayloft.cache;

import io.hayloft.format.directory.VolumeState;
import static io.hayloft.cache.CacheFixture.HTTP;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.serverkit.http.HttpResponses;
import io.hayloft.format.ring.CacheRouting;
import io.hayloft.format.wire.Wire;
import io.hayloft.directory.DirectoryConfig;
import io.hayloft.directory.DirectoryServer;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import io.hayloft.testkit.Closing;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole read path on an in-process cluster: a directory with {@code readPolicy: cache}, three
 * stores, two primary cache nodes and a gutter node. A photo is uploaded to the replicas of an
 * allocator lease, and read through the places the client computes from the volume map (the key's
 * cache node and gutter node on the map's ring, then the replicas); then its cache node is killed
 * and the same list leads to the gutter node.
 */
class DirectoryReadTest {
    @TempDir
    Path dir;

    final List<StoreServer> stores = new ArrayList<>();
    final List<CacheServer> caches = new ArrayList<>();
    DirectoryServer directory;

    @AfterEach
    void stop() throws Exception {
        Closing.all(directory, Closing.each(caches), Closing.each(stores));
    }

    private CacheServer cache(String role) throws Exception {
        CacheConfig c = new CacheConfig();
        c.host = "127.0.0.1";
        c.port = 0;
        c.role = role;
        c.workerThreads = 16;
        CacheServer s = CacheServer.start(c);
        caches.add(s);
        return s;
    }

    private static HttpResponse<byte[]> send(String method, String url, byte[] body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body))
                .build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    /** Reads the first URL of readFrom that answers; returns it with the answer. */
    private static Map.Entry<String, HttpResponse<byte[]>> read(List<String> readFrom, String needlePath) throws Exception {
        for (String prefix : readFrom) {
            try {
                return Map.entry(prefix, send("GET", prefix + needlePath, null));
            } catch (ConnectException e) {
                // down: next in line
            }
        }
        throw new AssertionError("no readFrom URL answered: " + readFrom);
    }

    @Test
    void readsGoThroughTheKeysCacheNodeThenItsGutterNode() throws Exception {
        CacheServer c1 = cache("primary");
        CacheServer c2 = cache("primary");
        CacheServer g = cache("gutter");
        DirectoryConfig dc = new DirectoryConfig();
        dc.dataDir = dir.resolve("directory").toString();
        dc.port = 0;
        dc.init = true;
        dc.probeIntervalMillis = 60_000;
        dc.readPolicy = "cache";
        dc.cacheNodes = List.of(c1.address(), c2.address());
        dc.gutterNodes = List.of(g.address());
        directory = DirectoryServer.start(dc.validate());
        for (int i = 0; i < 3; i++) {
            StoreConfig sc = new StoreConfig();
            sc.dataDirs = List.of(dir.resolve("store" + i).toString());
            sc.host = "127.0.0.1";
            sc.port = 0;
            sc.fsync = "never";
            StoreServer s = StoreServer.start(sc.validate());
            stores.add(s);
            Wire.Heartbeat hb = new Wire.Heartbeat("s" + i, "127.0.0.1:" + s.port(), "r" + i, 1L << 30, 1L << 30, List.of());
            assertThat(send("POST", "http://" + directory.address() + "/v1/heartbeat", HttpResponses.JSON.writeValueAsBytes(hb))
                    .statusCode()).isEqualTo(200);
        }
        Wire.Lease a = HttpResponses.JSON.readValue(send("POST", "http://" + directory.address() + "/v1/leases",
                "{\"keys\": 1}".getBytes()).body(), Wire.Lease.class);
        long key = a.first();
        String needlePath = "/" + a.volume() + "/" + key + "/0?cookie=00c0ffee00c0ffee";
        byte[] data = "a photo of a hayloft".getBytes();
        for (String replica : a.replicas()) {
            assertThat(send("PUT", "http://" + replica + needlePath, data).statusCode()).isEqualTo(201);
        }
        // What a client does with its cached volume map: no directory call per photo.
        Wire.VolumeMap map = HttpResponses.JSON.readValue(send("GET", "http://" + directory.address() + "/v1/volume-map", null)
                .body(), Wire.VolumeMap.class);
        assertThat(map.readPolicy()).isEqualTo("cache");
        Wire.VolumeLocation v = map.volumes().stream().filter(x -> x.id() == a.volume()).findFirst().orElseThrow();
        assertThat(v.state()).isEqualTo(VolumeState.WRITABLE);
        assertThat(v.replicas()).containsExactlyInAnyOrderElementsOf(a.replicas());
        List<String> readFrom = new ArrayList<>(new CacheRouting(map.cacheNodes(), map.gutterNodes())
                .urlPrefixes(key, v.replicas().get(0), map.scheme()));
        for (String r : v.replicas()) {
            readFrom.add(map.scheme() + "://" + r);
        }
        CacheRouting routing = new CacheRouting(dc.cacheNodes, dc.gutterNodes);
        String owner = routing.nodeFor(key);
        assertThat(readFrom).hasSize(5);
        assertThat(readFrom.get(0)).startsWith("http://" + owner + "/127.0.0.1:");
        assertThat(readFrom.get(1)).startsWith("http://" + g.address() + "/127.0.0.1:");

        Map.Entry<String, HttpResponse<byte[]>> first = read(readFrom, needlePath);
        assertThat(first.getKey()).isEqualTo(readFrom.get(0));
        assertThat(first.getValue().body()).isEqualTo(data);
        assertThat(first.getValue().headers().firstValue(CacheHttpHandler.SOURCE_HEADER)).hasValue("miss");
        assertThat(read(readFrom, needlePath).getValue().headers().firstValue(CacheHttpHandler.SOURCE_HEADER)).hasValue("hit");

        // The key's cache node dies: the same readFrom list leads to the gutter node.
        (owner.equals(c1.address()) ? c1 : c2).close();
        Map.Entry<String, HttpResponse<byte[]>> viaGutter = read(readFrom, needlePath);
        assertThat(viaGutter.getKey()).isEqualTo(readFrom.get(1));
        assertThat(viaGutter.getValue().body()).isEqualTo(data);
        assertThat(read(readFrom, needlePath).getValue().headers().firstValue(CacheHttpHandler.SOURCE_HEADER)).hasValue("hit");
        assertThat(g.cache().stats().snapshot().get("stored")).isEqualTo(1L);
    }
}
