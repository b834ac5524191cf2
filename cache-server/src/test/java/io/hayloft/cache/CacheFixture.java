package io.hayloft.cache;

import com.fasterxml.jackson.databind.JsonNode;
import io.hayloft.serverkit.config.ConfigLoader;
import io.hayloft.serverkit.http.HttpResponses;
import io.hayloft.store.StoreConfig;
import io.hayloft.store.StoreServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/** A real store on loopback with one writable volume, cache servers, and HTTP helpers. */
final class CacheFixture implements AutoCloseable {
    static final int VOLUME = 1;
    static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    final StoreServer store;
    final List<CacheServer> caches = new ArrayList<>();
    final List<StoreProxy> proxies = new ArrayList<>();

    CacheFixture(Path dir) throws Exception {
        StoreConfig c = new StoreConfig();
        c.dataDirs = List.of(dir.resolve("store").toString());
        c.host = "127.0.0.1";
        c.port = 0;
        c.fsync = "never";
        store = StoreServer.start(c.validate());
        store.store().create(VOLUME);
    }

    String storeAddress() {
        return "127.0.0.1:" + store.port();
    }

    /** Writes a needle of {@code size} random bytes (seeded by key) and returns its data. */
    byte[] put(long key, int alt, long cookie, int size) throws Exception {
        byte[] data = new byte[size];
        new Random(key * 31 + alt).nextBytes(data);
        store.volume(VOLUME).write(key, alt, cookie, ByteBuffer.wrap(data));
        return data;
    }

    CacheServer cache(Map<String, String> overrides) throws Exception {
        Map<String, String> o = new HashMap<>(Map.of("host", "127.0.0.1", "port", "0", "workerThreads", "64"));
        o.putAll(overrides);
        CacheServer s = CacheServer.start(ConfigLoader.load(null, o, CacheConfig.class));
        caches.add(s);
        return s;
    }

    StoreProxy proxy() throws Exception {
        StoreProxy p = new StoreProxy(storeAddress());
        proxies.add(p);
        return p;
    }

    static String url(String node, String store, long key, int alt, long cookie) {
        return "http://" + node + "/" + store + "/" + VOLUME + "/" + key + "/" + alt + "?cookie=" + String.format("%016x", cookie);
    }

    static HttpResponse<byte[]> get(String url, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).GET();
        if (headers.length > 0) {
            b.headers(headers);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    static HttpResponse<byte[]> send(String method, String url, byte[] body, String... headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofByteArray(body));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    static JsonNode json(HttpResponse<byte[]> r) throws Exception {
        return HttpResponses.JSON.readTree(r.body());
    }

    static JsonNode stats(CacheServer c) throws Exception {
        return json(get("http://" + c.address() + "/stats"));
    }

    /** Needle GETs the store has answered, from its own /metrics. */
    long storeReads() throws Exception {
        String text = new String(get("http://" + storeAddress() + "/metrics").body(), StandardCharsets.UTF_8);
        double n = 0;
        for (String line : text.split("\n")) {
            if (line.startsWith("hayloft_store_requests_seconds_count{") && line.contains("op=\"needle.get\"")) {
                n += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return (long) n;
    }

    /** Waits up to 10 s for a condition, checking it every few milliseconds; fails naming it. */
    @Override
    public void close() throws Exception {
        for (StoreProxy p : proxies) {
            p.close();
        }
        for (CacheServer c : caches) {
            c.close();
        }
        store.close();
    }
}
