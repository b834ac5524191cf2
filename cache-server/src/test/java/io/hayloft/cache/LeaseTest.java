package io.hayloft.cache;

import static io.hayloft.cache.CacheFixture.HTTP;
import static io.hayloft.cache.CacheFixture.get;
import static io.hayloft.cache.CacheFixture.send;
import static io.hayloft.cache.CacheFixture.stats;
import static io.hayloft.cache.CacheFixture.url;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.testkit.Await;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Memcache leases on a real store behind a real holding proxy: a burst of misses makes one store
 * read; an invalidation during a fill drops the fill; an unfulfilled lease expires.
 */
class LeaseTest extends CacheFixtureTest {
    static final long COOKIE = 0x0fedcba987654321L;

    @Test
    void thousandConcurrentMissesMakeExactlyOneStoreRead() throws Exception {
        byte[] data = f.put(77, 0, COOKIE, 64 * 1024);
        CacheServer c = f.cache(Map.of("workerThreads", "1100", "leaseTimeoutMillis", "30000", "storeTimeoutMillis", "30000"));
        StoreProxy p = f.proxy();
        p.holdNext(1);
        long before = f.storeReads();
        String u = url(c.address(), p.address(), 77, 0, COOKIE);
        List<CompletableFuture<HttpResponse<byte[]>>> all = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            all.add(HTTP.sendAsync(HttpRequest.newBuilder(URI.create(u)).timeout(Duration.ofSeconds(60)).build(),
                    HttpResponse.BodyHandlers.ofByteArray()));
        }
        // The fill is held at the proxy until the other 999 are waiting on its lease.
        assertThat(p.awaitArrivals(1, 30_000)).isTrue();
        Await.untilTrue("999 lease waits", Duration.ofSeconds(10), () -> c.cache().stats().leaseWaits.sum() == 999);
        p.release();
        int waits = 0;
        for (CompletableFuture<HttpResponse<byte[]>> r : all) {
            HttpResponse<byte[]> resp = r.get(60, TimeUnit.SECONDS);
            assertThat(resp.statusCode()).isEqualTo(200);
            assertThat(resp.body()).isEqualTo(data);
            waits += "wait".equals(resp.headers().firstValue(CacheHttpHandler.SOURCE_HEADER).orElse("")) ? 1 : 0;
        }
        assertThat(waits).isEqualTo(999);
        assertThat(p.requests.get()).isEqualTo(1);
        assertThat(f.storeReads() - before).isEqualTo(1);
        assertThat(stats(c).get("storeReads").asLong()).isEqualTo(1);
        assertThat(c.cache().leasesInFlight()).isZero();
        assertThat(get(u).headers().firstValue(CacheHttpHandler.SOURCE_HEADER)).hasValue("hit");
    }

    @Test
    void deleteDuringAnInFlightFillDropsTheFill() throws Exception {
        byte[] old = f.put(5, 0, COOKIE, 3000);
        CacheServer c = f.cache(Map.of("leaseTimeoutMillis", "30000", "storeTimeoutMillis", "30000"));
        StoreProxy p = f.proxy();
        p.holdNext(1);
        String u = url(c.address(), p.address(), 5, 0, COOKIE);
        CompletableFuture<HttpResponse<byte[]>> inFlight = HTTP.sendAsync(HttpRequest.newBuilder(URI.create(u)).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(p.awaitArrivals(1, 30_000)).isTrue(); // the store has been asked; its answer is held
        // The client deletes the photo: on the store, then in its cache node.
        f.store.volume(CacheFixture.VOLUME).delete(5, 0, COOKIE);
        assertThat(send("DELETE", u, null).statusCode()).isEqualTo(204);
        p.release();
        // The request that came before the delete gets the bytes the store had then ...
        assertThat(inFlight.get(30, TimeUnit.SECONDS).body()).isEqualTo(old);
        // ... but the fill was not kept, so nothing after the delete sees them.
        assertThat(c.cache().contains(new CacheUrl.NeedleKey(1, 5, 0))).isFalse();
        assertThat(stats(c).get("leasesCancelled").asLong()).isEqualTo(1);
        for (int i = 0; i < 3; i++) {
            HttpResponse<byte[]> after = get(u);
            assertThat(after.statusCode()).isEqualTo(404);
            assertThat(after.body()).isNotEqualTo(old);
        }
    }

    @Test
    void invalidationDuringAFillWinsEvenWhenAReplicaStillHasTheNeedle() throws Exception {
        // A lagging replica still serves the needle after the delete: the tombstone keeps it out of the cache.
        f.put(6, 0, COOKIE, 100);
        CacheServer c = f.cache(Map.of("leaseTimeoutMillis", "30000", "storeTimeoutMillis", "30000"));
        StoreProxy p = f.proxy();
        p.holdNext(1);
        String u = url(c.address(), p.address(), 6, 0, COOKIE);
        CompletableFuture<HttpResponse<byte[]>> inFlight = HTTP.sendAsync(HttpRequest.newBuilder(URI.create(u)).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(p.awaitArrivals(1, 30_000)).isTrue();
        assertThat(send("DELETE", u, null).statusCode()).isEqualTo(204);
        p.release();
        assertThat(inFlight.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        assertThat(c.cache().contains(new CacheUrl.NeedleKey(1, 6, 0))).isFalse();
        assertThat(get(u).headers().firstValue(CacheHttpHandler.SOURCE_HEADER)).hasValue("miss");
        assertThat(c.cache().contains(new CacheUrl.NeedleKey(1, 6, 0))).as("tombstoned").isFalse();
        assertThat(p.requests.get()).isEqualTo(2);
    }

    @Test
    void anUnfulfilledLeaseExpiresAndWaitersFallBackToTheStore() throws Exception {
        byte[] data = f.put(8, 0, COOKIE, 500);
        CacheServer c = f.cache(Map.of("leaseTimeoutMillis", "1000", "storeTimeoutMillis", "30000"));
        StoreProxy p = f.proxy();
        p.holdNext(1); // the lease holder's fetch hangs
        String u = url(c.address(), p.address(), 8, 0, COOKIE);
        CompletableFuture<HttpResponse<byte[]>> holder = HTTP.sendAsync(HttpRequest.newBuilder(URI.create(u)).build(),
                HttpResponse.BodyHandlers.ofByteArray());
        assertThat(p.awaitArrivals(1, 30_000)).isTrue();
        // A second read waits on the lease, gives up when it expires and reads the store itself.
        HttpResponse<byte[]> waiter = get(u);
        assertThat(waiter.statusCode()).isEqualTo(200);
        assertThat(waiter.body()).isEqualTo(data);
        String source = waiter.headers().firstValue(CacheHttpHandler.SOURCE_HEADER).orElseThrow();
        if (source.equals("bypass")) {
            // It came while the lease was valid: it waited, the lease expired, it read the store itself.
            assertThat(stats(c).get("leaseWaits").asLong()).isEqualTo(1);
            assertThat(stats(c).get("leaseExpiries").asLong()).isEqualTo(1);
        } else {
            // It came after the deadline (a very slow machine): it replaced the expired lease.
            assertThat(source).isEqualTo("miss");
        }
        assertThat(p.requests.get()).isEqualTo(2);
        p.release();
        assertThat(holder.get(30, TimeUnit.SECONDS).body()).isEqualTo(data);
    }
}
