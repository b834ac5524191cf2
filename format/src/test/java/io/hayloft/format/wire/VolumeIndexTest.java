package io.hayloft.format.wire;

import java.util.Arrays;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.junit.jupiter.api.Test;

/**
 * The exact cold index against a reference model (a map keyed by the exact (key, alt) pair), with
 * keys and alternate keys over their whole range, and every malformed block refused by name.
 */
class VolumeIndexTest {

    /** A volume image's worth of needles: (key, alt, size) laid out back to back from offset 32. */
    private static List<VolumeIndex.Entry> layout(List<Tuple.Tuple3<Long, Integer, Integer>> needles, Random r) {
        List<VolumeIndex.Entry> out = new ArrayList<>();
        long at = VolumeIndex.FIRST_NEEDLE_OFFSET;
        for (var n : needles) {
            int len = VolumeIndex.needleLength(n.get3());
            out.add(new VolumeIndex.Entry(n.get1(), n.get2(), r.nextInt(8) == 0 ? VolumeIndex.FLAG_DELETED : 0, at, len,
                    n.get3(), r.nextInt()));
            at += len;
        }
        return out;
    }

    @Provide
    Arbitrary<List<Tuple.Tuple3<Long, Integer, Integer>>> needles() {
        Arbitrary<Long> keys = Arbitraries.oneOf(Arbitraries.longs(), Arbitraries.longs().between(0, 40),
                Arbitraries.of(0L, 1L, -1L, Long.MIN_VALUE, Long.MAX_VALUE));
        Arbitrary<Integer> alts = Arbitraries.oneOf(Arbitraries.integers(), Arbitraries.integers().between(0, 70),
                Arbitraries.of(0, 31, 62, 1000, -1, Integer.MIN_VALUE, Integer.MAX_VALUE));
        Arbitrary<Integer> sizes = Arbitraries.oneOf(Arbitraries.integers().between(0, 300), Arbitraries.of(0, 1, 7, 8, 4096));
        return net.jqwik.api.Combinators.combine(keys, alts, sizes).as(Tuple::of).list().ofMaxSize(300);
    }

    @Property(tries = 300)
    void everyPairIsFoundExactlyAndSurvivesTheBlock(@ForAll("needles") List<Tuple.Tuple3<Long, Integer, Integer>> needles,
                                                    @ForAll long seed) throws Exception {
        List<VolumeIndex.Entry> entries = layout(needles, new Random(seed));
        Map<String, VolumeIndex.Entry> model = new HashMap<>(); // exact pair -> newest needle
        for (VolumeIndex.Entry e : entries) {
            model.put(e.key() + "/" + e.alt(), e); // laid out in offset order: the later needle wins
        }
        VolumeIndex built = VolumeIndex.of(7, entries);
        VolumeIndex read = VolumeIndex.decode(built.encode(), "b", entries.isEmpty() ? 0 : last(entries));
        for (VolumeIndex x : List.of(built, read)) {
            assertThat(x.size()).isEqualTo(model.size());
            for (VolumeIndex.Entry e : model.values()) {
                assertThat(x.find(e.key(), e.alt())).as("needle %s", VolumeIndex.name(e)).isEqualTo(e);
            }
            for (VolumeIndex.Entry e : entries) { // neighbours of every pair are absent unless written
                for (long dk = -1; dk <= 1; dk++) {
                    for (int da : new int[] {-31, -1, 0, 1, 31}) {
                        long k = e.key() + dk;
                        int a = e.alt() + da;
                        assertThat(x.find(k, a)).isEqualTo(model.get(k + "/" + a));
                    }
                }
            }
            assertThat(VolumeIndex.difference(x, built, true)).isNull();
        }
    }

    private static long last(List<VolumeIndex.Entry> es) {
        VolumeIndex.Entry e = es.get(es.size() - 1);
        return e.offset() + e.length();
    }

    @Test
    void pairsThatCollidedInVersionOneAreAllKept() throws Exception {
        // key * 31 + alt: (k, 31) and (k + 1, 0) shared a slot, and one silently vanished
        List<VolumeIndex.Entry> es = new ArrayList<>();
        long at = 32;
        for (long k = 1; k <= 40; k++) {
            for (int alt : new int[] {0, 31, 62, 1000}) {
                es.add(new VolumeIndex.Entry(k, alt, 0, at, 48, 8, (int) (k * alt)));
                at += 48;
            }
        }
        VolumeIndex x = VolumeIndex.decode(VolumeIndex.of(1, es).encode(), "b", at);
        assertThat(x.size()).isEqualTo(160);
        for (VolumeIndex.Entry e : es) {
            assertThat(x.find(e.key(), e.alt())).isEqualTo(e);
        }
    }

    @Test
    void versionOneBlocksAreStillRead() throws Exception {
        ByteBuffer b = ByteBuffer.allocate(VolumeIndex.HEADER_SIZE + 2 * VolumeIndex.RECORD_SIZE_V1);
        b.putInt(VolumeIndex.MAGIC).putInt(1).putInt(3).putInt(2);
        b.putLong(5).putInt(1).putInt(0).putLong(80).putInt(48).putInt(8);
        b.putLong(5).putInt(0).putInt(1).putLong(32).putInt(48).putInt(8);
        VolumeIndex x = VolumeIndex.decode(b.array(), "old", 128);
        assertThat(x.version()).isEqualTo(1);
        assertThat(x.hasCrcs()).isFalse();
        assertThat(x.find(5, 1).offset()).isEqualTo(80);
        assertThat(x.find(5, 0).deleted()).isTrue();
        assertThat(x.liveCount()).isEqualTo(1);
        // a version 1 index has no CRCs: comparisons against it look at pairs, offsets and sizes only
        VolumeIndex rebuilt = VolumeIndex.of(3, List.of(new VolumeIndex.Entry(5, 1, 0, 80, 48, 8, 1234)));
        assertThat(VolumeIndex.difference(x, rebuilt, true)).isNull();
    }

    @Test
    void malformedBlocksAreRefusedNamingVolumeAndBlock() {
        byte[] good = VolumeIndex.of(9, List.of(new VolumeIndex.Entry(1, 2, 0, 32, 48, 8, 5),
                new VolumeIndex.Entry(3, 4, 0, 80, 48, 8, 6))).encode();
        assertThatThrownBy(() -> VolumeIndex.decode(new byte[5], "blk", 0)).isInstanceOf(VolumeIndex.IndexFormatException.class)
                .hasMessageContaining("index block blk").hasMessageContaining("bad magic");
        byte[] v3 = good.clone();
        ByteBuffer.wrap(v3).putInt(4, 3);
        assertThatThrownBy(() -> VolumeIndex.decode(v3, "blk", 0)).hasMessageContaining("index block blk of volume 9")
                .hasMessageContaining("format version 3");
        byte[] shortBlock = Arrays.copyOf(good, good.length - 1);
        assertThatThrownBy(() -> VolumeIndex.decode(shortBlock, "blk", 0)).hasMessageContaining("of volume 9")
                .hasMessageContaining("says 2 records");
        byte[] unsorted = good.clone();
        ByteBuffer.wrap(unsorted).putLong(16 + 40, 0); // the second record's key now sorts first
        assertThatThrownBy(() -> VolumeIndex.decode(unsorted, "blk", 0)).hasMessageContaining("not sorted");
        byte[] overlap = good.clone();
        ByteBuffer.wrap(overlap).putLong(16 + 40 + VolumeIndex.R_OFFSET, 40);
        assertThatThrownBy(() -> VolumeIndex.decode(overlap, "blk", 0)).hasMessageContaining("overlap");
        byte[] badLength = good.clone();
        ByteBuffer.wrap(badLength).putInt(16 + VolumeIndex.R_LENGTH, 56);
        assertThatThrownBy(() -> VolumeIndex.decode(badLength, "blk", 0)).hasMessageContaining("impossible place");
        assertThatThrownBy(() -> VolumeIndex.decode(good, "blk", 100)).hasMessageContaining("volume size 100");
        byte[] flags = good.clone();
        ByteBuffer.wrap(flags).putInt(16 + VolumeIndex.R_FLAGS, 6);
        assertThatThrownBy(() -> VolumeIndex.decode(flags, "blk", 0)).hasMessageContaining("unknown flags");
    }

    @Test
    void differenceNamesTheFirstMissingChangedOrExtraNeedle() {
        VolumeIndex.Entry a = new VolumeIndex.Entry(1, 31, 0, 32, 48, 8, 5);
        VolumeIndex.Entry b = new VolumeIndex.Entry(2, 0, 0, 80, 48, 8, 6);
        VolumeIndex.Entry gone = new VolumeIndex.Entry(3, 0, VolumeIndex.FLAG_DELETED, 128, 48, 8, 7);
        VolumeIndex source = VolumeIndex.of(1, List.of(a, b, gone));
        assertThat(VolumeIndex.difference(source, VolumeIndex.of(1, List.of(a, b)), true)).isNull();
        assertThat(VolumeIndex.difference(source, VolumeIndex.of(1, List.of(b)), true)).contains("needle 1/31").contains("missing");
        assertThat(VolumeIndex.difference(source, VolumeIndex.of(1, List.of(a, b.withCrc(9))), true)).contains("needle 2/0 differs");
        VolumeIndex.Entry moved = new VolumeIndex.Entry(2, 0, 0, 88, 48, 8, 6);
        assertThat(VolumeIndex.difference(source, VolumeIndex.of(1, List.of(a, moved)), true)).contains("differs");
        assertThat(VolumeIndex.difference(source, VolumeIndex.of(1, List.of(a, moved)), false)).isNull();
        VolumeIndex.Entry extra = new VolumeIndex.Entry(3, 0, 0, 128, 48, 8, 7);
        assertThat(VolumeIndex.difference(source, VolumeIndex.of(1, List.of(a, b, extra)), true)).contains("3/0 is live only");
        assertThat(VolumeIndex.difference(source, VolumeIndex.of(1, List.of(a, b, gone)), true)).isNull();
        // a rebuilt index may add live needles when asked only to keep the old ones
        assertThat(VolumeIndex.difference(source, VolumeIndex.of(1, List.of(a, b, extra)), true, false)).isNull();
        assertThat(VolumeIndex.difference(source, VolumeIndex.of(1, List.of(a, extra)), true, false)).contains("needle 2/0");
        VolumeIndex.Entry high = new VolumeIndex.Entry(-1L, -1, 0, 32, 48, 8, 1);
        assertThat(VolumeIndex.difference(VolumeIndex.of(1, List.of(high)), VolumeIndex.of(1, List.of()), true))
                .contains("needle 18446744073709551615/4294967295");
    }
}
