package io.hayloft.cli.cluster;

import io.hayloft.client.Futures;
import io.hayloft.format.directory.VolumeInfo;
import io.hayloft.format.wire.Wire;
import io.hayloft.raid.DrainJob;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.client.HayloftClient;
import io.hayloft.client.PhotoNotFoundException;
import io.hayloft.client.PutResult;
import io.hayloft.client.Upload;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.format.wire.StripeMap;
import io.hayloft.raid.Cluster;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidNode;
import io.hayloft.raid.ThreadPoolRunner;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code hayloft stores drain} on an embedded cluster of 8 stores on 4 racks holding writable and
 * read-only replicated volumes and RS(3,2)-coded volumes, photos with alternate keys across the whole
 * range, empty and large, some deleted: after the drain the store holds nothing the directory lists
 * and the directory lists nothing on it, it is DRAINED, every photo reads back bit-exact (also with
 * the drained store stopped) and every deleted one stays deleted. Also with the store down (replicas
 * copied from the other replicas, blocks rebuilt) and after interrupted drains (a rerun finishes and
 * leaves no stray copy).
 */
class DrainTest {
    @TempDir
    Path dir;

    private static final int[] ALTS = {0, 3, 7, 0x7fffffff, 0xffffffff};

    /** What the cluster should hold: each photo's bytes, and the deleted ones. */
    private static final class Model {
        final Map<PhotoId, byte[]> live = new LinkedHashMap<>();
        final List<PhotoId> deleted = new ArrayList<>();
    }

    private EmbeddedCluster start() throws Exception {
        return EmbeddedCluster.start(ClusterOptions.of(dir.resolve("cluster")).withStores(8, 4).withFsync(false)
                .withTiming(200, 60_000, 3));
    }

    private RaidConfig config(EmbeddedCluster cluster) {
        RaidConfig c = new RaidConfig();
        c.directory = cluster.directoryAddress();
        c.codec = "rs";
        c.k = 3;
        c.r = 2;
        c.blockSize = 16 << 10;
        c.transferBytes = 16 << 10;
        c.spoolDir = dir.toString();
        return c;
    }

    private static void putSome(HayloftClient client, Random random, int photos, Model model) {
        for (int i = 0; i < photos; i++) {
            Upload u = Upload.empty();
            List<Integer> alts = new ArrayList<>();
            for (int a : ALTS) {
                if (alts.isEmpty() || random.nextInt(3) == 0) {
                    alts.add(a);
                }
            }
            Map<Integer, byte[]> data = new HashMap<>();
            for (int a : alts) {
                int pick = random.nextInt(10);
                byte[] b = new byte[pick == 0 ? 0 : pick == 1 ? 60_000 + random.nextInt(40_000) : random.nextInt(3000)];
                random.nextBytes(b);
                u.alt(a, b);
                data.put(a, b);
            }
            for (PutResult p : client.put(u)) {
                model.live.put(p.id(), data.get(p.id().alt()));
            }
        }
    }

    /**
     * Coded volumes (batch A, encoded), a read-only replicated volume and writable ones (batches B, C),
     * every fourth photo of each batch deleted.
     */
    private Model populate(EmbeddedCluster cluster, HayloftClient client, RaidNode raid) throws Exception {
        Random random = new Random(42);
        Model model = new Model();
        putSome(client, random, 24, model);
        Set<Integer> first = new TreeSet<>();
        model.live.keySet().forEach(p -> first.add(p.volume()));
        for (int v : first) {
            cluster.directory().directory().markReadOnly(v, "test");
            raid.encode(v);
        }
        Model b = new Model();
        putSome(client, random, 16, b);
        int sealed = b.live.keySet().iterator().next().volume();
        cluster.directory().directory().markReadOnly(sealed, "test");
        putSome(client, random, 10, b);
        model.live.putAll(b.live);
        Set<Long> keys = new TreeSet<>();
        model.live.keySet().forEach(p -> keys.add(p.key()));
        int i = 0;
        for (long k : keys) {
            if (i++ % 4 == 1) {
                PhotoId any = model.live.keySet().stream().filter(p -> p.key() == k).findFirst().orElseThrow();
                client.delete(any);
                // Cold readers go by the volume's delete log alone: log it as the client will (idempotent).
                Futures.await(client.directory().logDeletes(any.volume(), List.of(
                        new Wire.DeleteEntry(0, k, String.format("%016x", any.cookie()), 1))));
                model.live.keySet().stream().filter(p -> p.key() == k).forEach(model.deleted::add);
            }
        }
        model.deleted.forEach(model.live::remove);
        return model;
    }

    /** The store holding the most replicas and blocks, among those with a writable replica and a block. */
    private static String busiest(EmbeddedCluster cluster, Cluster c) throws Exception {
        Map<String, Integer> score = new HashMap<>();
        Set<String> writable = new HashSet<>();
        Set<String> blocks = new HashSet<>();
        for (VolumeInfo v : c.volumes()) {
            for (String r : v.replicas()) {
                score.merge(r, 1, Integer::sum);
                if (v.state().writable()) {
                    writable.add(r);
                }
            }
        }
        for (StripeMap m : c.stripeMaps()) {
            for (StripeMap.Block b : m.allBlocks()) {
                score.merge(b.store(), 1, Integer::sum);
                blocks.add(b.store());
            }
        }
        return score.entrySet().stream().filter(e -> writable.contains(e.getKey()) && blocks.contains(e.getKey()))
                .max(Map.Entry.comparingByValue()).orElseThrow(() -> new AssertionError("no store with a writable replica and a block"))
                .getKey();
    }

    private static int index(String storeId) {
        return Integer.parseInt(storeId.substring("store-".length()));
    }

    private static OperatorVerbsTest.Run drain(EmbeddedCluster cluster, String store) {
        return OperatorVerbsTest.run(cluster, "stores", "drain", store, "--progress");
    }

    /** Nothing of the directory's on the store and nothing listed there; DRAINED; every photo as the model says. */
    private static void assertDrained(EmbeddedCluster cluster, Cluster c, HayloftClient client, String store, Model model)
            throws Exception {
        String state = cluster.directory().directory().stores().stream().filter(s -> s.id().equals(store)).findFirst()
                .orElseThrow().state().name();
        assertThat(state).isEqualTo("DRAINED");
        int replicated = 0;
        for (VolumeInfo v : c.volumes()) {
            List<String> replicas = v.replicas();
            assertThat(replicas).as("volume %s", v.id()).doesNotContain(store).doesNotHaveDuplicates();
            if (!replicas.isEmpty()) {
                replicated++;
                assertThat(replicas).as("volume %s", v.id()).hasSize(3);
                for (String r : replicas) {
                    assertThat(c.storeVolume(cluster.storeAddress(index(r)), v.id())).as("%s holds %s", r, v.id())
                            .isNotNull();
                }
            }
        }
        assertThat(replicated).isGreaterThan(0);
        Set<String> named = new HashSet<>();
        for (StripeMap m : c.stripeMaps()) {
            for (StripeMap.Block b : m.allBlocks()) {
                assertThat(b.store()).as("block %s of volume %d", b.name(), m.volume()).isNotEqualTo(store);
                named.add(b.store() + "/" + b.name());
            }
            for (StripeMap.Stripe s : m.stripes()) {
                assertThat(s.blocks().stream().map(StripeMap.Block::store).distinct().count()).isEqualTo(s.blocks().size());
            }
        }
        for (int i = 0; i < cluster.storeCount(); i++) {
            if (cluster.store(i) == null) {
                continue;
            }
            String id = EmbeddedCluster.storeId(i);
            Set<Integer> held = c.storeVolumes(cluster.storeAddress(i));
            for (VolumeInfo v : c.volumes()) {
                boolean listed = v.replicas().contains(id);
                assertThat(held.contains(v.id())).as("%s holds volume %s", id, v.id()).isEqualTo(listed);
            }
            for (String name : c.listBlocks(cluster.storeAddress(i)).keySet()) {
                assertThat(named).as("block %s on %s", name, id).contains(id + "/" + name);
            }
        }
        assertReads(client, model);
    }

    private static void assertReads(HayloftClient client, Model model) {
        for (Map.Entry<PhotoId, byte[]> e : model.live.entrySet()) {
            assertThat(client.get(e.getKey())).as("photo %s", e.getKey()).isEqualTo(e.getValue());
        }
        for (PhotoId id : model.deleted) {
            assertThatThrownBy(() -> client.get(id)).as("deleted photo %s", id).isInstanceOf(PhotoNotFoundException.class);
        }
    }

    @Test
    void drainMovesEveryReplicaAndBlockOffAStore() throws Exception {
        try (EmbeddedCluster cluster = start(); HayloftClient client = cluster.newClient();
             ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            RaidNode raid = new RaidNode(config(cluster), runner);
            Model model = populate(cluster, client, raid);
            String store = busiest(cluster, raid.cluster());
            OperatorVerbsTest.Run r = drain(cluster, store);
            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out()).contains("store " + store + " DRAINED").doesNotContain("was down");
            assertThat(r.err()).contains("drain " + store).contains("100%");
            assertDrained(cluster, raid.cluster(), client, store, model);
            assertThat(raid.cluster().storeVolumes(cluster.storeAddress(index(store)))).isEmpty();
            // a drained store may go: nothing is read from it any more
            cluster.stopStore(index(store));
            assertReads(client, model);
            // new volumes never land on it; a second drain is a no-op
            try (HayloftClient fresh = cluster.newClient()) {
                for (int i = 0; i < 20; i++) {
                    int v = fresh.put(new byte[] {(byte) i}).id().volume();
                    assertThat(raid.cluster().volume(v).replicas()).doesNotContain(store);
                }
            }
            r = drain(cluster, store);
            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out()).contains("0 replicas moved, 0 blocks copied, 0 rebuilt");
        }
    }

    @Test
    void drainOfAStoppedStoreCopiesFromOtherReplicasAndRebuildsBlocks() throws Exception {
        try (EmbeddedCluster cluster = start(); HayloftClient client = cluster.newClient();
             ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            RaidNode raid = new RaidNode(config(cluster), runner);
            Model model = populate(cluster, client, raid);
            String store = busiest(cluster, raid.cluster());
            cluster.stopStore(index(store));
            OperatorVerbsTest.Run r = drain(cluster, store);
            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out()).contains("store " + store + " DRAINED (it was down)").contains("0 blocks copied");
            assertThat(r.out()).doesNotContain(" 0 rebuilt");
            assertDrained(cluster, raid.cluster(), client, store, model);
        }
    }

    @Test
    void anInterruptedDrainFinishesWhenRunAgain() throws Exception {
        try (EmbeddedCluster cluster = start(); HayloftClient client = cluster.newClient();
             ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            RaidNode raid = new RaidNode(config(cluster), runner);
            Model model = populate(cluster, client, raid);
            String store = busiest(cluster, raid.cluster());
            int crashes = 0;
            for (String at : List.of("replica-copied", "replica-moved", "block-copied", "block-moved", "index-copied", "index-moved")) {
                if (!holds(raid.cluster(), store, at.substring(0, at.indexOf('-')))) {
                    continue; // nothing of that kind left on the store: the step cannot be reached
                }
                RaidNode crashing = new RaidNode(config(cluster), runner);
                crashing.checkpoints(step -> {
                    if (step.equals(at)) {
                        throw new Crash("crash at " + at);
                    }
                });
                assertThatThrownBy(() -> crashing.drain(store, DrainJob.Listener.NONE))
                        .isInstanceOf(Crash.class).hasMessageContaining("crash at " + at);
                crashes++;
                assertReads(client, model);
            }
            assertThat(crashes).isGreaterThanOrEqualTo(3);
            OperatorVerbsTest.Run r = drain(cluster, store);
            assertThat(r.exit()).as(r.err()).isZero();
            assertThat(r.out()).contains("store " + store + " DRAINED");
            assertDrained(cluster, raid.cluster(), client, store, model);
        }
    }

    /** A crash injected at a checkpoint (not an error the drain handles). */
    private static final class Crash extends RuntimeException {
        Crash(String message) {
            super(message);
        }
    }

    /** Whether the directory still lists a replica, a block or an index copy ({@code kind}) on {@code store}. */
    private static boolean holds(Cluster c, String store, String kind) throws Exception {
        if (kind.equals("replica")) {
            for (VolumeInfo v : c.volumes()) {
                if (v.replicas().contains(store)) {
                    return true;
                }
            }
            return false;
        }
        for (StripeMap m : c.stripeMaps()) {
            if (kind.equals("index") ? m.index().holders().contains(store)
                    : m.stripes().stream().anyMatch(s -> s.blocks().stream().anyMatch(b -> b.store().equals(store)))) {
                return true;
            }
        }
        return false;
    }
}
