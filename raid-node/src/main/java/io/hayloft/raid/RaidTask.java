package io.hayloft.raid;

import java.io.Serializable;
import java.util.concurrent.Callable;

/**
 * One unit of raid work that can run anywhere: in the raid-node's own pool ({@link ThreadPoolRunner})
 * or on an engine's executor (the Spark runner in module {@code raid-spark}). A task holds only
 * serializable values (configuration, volume and stripe ids, block names, store addresses) and opens
 * what it needs (HTTP clients, spool files) where it runs; its result is serializable too, so it can
 * come back to the driver. Tasks of one job are independent: any order, any parallelism, and a task
 * may be run again after a failure (an engine's retry), so each must be idempotent.
 *
 * <p>Implementations are immutable; {@link #call()} may run on any thread.
 *
 * @param <T> the result sent back to whoever runs the job
 */
public interface RaidTask<T extends Serializable> extends Callable<T>, Serializable {
}
