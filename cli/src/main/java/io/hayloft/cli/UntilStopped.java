package io.hayloft.cli;

import java.util.concurrent.CountDownLatch;

/**
 * How every long-running command ({@code store}, {@code directory}, {@code cache}, {@code raid serve},
 * {@code cluster}) waits: it registers a shutdown hook that stops what it started, says that it is
 * up, and blocks until the hook has run (SIGTERM or Ctrl-C). Stateless; each call has its own latch.
 */
public final class UntilStopped {

    /** Stops a server; called once, from the shutdown hook's thread. */
    @FunctionalInterface
    public interface Stop {
        void stop() throws InterruptedException;
    }

    private UntilStopped() {
    }

    /**
     * Registers a shutdown hook (thread {@code hookName}) that calls {@code stop}, runs {@code announce},
     * then waits for the hook to finish.
     *
     * @return 0, the command's exit code
     */
    public static int run(String hookName, Stop stop, Runnable announce) throws InterruptedException {
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                stop.stop();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                stopped.countDown();
            }
        }, hookName));
        announce.run();
        stopped.await();
        return 0;
    }
}
