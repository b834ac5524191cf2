package io.hayloft.raid;

import io.hayloft.cold.ColdReader;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.HashMap;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hayloft.format.wire.StripeMap;
import io.hayloft.format.wire.VolumeIndex;
import io.hayloft.format.directory.VolumeState;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The cold index is exact over the whole (key, alt) domain, and an encode proves itself against the
 * replica before it commits: a model of every needle written (newest bytes per exact pair, or
 * deleted) must read back through the cold tier after the replicas are dropped.
 */
class ExactIndexTest extends ClusterFixture {

    /** The exact (volume, key, alt) triple → the bytes that must read back, or null for deleted. */
    final Map<String, byte[]> model = new LinkedHashMap<>();
    final Map<Long, String> cookies = new LinkedHashMap<>();

    private RaidNode raid(String codec, int k, int r, long block) {
        RaidConfig c = cluster.raidConfig(codec, block);
        c.k = k;
        c.r = r;
        c.indexReplicas = 2;
        runner = new ThreadPoolRunner(2);
        return new RaidNode(c, runner);
    }

    /** Puts one batch of (key, alt, data) to every replica of {@code a}'s volume. */
    private void put(TestCluster.Leased a, List<Object[]> needles) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream batch = new DataOutputStream(bytes);
        for (Object[] n : needles) {
            long key = (Long) n[0];
            int alt = (Integer) n[1];
            byte[] data = (byte[]) n[2];
            batch.writeLong(key);
            batch.writeLong(Long.parseUnsignedLong(cookies.get(key), 16));
            batch.writeInt(alt);
            batch.writeInt(data.length);
            batch.write(data);
            model.put(a.volume() + "/" + key + "/" + alt, data);
        }
        for (String replica : a.replicas()) {
            assertThat(cluster.send("POST", "http://" + replica + "/" + a.volume() + "/batch", bytes.toByteArray()))
                    .as("batch to %s", replica).isEqualTo(201);
        }
    }

    private TestCluster.Leased lease(int photos) {
        TestCluster.Leased a = cluster.lease(photos);
        for (TestCluster.Key p : a.photos()) {
            cookies.put(p.key(), p.cookie());
        }
        return a;
    }

    private void assertModelReads(ColdReader reader) throws Exception {
        for (Map.Entry<String, byte[]> e : model.entrySet()) {
            String[] ka = e.getKey().split("/");
            byte[] got = reader.get(Integer.parseInt(ka[0]), Long.parseLong(ka[1]), Integer.parseInt(ka[2]));
            assertThat(got).as("needle %s", e.getKey()).isEqualTo(e.getValue());
        }
    }

    /** The reproduction: 40 photos with alternate keys 0, 31, 62 and 1000; RS(2, 1), 64 KiB blocks. */
    @Test
    void alternateKeysAboveThirtyAllSurviveTheEncode() throws Exception {
        cluster = new TestCluster(dir, 4);
        TestCluster.Leased a = lease(40);
        Random rnd = new Random(1);
        List<Object[]> needles = new ArrayList<>();
        for (TestCluster.Key p : a.photos()) {
            for (int alt : new int[] {0, 31, 62, 1000}) {
                byte[] data = new byte[1 + rnd.nextInt(3000)];
                rnd.nextBytes(data);
                needles.add(new Object[] {p.key(), alt, data});
            }
        }
        put(a, needles);
        cluster.directory.directory().markReadOnly(a.volume(), "test");
        RaidNode raid = raid("rs", 2, 1, 65536);
        raid.encode(a.volume());
        assertThat(cluster.directory.directory().volume(a.volume()).replicas()).isEmpty();
        try (ColdReader reader = new ColdReader(raid.cluster())) {
            assertModelReads(reader);
            assertThat(reader.index(a.volume()).size()).isEqualTo(160);
        }
    }

    /**
     * Alternate keys over the whole 32-bit range (boundaries included), sizes from 0 to past a block,
     * overwrites and deletes on the replicas: every codec's cold volume holds exactly the model.
     */
    @ParameterizedTest
    @ValueSource(strings = {"rs", "hh-xor", "hh-xor+", "hh-nonxor"})
    void theWholeKeyDomainSurvivesEveryCodec(String codec) throws Exception {
        cluster = new TestCluster(dir, 7);
        long block = 8 << 10;
        Random rnd = new Random(codec.hashCode());
        TestCluster.Leased a = lease(30);
        int[] edges = {0, 1, 30, 31, 32, 62, 1000, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, -31};
        List<Object[]> needles = new ArrayList<>();
        for (TestCluster.Key p : a.photos()) {
            for (int i = 0; i < 4; i++) {
                int alt = rnd.nextBoolean() ? edges[rnd.nextInt(edges.length)] : rnd.nextInt();
                int size = switch (rnd.nextInt(5)) {
                    case 0 -> 0;
                    case 1 -> rnd.nextInt(8);
                    case 2 -> (int) block + rnd.nextInt(64); // crosses a block boundary
                    default -> rnd.nextInt(2000);
                };
                byte[] data = new byte[size];
                rnd.nextBytes(data);
                needles.add(new Object[] {p.key(), alt, data});
            }
        }
        put(a, needles);
        List<Object[]> again = new ArrayList<>(); // overwrites of some pairs: the newer needle wins
        for (int i = 0; i < needles.size(); i += 7) {
            byte[] data = new byte[rnd.nextInt(500)];
            rnd.nextBytes(data);
            again.add(new Object[] {needles.get(i)[0], needles.get(i)[1], data});
        }
        put(a, again);
        for (int i = 3; i < needles.size(); i += 11) { // deletes of single needles on every replica
            long key = (Long) needles.get(i)[0];
            int alt = (Integer) needles.get(i)[1];
            for (String replica : a.replicas()) {
                cluster.send("DELETE", "http://" + replica + "/" + a.volume() + "/" + Long.toUnsignedString(key) + "/"
                        + Integer.toUnsignedString(alt) + "?cookie=" + cookies.get(key), null);
            }
            model.put(a.volume() + "/" + key + "/" + alt, null);
        }
        cluster.directory.directory().markReadOnly(a.volume(), "test");
        RaidNode raid = raid(codec, 4, 2, block);
        EncodeJob.Result res = raid.encode(a.volume());
        assertThat(res.stripes()).isGreaterThanOrEqualTo(2);
        try (ColdReader reader = new ColdReader(raid.cluster())) {
            assertModelReads(reader);
            VolumeIndex index = reader.index(a.volume());
            assertThat(index.liveCount()).isEqualTo(model.values().stream().filter(v -> v != null).count());
        }
    }

    /**
     * A needle deleted on the replica after the stripes read it, without the delete in the directory's
     * log (a client logs first; see {@code ReplicaOrderEncodeTest} for that case): the built index has
     * one live needle more than the replica's own, so the encode aborts naming it, rolls back, and
     * keeps the replicas.
     */
    @Test
    void anIndexThatDiffersFromTheReplicaAbortsTheEncodeAndKeepsTheReplicas() throws Exception {
        cluster = new TestCluster(dir, 4);
        TestCluster.Leased a = lease(10);
        List<Object[]> needles = new ArrayList<>();
        for (TestCluster.Key p : a.photos()) {
            needles.add(new Object[] {p.key(), 31, new byte[] {1, 2, 3}});
        }
        put(a, needles);
        cluster.directory.directory().markReadOnly(a.volume(), "test");
        RaidNode raid = raid("rs", 2, 1, 65536);
        long victim = (Long) needles.get(4)[0];
        AtomicBoolean deleted = new AtomicBoolean();
        Checkpoints deleteOnReplicas = step -> {
            if (step.equals("stripe-0") && deleted.compareAndSet(false, true)) {
                try {
                    for (String replica : a.replicas()) {
                        cluster.send("DELETE", "http://" + replica + "/" + a.volume() + "/" + victim + "/31?cookie="
                                + cookies.get(victim), null);
                    }
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            }
        };
        assertThatThrownBy(() -> raid.encode(a.volume(), deleteOnReplicas)).isInstanceOf(EncodeJob.IndexMismatchException.class)
                .hasMessageContaining("needle " + victim + "/31 is live only in the built index")
                .hasMessageContaining("the replicas are kept");
        assertThat(cluster.directory.directory().volume(a.volume()).state()).isEqualTo(VolumeState.READ_ONLY);
        assertThat(cluster.directory.directory().volume(a.volume()).replicas()).hasSize(a.replicas().size());
        assertThat(raid.cluster().stripeMap(a.volume())).isNull();
        assertThat(cluster.allBlocks()).isEmpty();
    }

    /** The readers' cache of maps and indexes holds at most the bytes it was given, and reads stay exact past it. */
    @Test
    void theIndexCacheIsBoundedByBytes() throws Exception {
        cluster = new TestCluster(dir, 4);
        RaidNode raid = raid("rs", 2, 1, 65536);
        List<Integer> volumes = new ArrayList<>();
        for (int v = 0; v < 3; v++) {
            TestCluster.Leased a = lease(50);
            List<Object[]> needles = new ArrayList<>();
            for (TestCluster.Key p : a.photos()) {
                needles.add(new Object[] {p.key(), 7, new byte[] {(byte) v, 1}});
            }
            put(a, needles);
            cluster.directory.directory().markReadOnly(a.volume(), "test");
            raid.encode(a.volume());
            volumes.add(a.volume());
        }
        long one;
        try (ColdReader probe = new ColdReader(raid.cluster())) {
            probe.index(volumes.get(0));
            one = probe.cachedBytes();
        }
        assertThat(one).isPositive();
        try (ColdReader reader = new ColdReader(raid.cluster(), ColdReader.DEFAULT_HEDGE_MILLIS, one + one / 2)) {
            for (int round = 0; round < 2; round++) {
                assertModelReads(reader);
                assertThat(reader.cachedBytes()).isLessThanOrEqualTo(one + one / 2);
            }
        }
    }

    /**
     * A data block cut short on disk is read around (degraded, exact bytes); index copies damaged on
     * every holder are a clear error naming the volume and the index block, never a wrong photo.
     */
    @Test
    void shortBlocksAndBadIndexesAreClearErrorsNeverWrongPhotos() throws Exception {
        cluster = new TestCluster(dir, 4);
        TestCluster.Leased a = lease(40);
        Random rnd = new Random(3);
        List<Object[]> needles = new ArrayList<>();
        for (TestCluster.Key p : a.photos()) {
            byte[] data = new byte[rnd.nextInt(4000)];
            rnd.nextBytes(data);
            needles.add(new Object[] {p.key(), 1000, data});
        }
        put(a, needles);
        cluster.directory.directory().markReadOnly(a.volume(), "test");
        RaidNode raid = raid("rs", 2, 1, 16 << 10);
        raid.encode(a.volume());
        StripeMap map = raid.cluster().stripeMap(a.volume());
        StripeMap.Block data = map.stripes().get(0).blocks().get(0);
        try (FileChannel ch = FileChannel.open(blockFile(data.store(), data.name()),
                StandardOpenOption.WRITE)) {
            ch.truncate(data.length() / 2);
        }
        try (ColdReader reader = new ColdReader(raid.cluster())) {
            assertModelReads(reader);
            assertThat(reader.degradedReads()).isPositive();
        }
        for (String holder : map.index().holders()) {
            Path f = blockFile(holder, map.index().name());
            byte[] bad = Files.readAllBytes(f);
            ByteBuffer.wrap(bad).putInt(4, 3); // a version this build does not read
            Files.write(f, bad);
        }
        try (ColdReader reader = new ColdReader(raid.cluster())) {
            long key = (Long) needles.get(0)[0];
            assertThatThrownBy(() -> reader.get(a.volume(), key, 1000)).isInstanceOf(IOException.class)
                    .hasMessageContaining("volume " + a.volume()).hasMessageContaining(map.index().name());
        }
    }

    private Path blockFile(String store, String name) throws Exception {
        try (var s = Files.walk(cluster.dir.resolve(store))) {
            return s.filter(p -> p.getFileName().toString().equals(name + ".blk")).findFirst().orElseThrow();
        }
    }

    /** The index block as builds before format version 2 wrote it: keyed by {@code key * 31 + alt}, colliding pairs lost. */
    static byte[] versionOneWithCollisions(VolumeIndex built) {
        Map<Long, VolumeIndex.Entry> slots = new HashMap<>();
        for (VolumeIndex.Entry e : built.entries()) {
            VolumeIndex.Entry had = slots.get(e.key() * 31 + e.alt());
            if (had == null || had.offset() < e.offset()) {
                slots.put(e.key() * 31 + e.alt(), e);
            }
        }
        List<VolumeIndex.Entry> es = new ArrayList<>(slots.values());
        es.sort(Comparator.comparingLong(VolumeIndex.Entry::offset));
        ByteBuffer b = ByteBuffer.allocate(VolumeIndex.HEADER_SIZE + VolumeIndex.RECORD_SIZE_V1 * es.size());
        b.putInt(VolumeIndex.MAGIC).putInt(VolumeIndex.VERSION_1).putInt(built.volume()).putInt(es.size());
        for (VolumeIndex.Entry e : es) {
            b.putLong(e.key()).putInt(e.alt()).putInt(e.flags()).putLong(e.offset()).putInt(e.length()).putInt(e.dataSize());
        }
        return b.array();
    }

    /**
     * A volume encoded before indexes were exact (a version 1 index that lost colliding pairs): its
     * lost needles do not read, reclaim refuses it, and {@code reindex} rebuilds an exact index from
     * the stripes so that every needle reads again.
     */
    @Test
    void aVersionOneIndexIsRefusedByReclaimAndReindexRecoversItsLostNeedles() throws Exception {
        cluster = new TestCluster(dir, 4);
        TestCluster.Leased a = lease(40);
        Random rnd = new Random(5);
        List<Object[]> needles = new ArrayList<>();
        for (TestCluster.Key p : a.photos()) {
            for (int alt : new int[] {0, 31, 62, 1000}) {
                byte[] data = new byte[rnd.nextInt(2000)];
                rnd.nextBytes(data);
                needles.add(new Object[] {p.key(), alt, data});
            }
        }
        put(a, needles);
        cluster.directory.directory().markReadOnly(a.volume(), "test");
        RaidNode raid = raid("rs", 2, 1, 65536);
        EncodeJob old = new EncodeJob(raid.cluster(), raid.config(), Checkpoints.NONE);
        old.indexEncoder = ExactIndexTest::versionOneWithCollisions;
        old.encode(a.volume());
        int lost = 0;
        try (ColdReader reader = new ColdReader(raid.cluster())) {
            assertThat(reader.index(a.volume()).version()).isEqualTo(1);
            for (Object[] n : needles) {
                if (reader.get(a.volume(), (Long) n[0], (Integer) n[1]) == null) {
                    lost++;
                }
            }
        }
        assertThat(lost).as("needles a version 1 index lost").isPositive();
        assertThatThrownBy(() -> raid.reclaim(a.volume(), 0)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("format version 1").hasMessageContaining("hayloft raid reindex " + a.volume());

        ReclaimJob.Result r = raid.reindex(a.volume());
        assertThat(r.reclaimed()).isTrue();
        try (ColdReader reader = new ColdReader(raid.cluster())) {
            assertThat(reader.index(a.volume()).version()).isEqualTo(VolumeIndex.VERSION);
            assertModelReads(reader);
        }
        cluster.assertOnlyMappedBlocks(raid.cluster(), "after the reindex");
    }
}
