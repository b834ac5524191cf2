package io.hayloft.spark;

import io.hayloft.raid.EncodeJob;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidLease;
import io.hayloft.raid.RaidNode;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Encodes volumes on a Spark cluster, one Spark task per stripe (docs/raid.md "Jobs and runners"):
 * <pre>
 * spark-submit --class io.hayloft.spark.SparkEncode raid-spark/target/hayloft-raid-spark.jar \
 *     --directory H:P[,H:P...] [--admin-token T] [--codec hh-xor+] [-k 10] [-r 4] [--block-size BYTES] \
 *     [--spool-dir DIR] [--volumes-at-once N] [connection options] (VOLUME... | --backlog)
 * </pre>
 * (connection options: {@link JobOptions}).
 * The driver takes the cluster's raid lease (as {@code hayloft raid} commands do), recovers interrupted work, plans each volume and records the plan in the directory,
 * runs its stripes on the executors, then writes the needle index, verifies and commits, exactly as
 * the embedded runner does. Exit 0 when every volume was encoded, 1 when one failed, 2 on bad usage.
 *
 * <p>Not thread-safe; one run per JVM.
 */
public final class SparkEncode {

    private SparkEncode() {
    }

    /** Parsed command line. */
    record Args(RaidConfig config, List<Integer> volumes, boolean backlog, int volumesAtOnce) {
    }

    public static void main(String[] argv) {
        int code;
        try {
            Args a = parse(argv);
            SparkConf conf = new SparkConf().setAppName("hayloft-encode").set("spark.speculation", "false");
            try (JavaSparkContext spark = new JavaSparkContext(conf)) {
                code = run(spark, a, System.out);
            }
        } catch (IllegalArgumentException e) {
            System.err.println("hayloft SparkEncode: " + e.getMessage());
            System.err.println("usage: SparkEncode " + JobOptions.USAGE + " [--codec C] [-k K] [-r R] [--block-size B]"
                    + " [--volumes-at-once N] (VOLUME... | --backlog)");
            code = 2;
        }
        System.exit(code);
    }

    /**
     * Encodes the volumes {@code a} names (or the backlog) with tasks on {@code spark}.
     *
     * @return 0 when every volume was encoded, 1 otherwise
     */
    static int run(JavaSparkContext spark, Args a, PrintStream out) {
        try (SparkRunner runner = new SparkRunner(spark, a.volumesAtOnce())) {
            RaidNode node = new RaidNode(a.config(), runner);
            try (RaidLease lease = JobOptions.lease(node.cluster())) {
                return encode(node, runner, a, out);
            }
        } catch (Exception e) {
            out.println("encode failed: " + e);
            return 1;
        }
    }

    private static int encode(RaidNode node, SparkRunner runner, Args a, PrintStream out) throws Exception {
        node.recover();
        List<Integer> volumes = a.backlog() ? node.backlog() : a.volumes();
        List<Callable<EncodeJob.Result>> jobs = new ArrayList<>();
        for (int v : volumes) {
            jobs.add(() -> node.encode(v));
        }
        int failed = 0;
        List<EncodeJob.Result> results;
        try {
            results = runner.runAll(jobs);
        } catch (Exception e) {
            out.println("encode failed: " + e.getMessage());
            failed++;
            results = List.of();
        }
        for (EncodeJob.Result r : results) {
            if (r != null) {
                double secs = r.nanos() / 1e9;
                out.printf(Locale.ROOT, "volume %d encoded as job %s: %d stripes, %d bytes in %.2f s (%.1f MB/s)%n",
                        r.volume(), r.job(), r.stripes(), r.volumeBytes(), secs, r.volumeBytes() / 1e6 / Math.max(secs, 1e-9));
            } else {
                failed++;
            }
        }
        out.printf(Locale.ROOT, "%d of %d volumes encoded%n", volumes.size() - Math.min(failed, volumes.size()), volumes.size());
        runner.printRetries(out);
        return failed == 0 ? 0 : 1;
    }

    /** @throws IllegalArgumentException naming the bad argument */
    static Args parse(String[] argv) {
        RaidConfig c = new RaidConfig();
        List<Integer> volumes = new ArrayList<>();
        boolean backlog = false;
        int atOnce = 2;
        for (int i = 0; i < argv.length; i++) {
            int last = JobOptions.apply(c, argv, i);
            if (last >= 0) {
                i = last;
                continue;
            }
            String arg = argv[i];
            switch (arg) {
                case "--codec" -> c.codec = JobOptions.value(argv, ++i, arg);
                case "-k" -> c.k = JobOptions.number(argv, ++i, arg);
                case "-r" -> c.r = JobOptions.number(argv, ++i, arg);
                case "--block-size" -> c.blockSize = JobOptions.longNumber(argv, ++i, arg);
                case "--volumes-at-once" -> atOnce = JobOptions.number(argv, ++i, arg);
                case "--backlog" -> backlog = true;
                default -> {
                    if (arg.startsWith("-")) {
                        throw new IllegalArgumentException("unknown option '" + arg + "'");
                    }
                    volumes.add(JobOptions.number(argv, i, "VOLUME"));
                }
            }
        }
        if (backlog == !volumes.isEmpty()) {
            throw new IllegalArgumentException("give either VOLUME ids or --backlog" + (backlog ? ", not both" : ""));
        }
        if (atOnce < 1) {
            throw new IllegalArgumentException("--volumes-at-once must be >= 1, was " + atOnce);
        }
        return new Args(c.validate(), volumes, backlog, atOnce);
    }
}
