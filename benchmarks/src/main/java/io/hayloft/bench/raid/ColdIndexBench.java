package io.hayloft.bench.raid;

import io.hayloft.format.wire.VolumeIndex;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The exact cold needle index (sorted primitive arrays, binary search) against the map the version 1
 * index used ({@code HashMap<Long, Entry>} keyed by {@code key * 31 + alt}, which lost colliding
 * pairs): a lookup of a random present needle, and loading a whole block. {@code n} needles with
 * random keys and alternate keys over their full range.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"-Xmx4g"})
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class ColdIndexBench {

    @Param({"100000", "1000000"})
    int n;

    VolumeIndex index;
    Map<Long, VolumeIndex.Entry> slotMap;
    byte[] block;
    long[] keys;
    int[] alts;
    int next;

    @Setup(Level.Trial)
    public void setup() {
        Random r = new Random(7);
        List<VolumeIndex.Entry> es = new ArrayList<>(n);
        keys = new long[n];
        alts = new int[n];
        long at = VolumeIndex.FIRST_NEEDLE_OFFSET;
        for (int i = 0; i < n; i++) {
            keys[i] = r.nextLong();
            alts[i] = r.nextInt();
            int size = r.nextInt(4096);
            es.add(new VolumeIndex.Entry(keys[i], alts[i], 0, at, VolumeIndex.needleLength(size), size, r.nextInt()));
            at += VolumeIndex.needleLength(size);
        }
        index = VolumeIndex.of(1, es);
        block = index.encode();
        slotMap = new HashMap<>();
        for (VolumeIndex.Entry e : es) {
            slotMap.put(e.key() * 31 + e.alt(), e);
        }
    }

    @Benchmark
    public VolumeIndex.Entry findExact() {
        int i = next = (next + 7919) % n;
        return index.find(keys[i], alts[i]);
    }

    @Benchmark
    public VolumeIndex.Entry findVersion1Map() {
        int i = next = (next + 7919) % n;
        VolumeIndex.Entry e = slotMap.get(keys[i] * 31 + alts[i]);
        return e != null && e.key() == keys[i] && e.alt() == alts[i] ? e : null;
    }

    @Benchmark
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public VolumeIndex decodeBlock() throws Exception {
        return VolumeIndex.decode(block, "bench", 0);
    }
}
