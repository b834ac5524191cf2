package io.hayloft.cache;

import io.hayloft.client.PhotoNotFoundException;
import io.hayloft.cold.ColdReader;
import io.hayloft.format.errors.ApiException;
import io.hayloft.raid.Cluster;
import java.io.IOException;
import java.net.InetAddress;
import java.util.Random;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.client.HayloftClient;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.TestCluster;
import io.hayloft.raid.ThreadPoolRunner;
import io.hayloft.testkit.Await;
import io.hayloft.testkit.Closing;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Needles of an erasure-coded volume read through a real cache server: a real directory with
 * {@code readPolicy: cache}, 15 real stores, a volume encoded by a real raid-node (RS 10+4), then
 * cold URLs ({@code /cold/...}) healthy, degraded, with a wrong cookie, under a burst of misses,
 * and the client's read path (cache first, its own cold read when the cache is gone).
 */
class ColdCacheTest {
    static final long BLOCK = 16 << 10;
    static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @TempDir
    Path dir;
    TestCluster cluster;
    ThreadPoolRunner runner;
    CacheServer cache;
    int volume;
    String cacheAddress;

    @BeforeEach
    void start() throws Exception {
        // The directory must name the cache node before it starts, so the port is chosen first. Below the
        // kernel's ephemeral range (32768-60999 here): the many client connections of the stores (a stripe
        // encode sends blocks store to store) never take it before the cache binds it.
        int port = -1;
        Random pick = new Random();
        for (int tries = 0; port < 0 && tries < 100; tries++) {
            int candidate = 20_000 + pick.nextInt(12_000);
            try (ServerSocket s = new ServerSocket(candidate, 1, InetAddress.getLoopbackAddress())) {
                port = s.getLocalPort();
            } catch (IOException taken) {
                // another one
            }
        }
        cacheAddress = "127.0.0.1:" + port;
        cluster = new TestCluster(dir, 15, d -> {
            d.readPolicy = "cache";
            d.cacheNodes = List.of(cacheAddress);
        });
        volume = cluster.writeVolume(60, 3000);
        runner = new ThreadPoolRunner(2);
        new RaidNode(cluster.raidConfig("rs", BLOCK), runner).encode(volume);
        CacheConfig c = new CacheConfig();
        c.host = "127.0.0.1";
        c.port = port;
        c.directory = cluster.directory.address();
        c.workerThreads = 32;
        c.coldIndexCacheBytes = 1 << 20; // the smallest bound an operator may set
        cache = CacheServer.start(c);
    }

    @AfterEach
    void stop() throws Exception {
        Closing.all(cache, runner, cluster);
    }

    @Test
    void everyNeedleReadsThroughTheCacheHealthyThenDegraded() throws Exception {
        TestCluster.Photo first = cluster.photos.values().iterator().next();
        assertThat(cluster.directory.directory().volume(volume).state().name()).isEqualTo("ERASURE_CODED");

        readAll();
        // healthy: no degraded read but those racing a direct read slower than the hedge delay (a loaded machine)
        assertThat(cache.cold().degradedReads()).isLessThanOrEqualTo(cache.cold().hedgedReads());
        assertThat(cache.cold().cachedIndexBytes()).isPositive().isLessThanOrEqualTo(1 << 20);
        assertThat(cache.cache().stats().snapshot().get("coldReads")).isEqualTo((long) cluster.photos.size());
        assertThat(cache.cache().contains(new CacheUrl.NeedleKey(volume, first.key(), 0)))
                .as("admitCold is off: cold needles are not kept").isFalse();

        StripeMap map = new Cluster(cluster.directory.address(), null, Duration.ofSeconds(5)).stripeMap(volume);
        List<String> victims = map.stripes().get(0).blocks().stream().map(StripeMap.Block::store)
                .filter(s -> !s.equals(map.index().holders().get(0))).distinct().limit(5).toList();
        cluster.stopStore(victims.get(0));
        readAll();
        assertThat(cache.cold().degradedReads()).isPositive();

        // Four more stores of stripe 0 (five blocks gone, RS 10+4 tolerates four): its needles answer
        // 503 and say why; the cache keeps serving the other stripes.
        for (String v : victims.subList(1, 5)) {
            cluster.stopStore(v);
        }
        int lost = 0;
        int served = 0;
        for (TestCluster.Photo p : cluster.photos.values()) {
            HttpResponse<byte[]> r = get("/cold/" + volume + "/" + p.key() + "/0?cookie=" + p.cookie());
            if (r.statusCode() == 200) {
                assertThat(r.body()).isEqualTo(p.data());
                served++;
            } else {
                assertThat(r.statusCode()).isEqualTo(503);
                assertThat(new String(r.body(), StandardCharsets.UTF_8)).contains("COLD_STRIPE_LOST")
                        .contains("too many blocks").contains("5 of 14 blocks unavailable");
                lost++;
            }
        }
        assertThat(lost).isPositive();
        assertThat(served).isPositive();
    }

    @Test
    void admitColdKeepsColdNeedlesAndWithoutADirectoryColdUrlsAreRefused() throws Exception {
        CacheConfig c = new CacheConfig();
        c.directory = cluster.directory.address();
        c.admitCold = true;
        c.validate();
        TestCluster.Photo p = cluster.photos.values().iterator().next();
        CacheUrl url = CacheUrl.parse("/cold/" + volume + "/" + p.key() + "/0?cookie=" + p.cookie(), true);
        try (StoreFetcher stores = new StoreFetcher(2000, Executors.newSingleThreadExecutor());
             ColdFetcher cold = new ColdFetcher(c.directory, null, 5000, 20_000, 1L << 26, Executors.newFixedThreadPool(2))) {
            ReadThroughCache rtc = new ReadThroughCache(c, stores, cold);
            assertThat(rtc.get(url, true).source()).isEqualTo(ReadThroughCache.Source.MISS);
            ReadThroughCache.Answer hit = rtc.get(url, true);
            assertThat(hit.source()).isEqualTo(ReadThroughCache.Source.HIT);
            assertThat(hit.body()).isEqualTo(p.data());
            assertThat(rtc.stats().snapshot().get("coldReads")).isEqualTo(1L);

            CacheConfig plain = new CacheConfig().validate();
            ReadThroughCache noDirectory = new ReadThroughCache(plain, stores);
            assertThatThrownBy(() -> noDirectory.get(url, true)).isInstanceOf(ApiException.class)
                    .hasMessageContaining("no directory configured");
        }
    }

    @Test
    void wrongCookieOrVolumeLooksMissingAndBadUrlsAreNamed() throws Exception {
        TestCluster.Photo p = cluster.photos.values().iterator().next();
        long wrong = Long.parseUnsignedLong(p.cookie(), 16) ^ 1;
        HttpResponse<byte[]> r = get("/cold/" + volume + "/" + p.key() + "/0?cookie=" + Long.toHexString(wrong));
        assertThat(r.statusCode()).isEqualTo(404);
        assertThat(new String(r.body(), StandardCharsets.UTF_8)).contains("NOT_FOUND");
        assertThat(get("/cold/" + (volume + 1) + "/" + p.key() + "/0?cookie=" + p.cookie()).statusCode()).isEqualTo(404);
        assertThat(get("/cold/" + volume + "/" + p.key() + "/7?cookie=" + p.cookie()).statusCode()).isEqualTo(404);
        HttpResponse<byte[]> bad = get("/cold/" + volume + "/x/0?cookie=" + p.cookie());
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(new String(bad.body(), StandardCharsets.UTF_8)).contains("BAD_CACHE_URL").contains("key");
    }

    @Test
    void aBurstOfMissesForOneColdNeedleCausesOneColdRead() throws Exception {
        int burst = 12;
        CountDownLatch gate = new CountDownLatch(1);
        // The cold read waits at the gate until every other request of the burst waits on its lease.
        ExecutorService gated = new ThreadPoolExecutor(1, 1, 1, TimeUnit.SECONDS, new LinkedBlockingQueue<>()) {
            @Override
            protected void beforeExecute(Thread t, Runnable r) {
                try {
                    gate.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        CacheConfig c = new CacheConfig();
        c.directory = cluster.directory.address();
        c.validate();
        TestCluster.Photo p = cluster.photos.values().iterator().next();
        CacheUrl url = CacheUrl.parse("/cold/" + volume + "/" + p.key() + "/0?cookie=" + p.cookie(), true);
        ExecutorService callers = Executors.newFixedThreadPool(burst);
        try (StoreFetcher stores = new StoreFetcher(2000, Executors.newSingleThreadExecutor());
             ColdFetcher cold = new ColdFetcher(c.directory, null, 5000, 20_000, 1L << 26, gated)) {
            ReadThroughCache rtc = new ReadThroughCache(c, stores, cold);
            List<Future<ReadThroughCache.Answer>> answers = new ArrayList<>();
            for (int i = 0; i < burst; i++) {
                answers.add(callers.submit(() -> rtc.get(url, true)));
            }
            Await.until("the other misses waiting on the lease", Duration.ofSeconds(30),
                    () -> (long) rtc.stats().snapshot().get("leaseWaits") == burst - 1);
            gate.countDown();
            for (Future<ReadThroughCache.Answer> a : answers) {
                ReadThroughCache.Answer got = a.get(30, TimeUnit.SECONDS);
                assertThat(got.status()).isEqualTo(200);
                assertThat(got.body()).isEqualTo(p.data());
                assertThat(got.crcHex()).isEqualTo(StoreFetcher.crcHex(StoreFetcher.crc32c(p.data())));
            }
            assertThat(rtc.stats().snapshot().get("coldReads")).isEqualTo(1L);
            assertThat(cold.healthyReads() + cold.degradedReads()).isBetween(1L, 2L); // two when it crosses a block
            assertThat(rtc.contains(url.needle())).as("admitCold off: not kept").isFalse();
        } finally {
            gate.countDown();
            callers.shutdownNow();
        }
    }

    @Test
    void theClientReadsColdPhotosThroughTheCacheAndByItselfWhenTheCacheIsDown() throws Exception {
        try (HayloftClient client = HayloftClient.builder().directory(cluster.directory.address())
                .cacheNodes(List.of(cacheAddress), List.of()).build()) {
            int n = 0;
            for (TestCluster.Photo p : cluster.photos.values()) {
                assertThat(client.get(id(p))).isEqualTo(p.data());
                if (++n == 10) {
                    break;
                }
            }
            assertThat(cache.cache().stats().snapshot().get("coldReads")).as("cache first").isEqualTo(10L);

            // Deleting a cold photo invalidates it in its cache node (under its cold URL); it then reads as missing.
            TestCluster.Photo gone = cluster.photos.values().iterator().next();
            client.delete(id(gone));
            // Cold readers decide deletes from the volume's delete log only: log it as the client
            // will (a no-op once the client logs deletes itself; the first entry of a key stays).
            cluster.logDelete(gone);
            assertThat(cache.cache().stats().snapshot().get("invalidations")).isEqualTo(1L);
            assertThatThrownBy(() -> client.get(id(gone))).isInstanceOf(PhotoNotFoundException.class);
            cache.close();
            cache = null;
            for (TestCluster.Photo p : cluster.photos.values()) {
                assertThat(client.get(id(p))).isEqualTo(p.data());
            }
        }
    }

    /**
     * A delete in the volume's delete log (nothing else: no per-photo record in the directory) is
     * honoured at once by every cold tier that had the volume cached — a ColdReader, the cache's cold
     * URL, the client's own cold read — and reads exactly like a wrong cookie or a missing needle; an
     * entry whose cookie is not the needle's hides nothing.
     */
    @Test
    void aDeleteInTheVolumesLogHidesTheNeedleAtEveryColdTierAtOnce() throws Exception {
        List<TestCluster.Photo> ps = new ArrayList<>(cluster.photos.values());
        TestCluster.Photo gone = ps.get(0);
        TestCluster.Photo kept = ps.get(1);
        String wrongCookie = String.format("%016x", Long.parseUnsignedLong(gone.cookie(), 16) ^ 1);
        try (ColdReader reader = new ColdReader(
                new Cluster(cluster.directory.address(), null, Duration.ofSeconds(5)));
             HayloftClient client = HayloftClient.builder().directory(cluster.directory.address()).build()) {
            // Every tier reads both photos first: each caches the volume's map, index and log head.
            for (TestCluster.Photo p : List.of(gone, kept)) {
                assertThat(reader.get(volume, p.key(), 0, Long.parseUnsignedLong(p.cookie(), 16))).isEqualTo(p.data());
                assertThat(get(cold(p, p.cookie())).body()).isEqualTo(p.data());
                assertThat(client.get(id(p))).isEqualTo(p.data());
            }
            HttpResponse<byte[]> wrong = get(cold(gone, wrongCookie));
            assertThat(wrong.statusCode()).isEqualTo(404);
            assertThat(reader.get(volume, gone.key(), 0, Long.parseUnsignedLong(wrongCookie, 16))).isNull();
            assertThatThrownBy(() -> client.get(new PhotoId(volume, gone.key(), 0, Long.parseUnsignedLong(wrongCookie, 16))))
                    .isInstanceOf(PhotoNotFoundException.class);

            // An entry for kept's key with another cookie than its needle's: hides nothing.
            logDelete(kept.key(), String.format("%016x", Long.parseUnsignedLong(kept.cookie(), 16) ^ 2));
            // The delete itself, through the log only.
            cluster.logDelete(gone);

            assertThat(reader.get(volume, gone.key(), 0, Long.parseUnsignedLong(gone.cookie(), 16))).as("ColdReader, cached").isNull();
            assertThat(reader.get(volume, gone.key(), 0)).as("ColdReader, no cookie").isNull();
            HttpResponse<byte[]> deleted = get(cold(gone, gone.cookie()));
            assertThat(deleted.statusCode()).as("cache cold URL").isEqualTo(404);
            assertThat(deleted.body()).as("a deleted needle answers exactly as a wrong cookie").isEqualTo(wrong.body());
            assertThat(deleted.headers().firstValue("content-type")).isEqualTo(wrong.headers().firstValue("content-type"));
            HttpResponse<byte[]> missingAlt = get("/cold/" + volume + "/" + gone.key() + "/9?cookie=" + gone.cookie());
            assertThat(missingAlt.statusCode()).isEqualTo(404);
            assertThat(new String(missingAlt.body(), StandardCharsets.UTF_8).replace("/9 not found", "/0 not found"))
                    .as("and as a missing needle").isEqualTo(new String(wrong.body(), StandardCharsets.UTF_8));
            assertThatThrownBy(() -> client.get(id(gone))).as("client").isInstanceOf(PhotoNotFoundException.class);

            assertThat(reader.get(volume, kept.key(), 0, Long.parseUnsignedLong(kept.cookie(), 16))).isEqualTo(kept.data());
            assertThat(get(cold(kept, kept.cookie())).body()).isEqualTo(kept.data());
            assertThat(client.get(id(kept))).isEqualTo(kept.data());

            // With the cache gone the client's own cold read decides alone: the same answers.
            cache.close();
            cache = null;
            assertThatThrownBy(() -> client.get(id(gone))).isInstanceOf(PhotoNotFoundException.class);
            assertThatThrownBy(() -> client.get(new PhotoId(volume, kept.key(), 0, Long.parseUnsignedLong(kept.cookie(), 16) ^ 2)))
                    .as("client, wrong cookie").isInstanceOf(PhotoNotFoundException.class);
            assertThat(client.get(id(kept))).isEqualTo(kept.data());
            try (ColdReader fresh = new ColdReader(
                    new Cluster(cluster.directory.address(), null, Duration.ofSeconds(5)))) {
                assertThat(fresh.get(volume, gone.key(), 0)).isNull();
                assertThat(fresh.get(volume, kept.key(), 0, Long.parseUnsignedLong(kept.cookie(), 16))).isEqualTo(kept.data());
            }
        }
    }

    private String cold(TestCluster.Photo p, String cookie) {
        return "/cold/" + volume + "/" + p.key() + "/0?cookie=" + cookie;
    }

    /** {@code POST /v1/volumes/{volume}/deletes} with one entry. */
    private void logDelete(long key, String cookie) throws Exception {
        String body = "{\"deletes\":[{\"seq\":0,\"key\":" + key + ",\"cookie\":\"" + cookie + "\",\"needles\":1}]}";
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://" + cluster.directory.address() + "/v1/volumes/"
                        + volume + "/deletes")).timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    }

    private PhotoId id(TestCluster.Photo p) {
        return new PhotoId(p.volume(), p.key(), 0, Long.parseUnsignedLong(p.cookie(), 16));
    }

    private void readAll() throws Exception {
        for (TestCluster.Photo p : cluster.photos.values()) {
            HttpResponse<byte[]> r = get("/cold/" + volume + "/" + p.key() + "/0?cookie=" + p.cookie());
            assertThat(r.statusCode()).as("needle " + p.key()).isEqualTo(200);
            assertThat(r.body()).isEqualTo(p.data());
            assertThat(r.headers().firstValue(StoreFetcher.CRC_HEADER))
                    .hasValue(StoreFetcher.crcHex(StoreFetcher.crc32c(p.data())));
        }
    }

    private HttpResponse<byte[]> get(String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://" + cacheAddress + path)).timeout(Duration.ofSeconds(30))
                .GET().build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    /** Waits for a condition (polling, with a deadline); fails the test when it does not hold in time. */
}
