package io.hayloft.raid.spark;

import io.hayloft.raid.JobRunner;
import io.hayloft.raid.RaidTask;
import io.hayloft.raid.ThreadPoolRunner;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;

/**
 * Runs raid jobs on Apache Spark: the tasks of one job become one RDD with one partition per task
 * (one Spark task per stripe), mapped with {@link RaidTask#call()} on the executors and collected on
 * the driver. The driver then reports every result to the job's {@link JobRunner.Completion}, in task
 * order: on Spark, {@code stripe-N} checkpoints arrive together when the job ends.
 *
 * <p>A failed task is retried by Spark ({@code spark.task.maxFailures}); the tasks are idempotent.
 * When the job fails, Spark kills the tasks still running (interrupting them: the job group is
 * created with {@code interruptOnCancel}) but {@code collect} does not wait for them, so a late upload
 * can leave a block after the caller's rollback; it carries a planned name and the next
 * {@code RaidNode.recover()} sweeps it. Do not enable speculation for raid jobs.
 *
 * <p>Work that cannot leave the driver ({@link #runLocal}, {@link #runAll}: reclaim's local volume
 * images, one callable per volume) runs on an in-process {@link ThreadPoolRunner} of
 * {@code driverThreads} threads; the stripes of a volume encoded that way still go to Spark.
 *
 * <p>Thread-safe: Spark accepts jobs from several driver threads; each gets its own job group.
 */
public final class SparkRunner implements JobRunner {

    private static final AtomicLong JOBS = new AtomicLong();

    private final JavaSparkContext spark;
    private final ThreadPoolRunner local;

    /**
     * @param spark         the context to submit jobs to; the caller owns it and stops it
     * @param driverThreads threads of the in-process pool for {@link #runLocal} and {@link #runAll}
     */
    public SparkRunner(JavaSparkContext spark, int driverThreads) {
        this.spark = spark;
        this.local = new ThreadPoolRunner(driverThreads);
    }

    @Override
    public <T extends Serializable> List<T> run(List<? extends RaidTask<T>> tasks, Completion<? super T> onDone) throws Exception {
        if (tasks.isEmpty()) {
            return List.of();
        }
        List<RaidTask<T>> list = new ArrayList<>(tasks);
        String group = "hayloft-raid-" + JOBS.incrementAndGet();
        spark.setJobGroup(group, "hayloft: " + tasks.size() + " " + tasks.get(0).getClass().getSimpleName() + "s", true);
        List<T> out;
        try {
            JavaRDD<RaidTask<T>> rdd = spark.parallelize(list, list.size()); // one task per partition
            out = rdd.map(RaidTask::call).collect();
        } finally {
            spark.clearJobGroup();
        }
        for (int i = 0; i < out.size(); i++) {
            onDone.done(i, out.get(i));
        }
        return out;
    }

    @Override
    public <T> List<T> runLocal(List<? extends Callable<T>> tasks, Completion<? super T> onDone) throws Exception {
        return local.runLocal(tasks, onDone);
    }

    @Override
    public <T> List<T> runAll(List<Callable<T>> tasks) throws Exception {
        return local.runAll(tasks);
    }

    /** Stops the driver pool; the Spark context is the caller's. */
    @Override
    public void close() {
        local.close();
    }
}
