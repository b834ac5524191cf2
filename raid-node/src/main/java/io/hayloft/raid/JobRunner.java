package io.hayloft.raid;

import java.util.List;
import java.util.concurrent.Callable;

/**
 * Runs independent encode or repair tasks. The default is {@link ThreadPoolRunner}; an engine such
 * as Spark can run the same tasks elsewhere (the tasks hold only the configuration and a volume or
 * stripe id, so they can be shipped).
 */
public interface JobRunner extends AutoCloseable {

    /**
     * Runs every task and returns their results in task order.
     *
     * @throws Exception the first task failure, after every task has finished
     */
    <T> List<T> runAll(List<Callable<T>> tasks) throws Exception;

    @Override
    void close();
}
