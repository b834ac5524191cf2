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
 * thread could break it in, and checks again before leaving. Groups (a bucket): changes within one
 * group hold its latch together, each with its records' latches, and one that holds the whole group
 * holds it alone.
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

    @Property(tries = 25)
    void aWholeGroupIsHeldAloneAndChangesWithinItOnlyExcludeByRecord(@ForAll @IntRange(min = 2, max = 8) int threads,
                                                                     @ForAll @IntRange(min = 1, max = 40) int wholePercent,
                                                                     @ForAll long seed) throws Exception {
        Latches latches = new Latches();
        String[] groups = {"bucket/x", "bucket/y"};
        String[] keys = {"key/1", "key/2", "key/3", "pending/p"};
        Map<Object, AtomicInteger> within = new ConcurrentHashMap<>();
        Map<Object, AtomicInteger> whole = new ConcurrentHashMap<>();
        Map<Object, AtomicInteger> records = new ConcurrentHashMap<>();
        for (String g : groups) {
            within.put(g, new AtomicInteger());
            whole.put(g, new AtomicInteger());
            for (String k : keys) {
                records.put(g + "|" + k, new AtomicInteger());
            }
        }
        List<String> violations = java.util.Collections.synchronizedList(new ArrayList<>());
        CountDownLatch done = new CountDownLatch(threads);
        List<Thread> started = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            Random r = new Random(seed + t);
            Thread th = new Thread(() -> {
                try {
                    for (int op = 0; op < 200; op++) {
                        String g = groups[r.nextInt(groups.length)];
                        if (r.nextInt(100) < wholePercent) {
                            try (Latches.Held h = latches.whole(g)) {
                                if (whole.get(g).incrementAndGet() != 1 || within.get(g).get() != 0) {
                                    violations.add(g + " held whole beside another holder");
                                }
                                widen(r);
                                if (within.get(g).get() != 0) {
                                    violations.add("a change within " + g + " began while it was held whole");
                                }
                                whole.get(g).decrementAndGet();
                            }
                        } else {
                            List<Object> ks = new ArrayList<>();
                            for (int n = 1 + r.nextInt(2); n > 0; n--) {
                                ks.add(g + "|" + keys[r.nextInt(keys.length)]);
                            }
                            List<Object> distinct = ks.stream().distinct().toList();
                            try (Latches.Held h = latches.within(g, ks)) {
                                within.get(g).incrementAndGet();
                                if (whole.get(g).get() != 0) {
                                    violations.add("a change within " + g + " while it was held whole");
                                }
                                for (Object k : distinct) {
                                    if (records.get(k).incrementAndGet() != 1) {
                                        violations.add(k + " held by two changes");
                                    }
                                }
                                widen(r);
                                for (Object k : distinct) {
                                    records.get(k).decrementAndGet();
                                }
                                within.get(g).decrementAndGet();
                            }
                        }
                    }
                } finally {
                    done.countDown();
                }
            }, "group-latch-" + t);
            th.setDaemon(true);
            th.start();
            started.add(th);
        }
        boolean finished = done.await(60, TimeUnit.SECONDS);
        if (!finished) {
            started.forEach(Thread::interrupt);
        }
        assertThat(finished).as("every thread finished (seed %d)", seed).isTrue();
        assertThat(violations).as("seed %d", seed).isEmpty();
    }

    /**
     * Two changes to different keys of one bucket hold their latches at the same time: the second is
     * taken while the first holder waits for it (with one latch per bucket, as before, it never would).
     */
    @org.junit.jupiter.api.Test
    void changesToTwoKeysOfOneGroupAreInFlightAtOnce() throws Exception {
        Latches latches = new Latches();
        CountDownLatch firstHeld = new CountDownLatch(1);
        CountDownLatch secondHeld = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean together = new java.util.concurrent.atomic.AtomicBoolean();
        Thread first = new Thread(() -> {
            try (Latches.Held h = latches.within("bucket/x", List.of("key/x/a"))) {
                firstHeld.countDown();
                together.set(secondHeld.await(30, TimeUnit.SECONDS));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        first.start();
        assertThat(firstHeld.await(30, TimeUnit.SECONDS)).isTrue();
        try (Latches.Held h = latches.within("bucket/x", List.of("key/x/b"))) {
            secondHeld.countDown();
        }
        first.join();
        assertThat(together).as("the second change took its latches while the first held its own").isTrue();
    }

    private static void widen(Random r) {
        for (int i = r.nextInt(4); i > 0; i--) {
            Thread.yield();
        }
    }
}
