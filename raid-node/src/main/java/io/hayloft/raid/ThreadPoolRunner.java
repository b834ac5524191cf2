package io.hayloft.raid;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The embedded runner and the default: a fixed pool of {@code workers} threads pulling tasks from one
 * shared queue, so a slow task never leaves other workers idle behind a static split. The stripes of
 * one volume run in parallel, at most {@code workers} at a time; each running encode task spools its
 * stripe on local disk ({@code (k + r) × blockSize} bytes, docs/raid.md "Jobs and runners").
 *
 * <p>A job submitted from one of this pool's own workers (the stripes of a volume whose encode is
 * itself a task of {@link #runAll}) runs on that worker, one task after another: a fixed pool waiting
 * on itself would deadlock.
 *
 * <p>Thread-safe: jobs from several threads share the pool; each job keeps its own bookkeeping.
 */
public final class ThreadPoolRunner implements JobRunner {

    private static final Logger LOG = LoggerFactory.getLogger(ThreadPoolRunner.class);
    private static final ThreadLocal<ThreadPoolRunner> OWNER = new ThreadLocal<>();
    /** How long an aborted job waits for its interrupted tasks to stop before giving up on them. */
    private static final long ABORT_WAIT_SECONDS = 300;

    private final ExecutorService pool;
    private final int workers;
    private volatile boolean closed;

    public ThreadPoolRunner(int workers) {
        if (workers < 1) {
            throw new IllegalArgumentException("workers must be >= 1, was " + workers);
        }
        this.workers = workers;
        AtomicInteger n = new AtomicInteger();
        pool = Executors.newFixedThreadPool(workers, r -> {
            Thread t = new Thread(() -> {
                OWNER.set(this);
                r.run();
            }, "raid-worker-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    public int workers() {
        return workers;
    }

    @Override
    public <T extends Serializable> List<T> run(List<? extends RaidTask<T>> tasks, Completion<? super T> onDone) throws Exception {
        return execute(tasks, onDone, true);
    }

    @Override
    public <T> List<T> runLocal(List<? extends Callable<T>> tasks, Completion<? super T> onDone) throws Exception {
        return execute(tasks, onDone, true);
    }

    @Override
    public <T> List<T> runAll(List<Callable<T>> tasks) throws Exception {
        return execute(tasks, (i, r) -> { }, false);
    }

    /** One job's state: results, failures, and which worker runs which task (to interrupt on abort). */
    private <T> List<T> execute(List<? extends Callable<T>> tasks, Completion<? super T> onDone, boolean abortOnFailure)
            throws Exception {
        int n = tasks.size();
        if (OWNER.get() == this) {
            return inline(tasks, onDone, abortOnFailure);
        }
        Object[] results = new Object[n];
        Throwable[] errors = new Throwable[n];
        Thread[] running = new Thread[n];
        boolean[] aborted = new boolean[1];
        Throwable[] cause = new Throwable[1];
        CountDownLatch finished = new CountDownLatch(n);
        BlockingQueue<Integer> completed = new LinkedBlockingQueue<>();
        for (int i = 0; i < n; i++) {
            int at = i;
            Callable<T> task = tasks.get(i);
            pool.execute(() -> {
                try {
                    synchronized (running) {
                        if (aborted[0]) {
                            return;
                        }
                        if (closed) {
                            throw new CancellationException("the runner was closed before task " + at + " ran");
                        }
                        running[at] = Thread.currentThread();
                    }
                    results[at] = task.call();
                } catch (Throwable e) {
                    errors[at] = e;
                    if (abortOnFailure) { // stop the job here, before this worker takes another of its tasks
                        synchronized (running) {
                            if (!aborted[0]) {
                                cause[0] = e; // the failure that stopped the job, not its victims' interrupts
                            }
                            aborted[0] = true;
                            running[at] = null;
                            Arrays.stream(running).filter(t -> t != null).forEach(Thread::interrupt);
                        }
                    }
                } finally {
                    synchronized (running) {
                        running[at] = null;
                        Thread.interrupted(); // an abort's interrupt is meant for this task only
                    }
                    completed.add(at);
                    finished.countDown();
                }
            });
        }
        Throwable first = null;
        try {
            for (int done = 0; done < n && (first == null || !abortOnFailure); done++) {
                int i = completed.take();
                if (errors[i] != null) {
                    first = first == null ? errors[i] : first;
                } else {
                    @SuppressWarnings("unchecked") T r = (T) results[i];
                    onDone.done(i, r);
                }
            }
        } catch (Throwable t) { // onDone failed, or this thread was interrupted: stop the job
            abort(running, aborted, finished);
            throw t;
        }
        if (first != null && abortOnFailure) {
            abort(running, aborted, finished);
            synchronized (running) {
                first = cause[0] != null ? cause[0] : first;
            }
        }
        if (first instanceof Exception e) {
            throw e;
        }
        if (first instanceof Error e) {
            throw e;
        }
        if (first != null) {
            throw new Exception(first);
        }
        List<T> out = new ArrayList<>(n);
        for (Object r : results) {
            @SuppressWarnings("unchecked") T t = (T) r;
            out.add(t);
        }
        return out;
    }

    /** Skips tasks not started, interrupts running ones and waits until every task has stopped. */
    private static void abort(Thread[] running, boolean[] aborted, CountDownLatch finished) throws InterruptedException {
        synchronized (running) {
            aborted[0] = true;
            Arrays.stream(running).filter(t -> t != null).forEach(Thread::interrupt);
        }
        if (!finished.await(ABORT_WAIT_SECONDS, TimeUnit.SECONDS)) {
            LOG.warn("aborted job: {} tasks still running after {} s; leaving them", finished.getCount(), ABORT_WAIT_SECONDS);
        }
    }

    private static <T> List<T> inline(List<? extends Callable<T>> tasks, Completion<? super T> onDone, boolean abortOnFailure)
            throws Exception {
        List<T> out = new ArrayList<>();
        Exception first = null;
        for (int i = 0; i < tasks.size(); i++) {
            try {
                T r = tasks.get(i).call();
                out.add(r);
                onDone.done(i, r);
            } catch (Exception e) {
                if (abortOnFailure) {
                    throw e;
                }
                out.add(null);
                first = first == null ? e : first;
            }
        }
        if (first != null) {
            throw first;
        }
        return out;
    }

    /** Stops the pool: running tasks are interrupted; queued ones fail with a CancellationException. */
    @Override
    public void close() {
        closed = true;
        for (Runnable queued : pool.shutdownNow()) {
            queued.run(); // fails at once, so whoever waits on its job hears of it
        }
    }
}
