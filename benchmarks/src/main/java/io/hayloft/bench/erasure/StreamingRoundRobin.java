package io.hayloft.bench.erasure;

import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import io.hayloft.erasure.UnitReader;
import io.hayloft.erasure.UnitWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The streaming encode's HH ÷ RS ratios the way {@link RoundRobin} gets ratios that survive a shared
 * machine: for each backend and unit size, the four codecs take turns, one encode of a (10,4) stripe
 * each per round, in one JVM and one thread, so every codec sees the same background load. Each
 * encode is timed by the thread's own CPU time (native calls included) and by the wall clock; a
 * codec's figure is its median round. Data as {@link StreamingEncodeBench} reads it (copied from a
 * 64 MiB random buffer; parity discarded), the codec's default chunk size.
 *
 * <p>{@code java --add-modules jdk.incubator.vector -cp hayloft-benchmarks.jar
 * io.hayloft.bench.erasure.StreamingRoundRobin [backends=native,vector] [units=64k,1m,16m,256m] [seconds=12]}.
 * Prints one line per (backend, unit, codec): MB/s of data by CPU time and by wall clock, and the
 * ratio to RS by each. Single-threaded; not a library.
 */
public final class StreamingRoundRobin {
    private static final int K = StreamingEncodeBench.K;
    private static final int R = StreamingEncodeBench.R;
    private static final String[] CODECS = {"rs", "hh-xor+", "hh-xor", "hh-nonxor"};

    private StreamingRoundRobin() {
    }

    public static void main(String[] args) throws Exception {
        String[] backends = (args.length > 0 ? args[0] : "native,vector").split(",");
        String[] units = (args.length > 1 ? args[1] : "64k,1m,16m,256m").split(",");
        double seconds = args.length > 2 ? Double.parseDouble(args[2]) : 12;
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        ByteBuffer source = StreamingEncodeBench.randomSource();
        UnitReader reader = StreamingEncodeBench.reader(source);
        UnitWriter writer = (u, offset, src) -> src.position(src.limit());
        System.out.printf(Locale.ROOT, "%-8s %-6s %-10s %7s %12s %12s %10s %10s%n", "backend", "unit", "codec", "rounds",
                "cpu MB/s", "wall MB/s", "cpu ÷ rs", "wall ÷ rs");
        for (String backend : backends) {
            for (String unit : units) {
                long unitSize = StreamingEncodeBench.parseSize(unit);
                // Encodes per turn: about 64 MiB of data, at least one.
                int perTurn = (int) Math.max(1, (64L << 20) / (K * unitSize));
                Map<String, ErasureCodec> codes = new LinkedHashMap<>();
                for (String c : CODECS) {
                    codes.put(c, ErasureCodec.create(CodecKind.fromWireName(c), K, R, StripeState.kernel(backend),
                            ErasureCodec.DEFAULT_CHUNK_SIZE));
                }
                try {
                    for (ErasureCodec code : codes.values()) { // warm-up turn
                        code.encode(unitSize, reader, writer);
                    }
                    Map<String, List<long[]>> times = new LinkedHashMap<>();
                    long end = System.nanoTime() + (long) (seconds * 1e9);
                    int rounds = 0;
                    while (rounds < 3 || System.nanoTime() < end) {
                        for (Map.Entry<String, ErasureCodec> e : codes.entrySet()) {
                            long cpu0 = threads.getCurrentThreadCpuTime();
                            long wall0 = System.nanoTime();
                            for (int i = 0; i < perTurn; i++) {
                                e.getValue().encode(unitSize, reader, writer);
                            }
                            times.computeIfAbsent(e.getKey(), x -> new ArrayList<>())
                                    .add(new long[] {threads.getCurrentThreadCpuTime() - cpu0, System.nanoTime() - wall0});
                        }
                        rounds++;
                    }
                    double bytes = (double) K * unitSize * perTurn;
                    double rsCpu = 0;
                    double rsWall = 0;
                    for (Map.Entry<String, List<long[]>> e : times.entrySet()) {
                        double cpu = bytes / 1e6 / (median(e.getValue(), 0) / 1e9);
                        double wall = bytes / 1e6 / (median(e.getValue(), 1) / 1e9);
                        if (e.getKey().equals("rs")) {
                            rsCpu = cpu;
                            rsWall = wall;
                        }
                        System.out.printf(Locale.ROOT, "%-8s %-6s %-10s %7d %12.0f %12.0f %10.2f %10.2f%n", backend, unit, e.getKey(),
                                e.getValue().size(), cpu, wall, cpu / rsCpu, wall / rsWall);
                    }
                } finally {
                    codes.values().forEach(ErasureCodec::close);
                }
            }
        }
    }

    private static double median(List<long[]> rounds, int field) {
        long[] v = rounds.stream().mapToLong(r -> r[field]).toArray();
        Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2.0;
    }
}
