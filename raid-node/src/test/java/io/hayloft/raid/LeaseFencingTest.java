package io.hayloft.raid;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.hayloft.cold.ColdReader;
import io.hayloft.directory.DirectoryHttp;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.directory.VolumeState;
import io.hayloft.format.wire.StripeMap;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import io.hayloft.testkit.Await;
import org.junit.jupiter.api.Test;

/**
 * Fencing by the raid lease, on a real directory and real stores: raid-node A holds the lease at
 * epoch e; in the middle of A's encode the lease passes to raid-node B (A's is released by an
 * operator, as if it had lapsed; B takes it at e + 1). A's commit with epoch e is refused 409
 * LEASE_LOST and changes nothing (volume state and stripe map as before), A deletes nothing (neither
 * its plan's blocks nor, after a commit, the replicas), and B, under its lease, finishes the work
 * with nothing lost. A takes the lease again only once B gave it up, at a new epoch.
 */
class LeaseFencingTest extends ClusterFixture {

    private static final long TTL = 60_000;

    private RaidConfig start(String codec) throws Exception {
        cluster = new TestCluster(dir, 8);
        runner = new ThreadPoolRunner(2);
        return cluster.localEncodeConfig(codec, 16 << 10, 4, 2, RaidConfig.ENCODE_AT_STORE);
    }

    /** At {@code step} of A's encode: A's lease released behind its back, B's taken; returns B's lease. */
    private static Checkpoints handOver(String step, Cluster operator, Cluster b, AtomicReference<RaidLease> bLease,
                                        AtomicReference<StripeMap> mapThen, int volume) {
        return s -> {
            if (!s.equals(step)) {
                return;
            }
            try {
                operator.releaseLease("raid-a");
                bLease.set(RaidLease.acquire(b, "raid-b", TTL));
                mapThen.set(operator.stripeMap(volume));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        };
    }

    @Test
    void aCommitUnderALeaseThatPassedToAnotherIsRefusedAndChangesNothing() throws Exception {
        RaidConfig config = start("rs");
        int volume = cluster.writeVolume(60, 3000);
        Cluster operator = config.cluster();
        RaidNode a = new RaidNode(config, runner);
        RaidNode b = new RaidNode(config, runner);
        AtomicReference<RaidLease> bLease = new AtomicReference<>();
        AtomicReference<StripeMap> planThen = new AtomicReference<>();
        try (RaidLease aLease = RaidLease.acquire(a.cluster(), "raid-a", TTL)) {
            long e = aLease.epoch();
            assertThat(a.cluster().fenceEpoch()).isEqualTo(e);
            a.checkpoints(handOver("verified", operator, b.cluster(), bLease, planThen, volume));

            Throwable refused = catchThrowable(() -> a.encode(volume));
            assertThat(refused).isInstanceOf(Cluster.HttpStatusException.class);
            Cluster.HttpStatusException h = (Cluster.HttpStatusException) refused;
            assertThat(h.status()).isEqualTo(409);
            assertThat(h.errorName()).isEqualTo("LEASE_LOST");
            assertThat(bLease.get().epoch()).isEqualTo(e + 1);

            // Nothing changed: the volume is ENCODING with A's plan exactly as it was before the commit.
            VolumeInfo v = cluster.directory.directory().volume(volume);
            assertThat(v.state()).isEqualTo(VolumeState.ENCODING);
            assertThat(v.replicas()).hasSize(3);
            StripeMap now = operator.stripeMap(volume);
            assertThat(now).isEqualTo(planThen.get());
            assertThat(now.status()).isEqualTo(StripeMap.PLANNED);
            // A rolled nothing back: the lease is lost, so it deleted none of its blocks and aborted nothing.
            List<String> blocks = cluster.allBlocks();
            now.allBlocks().forEach(blk -> assertThat(blocks).contains(blk.store() + "/" + blk.name()));
            assertThatThrownBy(aLease::check).isInstanceOf(RaidLease.LostException.class).hasMessageContaining("epoch " + e);
            assertThatThrownBy(() -> a.cluster().abortEncoding(volume, now.job())).isInstanceOf(Cluster.HttpStatusException.class)
                    .hasMessageContaining("LEASE_LOST");
            assertThat(operator.stripeMap(volume)).isEqualTo(planThen.get());
            // A's next job stops before any work; A cannot take the lease back while B holds it.
            assertThatThrownBy(() -> a.encode(volume)).isInstanceOf(RaidLease.LostException.class);
            assertThatThrownBy(aLease::retake).isInstanceOf(RaidLease.HeldException.class).hasMessageContaining("raid-b");

            // B, under its lease, rolls A's job back and encodes the volume; every photo reads back.
            b.recover();
            assertThat(cluster.directory.directory().volume(volume).state()).isEqualTo(VolumeState.READ_ONLY);
            b.encode(volume);
            assertThat(cluster.directory.directory().volume(volume).state()).isEqualTo(VolumeState.ERASURE_CODED);
            assertThat(cluster.directory.directory().volume(volume).replicas()).isEmpty();
            cluster.assertOnlyMappedBlocks(operator, "after B encoded the volume A lost");
            try (ColdReader reader = new ColdReader(operator)) {
                cluster.assertColdReads(reader, List.of(), "after the hand-over");
            }

            // Once B gives the lease up, A takes it again at a new epoch and works under it.
            bLease.get().close();
            aLease.retake();
            assertThat(aLease.epoch()).isEqualTo(e + 2);
            aLease.check();
            assertThat(a.cluster().fenceEpoch()).isEqualTo(e + 2);
        } finally {
            if (bLease.get() != null) {
                bLease.get().close();
            }
        }
    }

    @Test
    void replicasAreNotDroppedByARaidNodeWhoseLeasePassedToAnother() throws Exception {
        RaidConfig config = start("hh-xor+");
        int volume = cluster.writeVolume(50, 3000);
        Cluster operator = config.cluster();
        RaidNode a = new RaidNode(config, runner);
        RaidNode b = new RaidNode(config, runner);
        AtomicReference<RaidLease> bLease = new AtomicReference<>();
        AtomicReference<StripeMap> committed = new AtomicReference<>();
        try (RaidLease aLease = RaidLease.acquire(a.cluster(), "raid-a", TTL)) {
            long e = aLease.epoch();
            // The lease passes right after A's commit (made under epoch e), before A drops the replicas.
            a.checkpoints(handOver("committed", operator, b.cluster(), bLease, committed, volume));
            assertThatThrownBy(() -> a.encode(volume)).isInstanceOf(RaidLease.LostException.class)
                    .hasMessageContaining("another holder");

            VolumeInfo v = cluster.directory.directory().volume(volume);
            assertThat(v.state()).isEqualTo(VolumeState.ERASURE_CODED);
            assertThat(committed.get().status()).isEqualTo(StripeMap.COMMITTED);
            assertThat(v.replicas()).as("A dropped no replica").hasSize(3);
            Map<String, Cluster.StoreRef> stores = operator.stores();
            for (String r : v.replicas()) {
                assertThat(operator.storeVolume(stores.get(r).address(), volume)).as("the replica on %s", r).isNotNull();
            }
            // Nor can A tell the directory they are gone: its epoch e no longer fences anything.
            Throwable refused = catchThrowable(() -> a.cluster().replicasDropped(volume));
            assertThat(Cluster.leaseLost(refused)).as(String.valueOf(refused)).isTrue();
            assertThat(cluster.directory.directory().volume(volume).replicas()).hasSize(3);
            // A's orphan sweep deletes nothing either: it confirms its lease before the first delete.
            Cluster.StoreRef s0 = stores.get("s00");
            String orphan = "v" + volume + "-0000beef-s0-u0";
            operator.putBlock(s0.address(), orphan, new byte[] {1, 2, 3});
            assertThatThrownBy(() -> a.sweepOrphans(operator.stores())).isInstanceOf(RaidLease.LostException.class);
            assertThat(operator.listBlocks(s0.address())).containsKey(orphan);

            // The same commit with B's epoch, as B sends it, passes the fence: B's recovery drops them.
            assertThat(bLease.get().epoch()).isEqualTo(e + 1);
            b.recover();
            assertThat(cluster.directory.directory().volume(volume).replicas()).isEmpty();
            assertThat(operator.listBlocks(s0.address())).as("B's sweep, under its lease").doesNotContainKey(orphan);
            for (String r : v.replicas()) {
                assertThat(operator.storeVolume(stores.get(r).address(), volume)).as("the replica on %s", r).isNull();
            }
            try (ColdReader reader = new ColdReader(operator)) {
                cluster.assertColdReads(reader, List.of(), "after B dropped the replicas");
            }
        } finally {
            if (bLease.get() != null) {
                bLease.get().close();
            }
        }
    }

    @Test
    void theDaemonTakesItsLeaseAgainBeforeMoreWorkOnceItWasLost() throws Exception {
        cluster = new TestCluster(dir, 8);
        java.nio.file.Path policy = dir.resolve("policy.json");
        RaidServerTest.writePolicy(policy, "\"minAgeMillis\": 0, \"codec\": \"rs\", \"k\": 4, \"r\": 2");
        RaidServerConfig c = RaidServerTest.serverConfig(cluster, policy);
        c.nodeId = "raid-daemon";
        c.leaseTtlMillis = 3_000; // renewed every second: a renewal soon finds the lease granted again
        Cluster operator = cluster.raidConfig("rs", 16 << 10).cluster();
        try (RaidServer server = RaidServer.start(c, Checkpoints.NONE)) {
            Await.untilTrue("the first pass ran", java.time.Duration.ofSeconds(30),
                    () -> ((Number) server.status().get("passes")).longValue() >= 1);
            long e = epochOf(server);
            // Behind the daemon's back its lease is released: its epoch e fences nothing any more.
            operator.releaseLease("raid-daemon");
            int volume = cluster.writeVolume(30, 2000);
            // Passes fail while the daemon finds out (LEASE_LOST, or a renewal at a new epoch), then one
            // takes the lease again (epoch e + 1), recovers, and encodes under it. None encodes under e.
            Await.untilTrue("a pass under the retaken lease encoded the volume", java.time.Duration.ofSeconds(60), () -> {
                try {
                    server.runNow().get();
                } catch (java.util.concurrent.ExecutionException failed) {
                    assertThat(Cluster.leaseLost(failed.getCause())).as(String.valueOf(failed.getCause())).isTrue();
                }
                return cluster.directory.directory().volume(volume).state() == VolumeState.ERASURE_CODED;
            });
            assertThat(epochOf(server)).isEqualTo(e + 1);
            assertThat(cluster.directory.directory().volume(volume).replicas()).isEmpty();
            cluster.assertOnlyMappedBlocks(operator, "after the daemon took its lease again");
        }
    }

    private static long epochOf(RaidServer server) {
        return ((Number) ((Map<?, ?>) server.status().get("lease")).get("epoch")).longValue();
    }

    @Test
    void anUnfencedClientSendsNoEpochAndAReleasedLeaseUnfencesItsClient() throws Exception {
        RaidConfig config = start("rs");
        assertThat(Cluster.RAID_EPOCH_HEADER).isEqualTo(DirectoryHttp.RAID_EPOCH_HEADER);
        RaidNode a = new RaidNode(config, runner);
        assertThat(a.cluster().fenceEpoch()).isZero();
        a.cluster().checkLease(); // unfenced: nothing to check
        a.cluster().confirmLease();
        RaidLease lease = RaidLease.acquire(a.cluster(), "raid-a", TTL);
        Cluster other = config.cluster();
        lease.fence(other);
        assertThat(other.fenceEpoch()).isEqualTo(lease.epoch()).isPositive();
        lease.confirm();
        lease.close();
        assertThat(a.cluster().fenceEpoch()).isZero();
        assertThat(other.fenceEpoch()).isZero();
        assertThatThrownBy(lease::check).isInstanceOf(RaidLease.LostException.class).hasMessageContaining("released");
        // Unfenced again, as before any lease: a plain encode commits.
        int volume = cluster.writeVolume(10, 1000);
        a.encode(volume);
        assertThat(cluster.directory.directory().volume(volume).state()).isEqualTo(VolumeState.ERASURE_CODED);
    }
}
