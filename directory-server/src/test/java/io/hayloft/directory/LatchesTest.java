package io.hayloft.directory;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * The directory's latches against a model of what they promise, with real threads: while a change
 * holds a record's latch no other change holds it; while a change holds every latch
 * ({@link Latches#exclusive}) no other change holds any; a holder of every latch may still take a
 * record's (reentrant); the same record named twice in one request is taken once; and threads asking
 * for overlapping sets of records in any order never wait for each other in a cycle (every thread
 * finishes). Each holder checks the model on entry, yields a few times to widen the window another
 * thread could break it in, and checks again before leaving.
 */
class LatchesTest {

    private static final String[] KEYS = {"volume/1", "volume/2", "volume/3", "volume/4", "store/a", "store/b", "bucket/x"};

    @Property(tries = 25)
    void holdersOfARecordNeverOverlapAndNothingDeadlocks(@ForAll @IntRange(min = 2, max = 8) int threads,
                                                         @ForAll @IntRange(min = 1, max = 40) int exclusivePercent,
                                                         @ForAll long seed) throws Exception {
        Latches latches = new Latches();
        Map<Object, AtomicInteger> holders = new ConcurrentHashMap<>();
        for (String k : KEYS) {
            holders.put(k, new AtomicInteger());
        }
        AtomicInteger exclusive = new AtomicInteger();
        AtomicInteger anyShared = new AtomicInteger();
        List<String> violations = java.util.Collections.synchronizedList(new ArrayList<>());
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(threads);
        List<Thread> started = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Random r = new Random(seed + t);
            Thread th = new Thread(() -> {
                try {
                    go.await();
                    for (int op = 0; op < 200; op++) {
                        if (r.nextInt(100) < exclusivePercent) {
                            try (Latches.Held h = latches.exclusive()) {
                                if (exclusive.incrementAndGet() != 1 || anyShared.get() != 0) {
                                    violations.add("every latch held beside another holder");
                                }
                                String k = KEYS[r.nextInt(KEYS.length)];
                                try (Latches.Held inner = latches.shared(k)) { // reentrant under exclusive
                                    widen(r);
                                }
                                if (anyShared.get() != 0) {
                                    violations.add("a record's latch taken while every latch was held");
                                }
                                exclusive.decrementAndGet();
                            }
                        } else {
                            List<Object> keys = new ArrayList<>();
                            for (int n = 1 + r.nextInt(4); n > 0; n--) {
                                keys.add(KEYS[r.nextInt(KEYS.length)]); // in any order, duplicates too
                            }
                            List<Object> distinct = keys.stream().distinct().toList();
                            try (Latches.Held h = latches.shared(keys)) {
                                anyShared.incrementAndGet();
                                if (exclusive.get() != 0) {
                                    violations.add("a record's latch taken while every latch was held");
                                }
                                for (Object k : distinct) {
                                    if (holders.get(k).incrementAndGet() != 1) {
                                        violations.add(k + " held by two changes");
                                    }
                                }
                                widen(r);
                                for (Object k : distinct) {
                                    if (holders.get(k).decrementAndGet() != 0) {
                                        violations.add(k + " held by another change while this one held it");
                                    }
                                }
                                anyShared.decrementAndGet();
                            }
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    done.countDown();
                }
            }, "latch-" + t);
            th.setDaemon(true);
            th.start();
            started.add(th);
        }
        go.countDown();
        boolean finished = done.await(60, TimeUnit.SECONDS);
        if (!finished) {
            started.forEach(Thread::interrupt);
        }
        assertThat(finished).as("every thread finished: no two waited for each other in a cycle (seed %d)", seed).isTrue();
        assertThat(violations).as("seed %d", seed).isEmpty();
    }

    private static void widen(Random r) {
        for (int i = r.nextInt(4); i > 0; i--) {
            Thread.yield();
        }
    }
}
