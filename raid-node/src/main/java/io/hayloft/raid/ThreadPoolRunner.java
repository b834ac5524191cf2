package io.hayloft.raid;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The embedded runner: a fixed pool of workers pulling tasks from one shared queue, so a slow task
 * never leaves other workers idle behind a static split. Thread-safe.
 */
public final class ThreadPoolRunner implements JobRunner {

    private final ExecutorService pool;

    public ThreadPoolRunner(int workers) {
        if (workers < 1) {
            throw new IllegalArgumentException("workers must be >= 1, was " + workers);
        }
        AtomicInteger n = new AtomicInteger();
        pool = Executors.newFixedThreadPool(workers, r -> {
            Thread t = new Thread(r, "raid-worker-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public <T> List<T> runAll(List<Callable<T>> tasks) throws Exception {
        List<Future<T>> fs = new ArrayList<>();
        for (Callable<T> t : tasks) {
            fs.add(pool.submit(t));
        }
        List<T> out = new ArrayList<>();
        Exception first = null;
        for (Future<T> f : fs) {
            try {
                out.add(f.get());
            } catch (ExecutionException e) {
                out.add(null);
                if (first == null) {
                    first = e.getCause() instanceof Exception ex ? ex : e;
                }
            }
        }
        if (first != null) {
            throw first;
        }
        return out;
    }

    @Override
    public void close() {
        pool.shutdownNow();
    }
}
