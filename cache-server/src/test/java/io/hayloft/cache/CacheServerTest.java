package io.hayloft.cache;

import java.net.ServerSocket;
import static io.hayloft.cache.CacheFixture.get;
import static io.hayloft.cache.CacheFixture.json;
import static io.hayloft.cache.CacheFixture.send;
import static io.hayloft.cache.CacheFixture.stats;
import static io.hayloft.cache.CacheFixture.url;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.format.wire.WriteToken;
import io.hayloft.testkit.Await;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** One real store, real cache servers: hits, misses, admission, push, invalidation, bad input, failing stores. */
class CacheServerTest extends CacheFixtureTest {
    static final long COOKIE = 0x1234abcd5678ef01L;

    @Test
    void missFillsThenHitsServeFromMemory() throws Exception {
        byte[] data = f.put(7, 0, COOKIE, 1024);
        CacheServer c = f.cache(Map.of());
        String u = url(c.address(), f.storeAddress(), 7, 0, COOKIE);
        long before = f.storeReads();

        HttpResponse<byte[]> miss = get(u);
        assertThat(miss.statusCode()).isEqualTo(200);
        assertThat(miss.body()).isEqualTo(data);
        assertThat(miss.headers().firstValue(CacheHttpHandler.SOURCE_HEADER)).hasValue("miss");
        assertThat(miss.headers().firstValue(StoreFetcher.CRC_HEADER))
                .hasValue(String.format("%08x", StoreFetcher.crc32c(data)));
        for (int i = 0; i < 5; i++) {
            HttpResponse<byte[]> hit = get(u);
            assertThat(hit.statusCode()).isEqualTo(200);
            assertThat(hit.body()).isEqualTo(data);
            assertThat(hit.headers().firstValue(CacheHttpHandler.SOURCE_HEADER)).hasValue("hit");
        }
        assertThat(f.storeReads() - before).isEqualTo(1);
        assertThat(stats(c).get("hits").asLong()).isEqualTo(5);
        assertThat(stats(c).get("misses").asLong()).isEqualTo(1);
        assertThat(stats(c).get("bytes").asLong()).isEqualTo(1024 + ReadThroughCache.ENTRY_OVERHEAD);

        // A wrong cookie on a cached needle is a miss: the store answers it, exactly as it answers a missing needle.
        HttpResponse<byte[]> wrong = get(url(c.address(), f.storeAddress(), 7, 0, COOKIE + 1));
        assertThat(wrong.statusCode()).isEqualTo(404);
        assertThat(json(wrong).get("error").get("message").asText()).contains("not found");
        assertThat(wrong.headers().firstValue(CacheHttpHandler.SOURCE_HEADER)).hasValue("miss");
        assertThat(f.storeReads() - before).isEqualTo(2);

        // A missing needle: the store's 404 passes through and nothing is cached.
        HttpResponse<byte[]> missing = get(url(c.address(), f.storeAddress(), 8, 0, COOKIE));
        assertThat(missing.statusCode()).isEqualTo(404);
        assertThat(json(missing).get("error").get("message").asText()).contains("not found");
        assertThat(missing.headers().firstValue(CacheHttpHandler.SOURCE_HEADER)).hasValue("miss");
        assertThat(get(url(c.address(), f.storeAddress(), 8, 0, COOKIE)).statusCode()).isEqualTo(404);
        assertThat(f.storeReads() - before).isEqualTo(4);

        String metrics = new String(get("http://" + c.address() + "/metrics").body(), StandardCharsets.UTF_8);
        assertThat(metrics).contains("hayloft_cache_hits_total 5.0", "hayloft_cache_hit_rate", "hayloft_cache_bytes",
                "hayloft_cache_evictions_total", "hayloft_cache_lease_waits_total", "hayloft_cache_fetch_errors_total");
        assertThat(json(get("http://" + c.address() + "/health")).get("status").asText()).isEqualTo("ok");
    }

    @Test
    void cdnRequestsAndReadOnlyVolumesAreServedButNotCached() throws Exception {
        byte[] data = f.put(1, 0, COOKIE, 2000);
        CacheServer c = f.cache(Map.of());
        String u = url(c.address(), f.storeAddress(), 1, 0, COOKIE);
        long before = f.storeReads();
        for (int i = 0; i < 2; i++) {
            HttpResponse<byte[]> r = get(u, "X-Hayloft-Cdn", "edge-7");
            assertThat(r.body()).isEqualTo(data);
            assertThat(r.headers().firstValue(CacheHttpHandler.SOURCE_HEADER)).hasValue("bypass");
        }
        assertThat(f.storeReads() - before).isEqualTo(2);
        // A user's request is admitted; afterwards the CDN gets hits too.
        assertThat(get(u).headers().firstValue(CacheHttpHandler.SOURCE_HEADER)).hasValue("miss");
        assertThat(get(u, "X-Hayloft-Cdn", "edge-7").headers().firstValue(CacheHttpHandler.SOURCE_HEADER)).hasValue("hit");

        // Networks: loopback configured as a CDN network means nothing from here is admitted.
        CacheServer byNet = f.cache(Map.of("cdnNetworks", "127.0.0.0/8,"));
        String u2 = url(byNet.address(), f.storeAddress(), 1, 0, COOKIE);
        get(u2);
        assertThat(get(u2).headers().firstValue(CacheHttpHandler.SOURCE_HEADER)).hasValue("bypass");
        assertThat(byNet.cache().contains(new CacheUrl.NeedleKey(1, 1, 0))).isFalse();
        // ... unless the rule is switched off.
        CacheServer open = f.cache(Map.of("cdnNetworks", "127.0.0.0/8,", "admitOnlyUsers", "false"));
        String u3 = url(open.address(), f.storeAddress(), 1, 0, COOKIE);
        get(u3);
        assertThat(get(u3).headers().firstValue(CacheHttpHandler.SOURCE_HEADER)).hasValue("hit");

        // A read-only volume is not cached (Haystack: only write-enabled stores' photos), unless allowed.
        f.put(2, 0, COOKIE, 100);
        f.store.volume(CacheFixture.VOLUME).seal();
        String ro = url(c.address(), f.storeAddress(), 2, 0, COOKIE);
        assertThat(get(ro).statusCode()).isEqualTo(200);
        assertThat(get(ro).headers().firstValue(CacheHttpHandler.SOURCE_HEADER)).hasValue("miss");
        assertThat(stats(c).get("notAdmitted").asLong()).isGreaterThanOrEqualTo(4);
        CacheServer anyVolume = f.cache(Map.of("admitOnlyWritable", "false"));
        String ro2 = url(anyVolume.address(), f.storeAddress(), 2, 0, COOKIE);
        get(ro2);
        assertThat(get(ro2).headers().firstValue(CacheHttpHandler.SOURCE_HEADER)).hasValue("hit");
    }

    @Test
    void pushesAreVerifiedAndServedWithoutAStoreRead() throws Exception {
        CacheServer c = f.cache(Map.of("maxObjectBytes", "4096"));
        byte[] data = "a fresh upload".getBytes(StandardCharsets.UTF_8);
        String crc = String.format("%08x", StoreFetcher.crc32c(data));
        String u = url(c.address(), f.storeAddress(), 42, 1, COOKIE);
        HttpResponse<byte[]> bad = send("PUT", u, data, StoreFetcher.CRC_HEADER, "00000000");
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(json(bad).get("error").get("code").asInt()).isEqualTo(305);
        assertThat(send("PUT", u, data).statusCode()).isEqualTo(400);
        assertThat(send("PUT", u, new byte[5000], StoreFetcher.CRC_HEADER, "0").statusCode()).isEqualTo(413);
        HttpResponse<byte[]> ok = send("PUT", u, data, StoreFetcher.CRC_HEADER, crc);
        assertThat(ok.statusCode()).isEqualTo(201);
        long before = f.storeReads();
        HttpResponse<byte[]> hit = get(u);
        assertThat(hit.body()).isEqualTo(data);
        assertThat(hit.headers().firstValue(CacheHttpHandler.SOURCE_HEADER)).hasValue("hit");
        assertThat(f.storeReads()).isEqualTo(before);

        // Invalidation drops it; the next read goes to the store (which never had it: 404).
        assertThat(send("DELETE", u, null).statusCode()).isEqualTo(204);
        assertThat(get(u).statusCode()).isEqualTo(404);
        // A push right after an invalidation is not kept (the tombstone window).
        assertThat(json(send("PUT", u, data, StoreFetcher.CRC_HEADER, crc)).get("stored").asBoolean()).isFalse();
    }

    @Test
    void securedCacheNeedsWriteTokensForPushAndInvalidate() throws Exception {
        String secret = "0123456789abcdef-cluster";
        CacheServer c = f.cache(Map.of("clusterSecret", secret));
        byte[] data = {1, 2, 3};
        String crc = String.format("%08x", StoreFetcher.crc32c(data));
        String u = url(c.address(), f.storeAddress(), 5, 0, COOKIE);
        HttpResponse<byte[]> refused = send("PUT", u, data, StoreFetcher.CRC_HEADER, crc);
        assertThat(refused.statusCode()).isEqualTo(403);
        assertThat(json(refused).get("error").get("message").asText()).contains("missing write token");
        assertThat(send("DELETE", u, null).statusCode()).isEqualTo(403);
        String token = new WriteToken(secret).sign(CacheFixture.VOLUME, 5, 1, System.currentTimeMillis() + 60_000);
        assertThat(send("PUT", u, data, StoreFetcher.CRC_HEADER, crc, WriteToken.HEADER, token).statusCode()).isEqualTo(201);
        assertThat(send("DELETE", u, null, WriteToken.HEADER, token).statusCode()).isEqualTo(204);
    }

    @Test
    void badInputGetsAClearErrorAndTheServerKeepsServing() throws Exception {
        byte[] data = f.put(3, 0, COOKIE, 10);
        CacheServer c = f.cache(Map.of("allowedStores", f.storeAddress() + ","));
        String base = "http://" + c.address() + "/";
        String s = f.storeAddress();
        String[][] cases = {
            {s + "/1/3/0", "missing query parameter 'cookie'"},
            {s + "/1/3/0?cookie=xyz", "cookie must be 1..16 hex digits, got 'xyz'"},
            {s + "/1/3/0?cookie=12345678901234567", "cookie must be 1..16 hex digits"},
            {s + "/0/3/0?cookie=1", "volume must be in 1..2147483647, got '0'"},
            {s + "/1/-3/0?cookie=1", "key must be an unsigned decimal number, got '-3'"},
            {s + "/1/99999999999999999999/0?cookie=1", "key must be an unsigned 64-bit number"},
            {s + "/1/3/4294967296?cookie=1", "alt must be an unsigned 32-bit number"},
            {"nostore/1/3/0?cookie=1", "store must be host:port, got 'nostore'"},
            {"bad_host:80/1/3/0?cookie=1", "store host must be a host name or address, got 'bad_host'"},
            {"host:99999/1/3/0?cookie=1", "store port must be in 1..65535, got '99999'"},
            {s + "/1/3?cookie=1", "cache URL must be /<store host:port>/<volume>/<key>/<alt>"},
        };
        for (String[] bad : cases) {
            HttpResponse<byte[]> r = get(base + bad[0]);
            assertThat(r.statusCode()).as(bad[0]).isEqualTo(400);
            assertThat(json(r).get("error").get("code").asInt()).as(bad[0]).isEqualTo(300);
            assertThat(json(r).get("error").get("message").asText()).as(bad[0]).contains(bad[1]);
        }
        HttpResponse<byte[]> notAllowed = get(url(c.address(), "127.0.0.1:1", 3, 0, COOKIE));
        assertThat(notAllowed.statusCode()).isEqualTo(403);
        assertThat(json(notAllowed).get("error").get("code").asInt()).isEqualTo(304);
        assertThat(send("POST", url(c.address(), s, 3, 0, COOKIE), new byte[1]).statusCode()).isEqualTo(405);
        assertThat(get(url(c.address(), s, 3, 0, COOKIE)).body()).isEqualTo(data);
    }

    @Test
    void failingStoresGetClearErrorsNeverWrongBytes() throws Exception {
        byte[] data = f.put(9, 0, COOKIE, 4096);
        CacheServer c = f.cache(Map.of("storeTimeoutMillis", "1500", "leaseTimeoutMillis", "5000"));

        // Nothing listens there: 502 STORE_UNAVAILABLE.
        ServerSocket taken = new ServerSocket(0);
        int deadPort = taken.getLocalPort();
        taken.close();
        HttpResponse<byte[]> down = get(url(c.address(), "127.0.0.1:" + deadPort, 9, 0, COOKIE));
        assertThat(down.statusCode()).isEqualTo(502);
        assertThat(json(down).get("error").get("code").asInt()).isEqualTo(301);
        assertThat(json(down).get("error").get("message").asText()).contains("127.0.0.1:" + deadPort);

        // A store that corrupts the data in flight: 502 STORE_CORRUPT, not cached, and fine once it heals.
        StoreProxy p = f.proxy();
        p.corrupt = true;
        String viaProxy = url(c.address(), p.address(), 9, 0, COOKIE);
        HttpResponse<byte[]> corrupt = get(viaProxy);
        assertThat(corrupt.statusCode()).isEqualTo(502);
        assertThat(json(corrupt).get("error").get("code").asInt()).isEqualTo(303);
        assertThat(json(corrupt).get("error").get("message").asText()).contains("fails its CRC32C");
        assertThat(c.cache().contains(new CacheUrl.NeedleKey(1, 9, 0))).isFalse();
        assertThat(stats(c).get("corrupt").asLong()).isEqualTo(1);
        p.corrupt = false;
        assertThat(get(viaProxy).body()).isEqualTo(data);
        assertThat(p.requests.get()).isEqualTo(2);

        // A store slower than storeTimeoutMillis: 504 STORE_TIMEOUT; the cache keeps serving.
        c.cache().invalidate(new CacheUrl.NeedleKey(1, 9, 0));
        StoreProxy slow = f.proxy();
        slow.holdNext(1);
        f.put(10, 0, COOKIE, 10);
        HttpResponse<byte[]> late = get(url(c.address(), slow.address(), 10, 0, COOKIE));
        assertThat(late.statusCode()).isEqualTo(504);
        assertThat(json(late).get("error").get("code").asInt()).isEqualTo(302);
        slow.release();
        assertThat(get(url(c.address(), f.storeAddress(), 10, 0, COOKIE)).statusCode()).isEqualTo(200);
        assertThat(stats(c).get("fetchErrors").asLong()).isEqualTo(3);
    }

    @Test
    void memoryIsBoundedInBytesAndGutterEntriesExpire() throws Exception {
        CacheServer c = f.cache(Map.of("maxBytes", "65536", "maxObjectBytes", "16384"));
        for (int k = 100; k < 140; k++) {
            f.put(k, 0, COOKIE, 8192);
            assertThat(get(url(c.address(), f.storeAddress(), k, 0, COOKIE)).statusCode()).isEqualTo(200);
        }
        // evictions are counted by Caffeine's maintenance, asynchronously
        Await.untilTrue("an eviction", Duration.ofSeconds(10), () -> stats(c).get("evictions").asLong() > 0);
        assertThat(stats(c).get("evictions").asLong()).isPositive();
        assertThat(c.cache().weightedBytes()).isLessThanOrEqualTo(65536);
        // Too big to cache: passed through.
        byte[] big = f.put(200, 0, COOKIE, 20_000);
        assertThat(get(url(c.address(), f.storeAddress(), 200, 0, COOKIE)).body()).isEqualTo(big);
        assertThat(c.cache().contains(new CacheUrl.NeedleKey(1, 200, 0))).isFalse();

        CacheServer gutter = f.cache(Map.of("role", "gutter", "gutterTtlMillis", "200"));
        String u = url(gutter.address(), f.storeAddress(), 100, 0, COOKIE);
        get(u);
        assertThat(gutter.cache().contains(new CacheUrl.NeedleKey(1, 100, 0))).isTrue();
        Await.untilTrue("the gutter entry to expire", Duration.ofSeconds(10), () -> !gutter.cache().contains(new CacheUrl.NeedleKey(1, 100, 0)));
        assertThat(gutter.cache().contains(new CacheUrl.NeedleKey(1, 100, 0))).as("gutter entry expired").isFalse();
        assertThat(json(get("http://" + gutter.address() + "/health")).get("role").asText()).isEqualTo("gutter");
    }
}
