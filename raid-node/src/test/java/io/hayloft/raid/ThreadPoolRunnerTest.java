package io.hayloft.raid;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** The embedded runner's rules: results in order, a failure stops the job and waits for it, no self-deadlock. */
class ThreadPoolRunnerTest {

    record Square(int x) implements RaidTask<Integer> {
        @Override
        public Integer call() {
            return x * x;
        }
    }

    @Test
    void resultsComeBackInTaskOrderAndEachIsHeardOnce() throws Exception {
        try (ThreadPoolRunner runner = new ThreadPoolRunner(3)) {
            List<Integer> heard = new CopyOnWriteArrayList<>();
            List<Integer> out = runner.run(List.of(new Square(1), new Square(2), new Square(3), new Square(4)), (i, r) -> heard.add(i));
            assertThat(out).containsExactly(1, 4, 9, 16);
            assertThat(heard).containsExactlyInAnyOrder(0, 1, 2, 3);
        }
    }

    @Test
    void aFailureInterruptsTheRunningTasksWaitsForThemAndSkipsTheRest() throws Exception {
        try (ThreadPoolRunner runner = new ThreadPoolRunner(2)) {
            CountDownLatch blockedStarted = new CountDownLatch(1);
            AtomicBoolean blockedStopped = new AtomicBoolean();
            AtomicBoolean lastRan = new AtomicBoolean();
            List<Callable<Integer>> tasks = new ArrayList<>();
            tasks.add(() -> {
                blockedStarted.countDown();
                try {
                    new CountDownLatch(1).await(60, TimeUnit.SECONDS);
                    return 0;
                } finally {
                    blockedStopped.set(true);
                }
            });
            tasks.add(() -> {
                blockedStarted.await(10, TimeUnit.SECONDS);
                throw new IOException("stripe 1 failed");
            });
            tasks.add(() -> {
                lastRan.set(true);
                return 2;
            });
            long t0 = System.nanoTime();
            assertThatThrownBy(() -> runner.runLocal(tasks, (i, r) -> { })).isInstanceOf(IOException.class).hasMessage("stripe 1 failed");
            assertThat(blockedStopped).as("the running task was interrupted and awaited").isTrue();
            assertThat(lastRan).as("a task not started when the job failed").isFalse();
            assertThat(System.nanoTime() - t0).isLessThan(TimeUnit.SECONDS.toNanos(30));
        }
    }

    @Test
    void aListenerThatThrowsStopsTheJob() throws Exception {
        try (ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            List<Integer> heard = new ArrayList<>();
            assertThatThrownBy(() -> runner.run(List.of(new Square(1), new Square(2), new Square(3)), (i, r) -> {
                heard.add(i);
                throw new IllegalStateException("crash at stripe-" + i);
            })).hasMessage("crash at stripe-0");
            assertThat(heard).containsExactly(0);
        }
    }

    @Test
    void aJobStartedFromAWorkerRunsOnThatWorkerInsteadOfDeadlocking() throws Exception {
        try (ThreadPoolRunner runner = new ThreadPoolRunner(1)) {
            List<Callable<List<Integer>>> outer = List.of(() -> runner.run(List.of(new Square(5), new Square(6))));
            assertThat(runner.runAll(outer)).containsExactly(List.of(25, 36));
        }
    }

    @Test
    void runAllFinishesEveryTaskThenThrowsTheFirstFailure() throws Exception {
        try (ThreadPoolRunner runner = new ThreadPoolRunner(2)) {
            AtomicBoolean ran = new AtomicBoolean();
            List<Callable<Integer>> tasks = List.of(() -> {
                throw new IOException("volume 1 failed");
            }, () -> {
                ran.set(true);
                return 2;
            });
            assertThatThrownBy(() -> runner.runAll(tasks)).hasMessage("volume 1 failed");
            assertThat(ran).isTrue();
        }
    }

    @Test
    void closingTheRunnerFailsTheJobsWaitingOnIt() throws Exception {
        ThreadPoolRunner runner = new ThreadPoolRunner(1);
        CountDownLatch started = new CountDownLatch(1);
        List<Callable<Integer>> tasks = List.of(() -> {
            started.countDown();
            new CountDownLatch(1).await(60, TimeUnit.SECONDS);
            return 0;
        }, () -> 1);
        CompletableFuture<List<Integer>> job = CompletableFuture.supplyAsync(() -> {
            try {
                return runner.runLocal(tasks, (i, r) -> { });
            } catch (Exception e) {
                throw new CompletionException(e);
            }
        });
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        runner.close();
        assertThatThrownBy(() -> job.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class);
    }
}
