package io.hayloft.spark;

import io.hayloft.raid.JobRunner;
import io.hayloft.raid.RaidTask;
import io.hayloft.raid.ThreadPoolRunner;
import java.io.PrintStream;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.TaskFailedReason;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerTaskEnd;

/**
 * Runs raid jobs on Apache Spark: the tasks of one job become one RDD with one partition per task
 * (one Spark task per stripe), mapped with {@link RaidTask#call()} on the executors and collected on
 * the driver. The driver then reports every result to the job's {@link JobRunner.Completion}, in task
 * order: on Spark, {@code stripe-N} checkpoints arrive together when the job ends.
 *
 * <p>A failed task is retried by Spark ({@code spark.task.maxFailures}); the tasks are idempotent.
 * The runner listens to the context's task ends and counts the failed attempts ({@link #failedAttempts()},
 * printed by the entry points), so an operator sees that a lost executor cost a retry, not data.
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
    private final AttemptListener attempts = new AttemptListener();

    /**
     * @param spark         the context to submit jobs to; the caller owns it and stops it
     * @param driverThreads threads of the in-process pool for {@link #runLocal} and {@link #runAll}
     */
    public SparkRunner(JavaSparkContext spark, int driverThreads) {
        this.spark = spark;
        this.local = new ThreadPoolRunner(driverThreads);
        spark.sc().addSparkListener(attempts);
    }

    /**
     * Task attempts of this context that failed (and were retried, or failed their job) since this
     * runner was made: an executor lost with its worker, a task that threw. Spark's listener bus
     * delivers task ends asynchronously, a few milliseconds after the scheduler saw them.
     */
    public List<String> failedAttempts() {
        synchronized (attempts.failures) {
            return List.copyOf(attempts.failures);
        }
    }

    /** Prints how many task attempts failed and why (one line each, the first ten), when any did. */
    public void printRetries(PrintStream out) {
        List<String> failed = failedAttempts();
        if (!failed.isEmpty()) {
            out.println(failed.size() + " task attempts failed and were retried or failed their job:");
            failed.stream().limit(10).forEach(f -> out.println("  " + f));
        }
    }

    /** Collects the failed task attempts; called on Spark's listener-bus thread. */
    private static final class AttemptListener extends SparkListener {
        final List<String> failures = new ArrayList<>();

        @Override
        public void onTaskEnd(SparkListenerTaskEnd end) {
            if (end.reason() instanceof TaskFailedReason f) {
                String why = f.toErrorString();
                int nl = why.indexOf('\n');
                synchronized (failures) {
                    failures.add("stage " + end.stageId() + " partition " + end.taskInfo().index() + " attempt "
                            + end.taskInfo().attemptNumber() + " on executor " + end.taskInfo().executorId() + ": "
                            + (nl < 0 ? why : why.substring(0, nl)));
                }
            }
        }
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

    /** Stops the driver pool and stops listening; the Spark context is the caller's. */
    @Override
    public void close() {
        spark.sc().removeSparkListener(attempts);
        local.close();
    }
}
