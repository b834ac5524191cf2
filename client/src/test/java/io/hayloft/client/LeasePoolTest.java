package io.hayloft.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.format.wire.Wire;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * {@link LeasePool} against a model directory (a key counter and rotating volumes): keys are never
 * handed out twice, a chunk's keys are consecutive within one lease, leases are reused until their
 * keys run out or they near expiry, an abandoned volume is excluded, concurrent takers share fetches.
 */
class LeasePoolTest {
    /** A model of the directory's lease endpoint: consecutive key ranges, volumes in turn, requests recorded. */
    private static final class Directory implements LeasePool.Source {
        final AtomicLong next = new AtomicLong(1);
        final AtomicInteger volume = new AtomicInteger();
        final List<List<Integer>> excludes = new CopyOnWriteArrayList<>();
        final int volumes;
        final long expiresMillis;

        Directory(int volumes, long expiresMillis) {
            this.volumes = volumes;
            this.expiresMillis = expiresMillis;
        }

        @Override
        public CompletableFuture<Wire.Lease> lease(int keys, List<Integer> exclude) {
            excludes.add(exclude);
            int v;
            do {
                v = 1 + Math.floorMod(volume.getAndIncrement(), volumes);
            } while (exclude.contains(v) && exclude.size() < volumes);
            long first = next.getAndAdd(keys);
            return CompletableFuture.completedFuture(new Wire.Lease(v, List.of("s" + v + ":1"), first, keys, "t", expiresMillis));
        }
    }

    @Test
    void keysAreConsecutivePerTakeAndNeverReusedAcrossConcurrentTakers() throws Exception {
        Directory d = new Directory(3, 0);
        LeasePool pool = new LeasePool(d, 1000, 4);
        Set<Long> seen = ConcurrentHashMap.newKeySet();
        ExecutorService ex = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                fs.add(ex.submit(() -> {
                    for (int i = 0; i < 500; i++) {
                        int n = 1 + i % 3;
                        LeasePool.Grant g = Futures.await(pool.take(n));
                        assertThat(g.count()).isEqualTo(n);
                        assertThat(g.first()).isGreaterThanOrEqualTo(g.lease().first());
                        assertThat(g.first() + n).isLessThanOrEqualTo(g.lease().first() + g.lease().count());
                        for (long k = g.first(); k < g.first() + n; k++) {
                            assertThat(seen.add(k)).as("key " + k + " handed out twice").isTrue();
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        } finally {
            ex.shutdownNow();
        }
        // 8 * 500 takes of 1..3 keys = 8,000 keys: about 8 leases of 1,000, plus at most a partly used one per slot.
        assertThat(pool.leasesFetched()).isBetween(8L, 16L);
    }

    @Test
    void takesRotateOverSlotsSoWritersSpreadOverVolumes() {
        Directory d = new Directory(4, 0);
        LeasePool pool = new LeasePool(d, 1000, 4);
        Set<Integer> volumes = new HashSet<>();
        for (int i = 0; i < 8; i++) {
            volumes.add(Futures.await(pool.take(1)).lease().volume());
        }
        assertThat(volumes).containsExactlyInAnyOrder(1, 2, 3, 4);
        assertThat(pool.leasesFetched()).isEqualTo(4);
    }

    @Test
    void anAbandonedVolumeIsDroppedAndExcludedForAWhile() {
        Directory d = new Directory(2, 0);
        AtomicLong now = new AtomicLong();
        LeasePool pool = new LeasePool(d, 10, 1, now::get, () -> 0L);
        LeasePool.Grant a = Futures.await(pool.take(1));
        pool.abandon(a.lease().volume());
        LeasePool.Grant b = Futures.await(pool.take(1));
        assertThat(b.lease().volume()).isNotEqualTo(a.lease().volume());
        assertThat(d.excludes.get(d.excludes.size() - 1)).containsExactly(a.lease().volume());
        now.addAndGet(LeasePool.EXCLUDE_NANOS + 1);
        assertThat(pool.exclude()).isEmpty();
    }

    @Test
    void leasesOfVolumesTheMapNoLongerShowsWritableAreDroppedButNotExcluded() {
        Directory d = new Directory(2, 0);
        LeasePool pool = new LeasePool(d, 1000, 1);
        int v = Futures.await(pool.take(1)).lease().volume();
        pool.retain(id -> true);
        assertThat(Futures.await(pool.take(1)).lease().volume()).isEqualTo(v);
        pool.retain(id -> id != v);
        assertThat(Futures.await(pool.take(1)).lease().volume()).isNotEqualTo(v);
        assertThat(pool.exclude()).isEmpty();
        assertThat(pool.leasesFetched()).isEqualTo(2);
    }

    @Test
    void aLeaseIsRetiredBeforeItsExpiryRelativeToItsArrival() {
        AtomicLong nanos = new AtomicLong();
        long wall = 1_000_000;
        // Lifetime 600 s: retired 60 s (10%) before expiry, i.e. 540 s after arrival.
        Directory d = new Directory(1, wall + 600_000);
        LeasePool pool = new LeasePool(d, 1000, 1, nanos::get, () -> wall);
        Futures.await(pool.take(1));
        nanos.set(539_000_000_000L);
        Futures.await(pool.take(1));
        assertThat(pool.leasesFetched()).isEqualTo(1);
        nanos.set(541_000_000_000L);
        Futures.await(pool.take(1));
        assertThat(pool.leasesFetched()).isEqualTo(2);
    }

    @Test
    void aShortLeaseKeepsAtLeastThirtySecondsOfMarginButNeverMoreThanHalf() {
        AtomicLong nanos = new AtomicLong();
        long wall = 5_000;
        Directory d = new Directory(1, wall + 40_000); // 40 s: margin 30 s would leave 10 s; capped at half, 20 s
        LeasePool pool = new LeasePool(d, 1000, 1, nanos::get, () -> wall);
        Futures.await(pool.take(1));
        nanos.set(19_000_000_000L);
        Futures.await(pool.take(1));
        assertThat(pool.leasesFetched()).isEqualTo(1);
        nanos.set(21_000_000_000L);
        Futures.await(pool.take(1));
        assertThat(pool.leasesFetched()).isEqualTo(2);
    }

    @Test
    void aTakeLargerThanTheLeaseSizeAsksForEnoughKeys() {
        Directory d = new Directory(1, 0);
        LeasePool pool = new LeasePool(d, 10, 1);
        LeasePool.Grant g = Futures.await(pool.take(25));
        assertThat(g.count()).isEqualTo(25);
        assertThat(g.lease().count()).isGreaterThanOrEqualTo(25);
    }

    @Test
    void noWritableVolumeFailsTheTakeAndBadArgumentsAreNamed() {
        LeasePool pool = new LeasePool((keys, exclude) -> CompletableFuture.failedFuture(
                new DirectoryException("d:1", RemoteException.Kind.ERROR, 503, DirectoryException.NO_WRITABLE_VOLUME,
                        "NO_WRITABLE_VOLUME", "none", "d:1: no writable volume", null)), 10, 2);
        assertThatThrownBy(() -> Futures.await(pool.take(1))).isInstanceOf(DirectoryException.class)
                .hasMessageContaining("no writable volume");
        assertThatThrownBy(() -> pool.take(0)).hasMessageContaining("was 0");
        assertThatThrownBy(() -> new LeasePool((k, e) -> null, 0, 1)).hasMessageContaining("leaseKeys").hasMessageContaining("was 0");
        assertThatThrownBy(() -> new LeasePool((k, e) -> null, Wire.MAX_LEASE_KEYS + 1, 1)).hasMessageContaining("leaseKeys");
    }
}
