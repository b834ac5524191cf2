package io.hayloft.raid;

import java.io.Serializable;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * Runs the tasks of one job: encode ({@link StripeEncodeTask}, one per stripe) or repair
 * ({@link StripeRepairTask}, one per damaged stripe). The default is {@link ThreadPoolRunner}, the
 * raid-node's own pool; {@code io.hayloft.spark.SparkRunner} (module {@code raid-spark}) runs
 * the same {@link RaidTask}s as a Spark job, one task per partition. The coding logic lives in the
 * tasks, so it is the same on every runner.
 *
 * <p>Implementations are thread-safe: several jobs may run at once.
 */
public interface JobRunner extends AutoCloseable {

    /** Told, on the thread that called {@code run}, of each task that finished. */
    @FunctionalInterface
    interface Completion<T> {
        /**
         * @param index the task's position in the list given to the runner
         * @throws Exception to abort the job: tasks not started are skipped, running ones are
         *                   interrupted and awaited, and the exception is rethrown to the caller
         */
        void done(int index, T result) throws Exception;
    }

    /**
     * Runs serializable tasks wherever this runner runs work, and returns their results in task order.
     * {@code onDone} hears of each result (on the ThreadPoolRunner as each finishes; on an engine that
     * returns results together, when they arrive). The job fails as a whole: the first failure stops
     * it (tasks not started never run, running ones are interrupted and awaited) and is rethrown.
     *
     * @throws Exception the first task failure, or what {@code onDone} threw
     */
    <T extends Serializable> List<T> run(List<? extends RaidTask<T>> tasks, Completion<? super T> onDone) throws Exception;

    /** {@link #run(List, Completion)} without a listener. */
    default <T extends Serializable> List<T> run(List<? extends RaidTask<T>> tasks) throws Exception {
        return run(tasks, (i, r) -> { });
    }

    /**
     * Runs tasks that cannot leave this JVM (closures over local state, such as a reclaim's local
     * volume image) on an in-process pool, with the same failure rules as {@link #run(List, Completion)}.
     */
    <T> List<T> runLocal(List<? extends Callable<T>> tasks, Completion<? super T> onDone) throws Exception;

    /**
     * Runs independent in-process tasks (one per volume, say) to the end, whatever fails.
     *
     * @return results in task order, null for a task that failed
     * @throws Exception the first task failure, after every task has finished
     */
    <T> List<T> runAll(List<Callable<T>> tasks) throws Exception;

    @Override
    void close();
}
