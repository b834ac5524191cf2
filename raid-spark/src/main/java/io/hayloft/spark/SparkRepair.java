package io.hayloft.spark;

import io.hayloft.raid.BlockFixer;
import io.hayloft.raid.Cluster;
import io.hayloft.raid.RaidConfig;
import io.hayloft.raid.RaidLease;
import java.io.PrintStream;
import java.util.Locale;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Rebuilds every lost or corrupt block of the cold tier on a Spark cluster, one Spark task per damaged
 * stripe ({@code hayloft raid fix} on Spark; docs/raid.md "Spark"):
 * <pre>
 * spark-submit --class io.hayloft.spark.SparkRepair raid-spark/target/hayloft-raid-spark.jar \
 *     --directory H:P[,H:P...] [--admin-token T] [--repair-bandwidth BYTES_PER_S] [connection options]
 * </pre>
 * (connection options: {@link JobOptions}). The driver takes the cluster's raid lease, scans every stripe map ({@link BlockFixer#scan()}),
 * then runs one {@code StripeRepairTask} per damaged stripe on the executors; each rebuilds its lost
 * blocks onto new stores and swaps them into the stripe map with a compare-and-set. Prints the same
 * summary line as {@code hayloft raid fix}, one {@code FAILED:} line per stripe that could not be
 * repaired, and the failed Spark task attempts. Exit 0 when every damaged stripe was repaired, 1 when
 * one was not, 2 on bad usage.
 *
 * <p>Not thread-safe; one run per JVM.
 */
public final class SparkRepair {

    private SparkRepair() {
    }

    public static void main(String[] argv) {
        int code;
        try {
            RaidConfig config = parse(argv);
            SparkConf conf = new SparkConf().setAppName("hayloft-repair").set("spark.speculation", "false");
            try (JavaSparkContext spark = new JavaSparkContext(conf)) {
                code = run(spark, config, System.out);
            }
        } catch (IllegalArgumentException e) {
            System.err.println("hayloft SparkRepair: " + e.getMessage());
            System.err.println("usage: SparkRepair " + JobOptions.USAGE + " [--repair-bandwidth BYTES_PER_S]");
            code = 2;
        }
        System.exit(code);
    }

    /**
     * Repairs every damaged stripe with tasks on {@code spark}.
     *
     * @return 0 when every damaged stripe was repaired, 1 otherwise
     */
    static int run(JavaSparkContext spark, RaidConfig config, PrintStream out) {
        Cluster cluster = config.cluster();
        try (SparkRunner runner = new SparkRunner(spark, 1); RaidLease lease = JobOptions.lease(cluster)) {
            BlockFixer.Report r = new BlockFixer(cluster, config).repairAll(runner);
            double secs = r.nanos() / 1e9;
            out.printf(Locale.ROOT, "%d stripes, %d blocks rebuilt in %.2f s; %d bytes read, %d written "
                            + "(%.2f bytes read per byte rebuilt)%n", r.stripes(), r.blocks(), secs, r.bytesRead(),
                    r.bytesWritten(), r.readAmplification());
            r.failures().forEach(f -> out.println("FAILED: " + f));
            runner.printRetries(out);
            return r.failures().isEmpty() ? 0 : 1;
        } catch (Exception e) {
            out.println("repair failed: " + e);
            return 1;
        }
    }

    /** @throws IllegalArgumentException naming the bad argument */
    static RaidConfig parse(String[] argv) {
        RaidConfig c = new RaidConfig();
        for (int i = 0; i < argv.length; i++) {
            int last = JobOptions.apply(c, argv, i);
            if (last >= 0) {
                i = last;
            } else if (argv[i].equals("--repair-bandwidth")) {
                c.repairBytesPerSecondPerStore = JobOptions.longNumber(argv, ++i, argv[i - 1]);
                if (c.repairBytesPerSecondPerStore < 0) {
                    throw new IllegalArgumentException("--repair-bandwidth must be >= 0, was " + c.repairBytesPerSecondPerStore);
                }
            } else {
                throw new IllegalArgumentException(argv[i].startsWith("-") ? "unknown option '" + argv[i] + "'"
                        : "unexpected argument '" + argv[i] + "': SparkRepair repairs every damaged stripe");
            }
        }
        return c.validate();
    }
}
