package io.hayloft.bench.erasure;

import io.hayloft.erasure.CodecKind;
import io.hayloft.erasure.ErasureCodec;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import org.apache.hadoop.io.erasurecode.ErasureCoderOptions;
import org.apache.hadoop.io.erasurecode.rawcoder.RSRawEncoder;

/**
 * Ratios that survive a noisy shared machine: the operations the goals compare (our RS encode, each
 * Hitchhiker encode, Hadoop's RS encode; RS and Hitchhiker repairs of units 0 and 9) run round-robin,
 * one operation each per round, in one JVM, so every operation sees the same background load; each is
 * summarised by its fastest and median round. JMH ({@code EncodeBench}, {@code RepairBench},
 * {@code HadoopBench}) gives the absolute figures with error bars; this gives the side-by-side ratios.
 *
 * <p>{@code java --add-modules jdk.incubator.vector -cp hayloft-benchmarks.jar
 * io.hayloft.bench.erasure.RoundRobin [backend=vector] [seconds=20]}. Single-threaded; not a library.
 */
public final class RoundRobin {

    private interface Op {
        void run() throws IOException;
    }

    private RoundRobin() {
    }

    public static void main(String[] args) throws Exception {
        String backend = args.length > 0 ? args[0] : "vector";
        double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 20;
        Map<String, Op> ops = new LinkedHashMap<>();
        List<AutoCloseable> closers = new ArrayList<>();
        for (CodecKind kind : CodecKind.values()) {
            StripeState s = new StripeState(backend, kind.wireName());
            closers.add(s.codec::close);
            ops.put("encode " + kind.wireName(), () -> s.codec.encode(s.data, s.parity));
        }
        byte[][] data = new byte[StripeState.K][StripeState.UNIT];
        Random rnd = new Random(1);
        for (byte[] d : data) {
            rnd.nextBytes(d);
        }
        byte[][] parity = new byte[StripeState.R][StripeState.UNIT];
        RSRawEncoder hadoop = new RSRawEncoder(new ErasureCoderOptions(StripeState.K, StripeState.R));
        ops.put("encode hadoop-rs", () -> hadoop.encode(data, parity));
        ByteBuffer rebuilt = ByteBuffer.allocate(StripeState.UNIT);
        for (CodecKind kind : CodecKind.values()) {
            StripeState s = new StripeState(backend, kind.wireName());
            closers.add(s.codec::close);
            for (int lost : new int[] {0, 9}) {
                ops.put("repair " + kind.wireName() + " unit " + lost, () -> s.codec.repair(StripeState.UNIT, lost, new int[0],
                        s.reader, (unit, offset, src) -> rebuilt.duplicate().position((int) offset).put(src)));
            }
        }
        List<String> names = new ArrayList<>(ops.keySet());
        List<long[]> times = new ArrayList<>();
        long[] buf = new long[names.size()];
        // Warm up (C2 must compile the vector loops) for a quarter of the time, then measure.
        long warmEnd = System.nanoTime() + (long) (seconds * 0.25e9);
        while (System.nanoTime() < warmEnd) {
            for (Op op : ops.values()) {
                op.run();
            }
        }
        long end = System.nanoTime() + (long) (seconds * 0.75e9);
        while (System.nanoTime() < end) {
            int i = 0;
            for (Op op : ops.values()) {
                long t0 = System.nanoTime();
                op.run();
                buf[i++] = System.nanoTime() - t0;
            }
            times.add(buf.clone());
        }
        for (AutoCloseable c : closers) {
            c.close();
        }
        System.out.printf(Locale.ROOT, "# backend %s (%s), JDK %s, %d rounds%n", backend,
                StripeState.kernel(backend).description(), Runtime.version(), times.size());
        double[] min = new double[names.size()];
        double[] med = new double[names.size()];
        for (int i = 0; i < names.size(); i++) {
            double[] col = new double[times.size()];
            for (int r = 0; r < times.size(); r++) {
                col[r] = times.get(r)[i] / 1e6;
            }
            Arrays.sort(col);
            min[i] = col[0];
            med[i] = col[col.length / 2];
            String gb = names.get(i).startsWith("encode")
                    ? String.format(Locale.ROOT, "  %.2f GB/s best, %.2f median", StripeState.K * StripeState.UNIT / min[i] / 1e6,
                            StripeState.K * StripeState.UNIT / med[i] / 1e6)
                    : "";
            System.out.printf(Locale.ROOT, "%-24s best %8.3f ms  median %8.3f ms%s%n", names.get(i), min[i], med[i], gb);
        }
        int rs = names.indexOf("encode rs");
        int hd = names.indexOf("encode hadoop-rs");
        System.out.printf(Locale.ROOT, "ratio encode rs / hadoop-rs speed: best %.1fx, median %.1fx%n", min[hd] / min[rs], med[hd] / med[rs]);
        for (String hh : new String[] {"hh-xor", "hh-xor+", "hh-nonxor"}) {
            int e = names.indexOf("encode " + hh);
            System.out.printf(Locale.ROOT, "ratio encode %s speed / rs speed: best %.2f, median %.2f, median of rounds %.2f%n", hh,
                    min[rs] / min[e], med[rs] / med[e], medianRatio(times, rs, e));
            for (int lost : new int[] {0, 9}) {
                int a = names.indexOf("repair rs unit " + lost);
                int b = names.indexOf("repair " + hh + " unit " + lost);
                System.out.printf(Locale.ROOT, "ratio repair unit %d %s time / rs time: best %.2f, median %.2f, median of rounds %.2f%n",
                        lost, hh, min[b] / min[a], med[b] / med[a], medianRatio(times, b, a));
            }
        }
    }

    /** The median over rounds of {@code time[num] / time[den]}: both measured back to back. */
    private static double medianRatio(List<long[]> times, int num, int den) {
        double[] r = new double[times.size()];
        for (int i = 0; i < r.length; i++) {
            r[i] = times.get(i)[num] / (double) times.get(i)[den];
        }
        Arrays.sort(r);
        return r[r.length / 2];
    }
}
