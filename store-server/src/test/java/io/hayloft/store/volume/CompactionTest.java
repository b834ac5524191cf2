package io.hayloft.store.volume;

import org.assertj.core.api.Assertions;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.store.volume.CompactionCommit.SimulatedCrash;
import io.hayloft.store.volume.CompactionCommit.Step;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class CompactionTest {
    static final Volume.Options OPTS = VolumeTest.OPTS;

    @TempDir
    Path dir;

    final VolumeModel model = new VolumeModel();

    /** 60 needles, 20 deleted, 10 overwritten: a third of the file is garbage. */
    private Volume populate() throws Exception {
        Volume v = Volume.create(dir, 1, OPTS);
        for (int i = 0; i < 60; i++) {
            model.write(v, i, i % 2, 100 + i, 200 + i, i);
        }
        for (int i = 0; i < 20; i++) {
            model.delete(v, i * 3, (i * 3) % 2);
        }
        for (int i = 0; i < 10; i++) {
            model.write(v, 1 + i * 3, (1 + i * 3) % 2, 555, 300, 1000 + i);
        }
        return v;
    }

    private List<String> leftovers() throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.contains(".cpt") || n.contains(".compact")).toList();
        }
    }

    @Test
    void copiesOnlyLiveNeedlesAndSurvivesRestart() throws Exception {
        long before;
        Compactor.Result r;
        try (Volume v = populate()) {
            before = v.status().sizeBytes();
            r = Compactor.compact(v);
            assertThat(r.needlesCopied()).isEqualTo(40);
            assertThat(r.bytesAfter()).isLessThan(before);
            assertThat(v.status().sizeBytes()).isEqualTo(r.bytesAfter());
            assertThat(v.status().deleted()).isZero();
            model.verify(v);
            model.write(v, 7777, 0, 1, 10, 1); // appends go to the new file
            model.verify(v);
        }
        assertThat(leftovers()).isEmpty();
        try (Volume v = Volume.open(dir, 1, OPTS)) {
            model.verify(v);
            assertThat(v.status().needles()).isEqualTo(41);
        }
    }

    @Test
    void writesAndDeletesDuringTheCopyReachTheNewFile() throws Exception {
        try (Volume v = populate()) {
            Compactor.compact(v, step -> {
                if (step == Step.LIVE_COPIED) {
                    try {
                        model.delete(v, 2, 0);       // already copied: must be deleted in both
                        model.write(v, 9000, 3, 9, 50, 9);  // appended after the copy started
                        model.delete(v, 9000, 3);
                        model.write(v, 9001, 3, 9, 50, 10);
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                }
            });
            model.verify(v);
        }
        try (Volume v = Volume.open(dir, 1, OPTS)) {
            model.verify(v);
        }
    }

    @ParameterizedTest
    @EnumSource(value = Step.class, names = "LIVE_COPIED", mode = EnumSource.Mode.EXCLUDE)
    void everyCrashPointRecoversToOneOfTheTwoFiles(Step crashAt) throws Exception {
        Volume v = populate();
        long before = v.status().sizeBytes();
        try {
            Compactor.compact(v, step -> {
                if (step == crashAt) {
                    throw new SimulatedCrash(step);
                }
            });
            throw new AssertionError("the hook did not stop the commit");
        } catch (SimulatedCrash expected) {
            v.abandon();
        }
        boolean forward = crashAt.compareTo(Step.MARKER_COMMITTED) >= 0;
        try (Volume r = Volume.open(dir, 1, OPTS)) {
            model.verify(r);
            assertThat(leftovers()).isEmpty();
            if (forward) {
                assertThat(r.status().sizeBytes()).as("rolled forward").isLessThan(before);
                assertThat(r.status().deleted()).isZero();
            } else {
                assertThat(r.status().sizeBytes()).as("rolled back").isEqualTo(before);
            }
            model.write(r, 4242, 0, 1, 100, 1);
            Compactor.compact(r); // and a later compaction still works
            model.verify(r);
        }
        try (Volume r = Volume.open(dir, 1, OPTS)) {
            model.verify(r);
        }
    }

    @Test
    void aCorruptMarkerStopsTheOpenWithAClearError() throws Exception {
        populate().close();
        Files.write(dir.resolve("1.compact"), new byte[] {1, 2, 3});
        Assertions.assertThatThrownBy(() -> Volume.open(dir, 1, OPTS))
                .hasMessageContaining("not a valid compaction marker");
    }

    @Test
    void concurrentWritersReadersAndDeletersDuringRepeatedCompactions() throws Exception {
        Volume v = Volume.create(dir, 1, new Volume.Options(64 << 20, Volume.Fsync.ALWAYS));
        ExecutorService pool = Executors.newFixedThreadPool(4);
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch started = new CountDownLatch(3);
        List<Future<Integer>> workers = new ArrayList<>();
        for (int w = 0; w < 3; w++) {
            final int worker = w;
            workers.add(pool.submit(() -> {
                Random rnd = new Random(worker);
                int ops = 0;
                started.countDown();
                while (!stop.get() || ops < 300) {
                    long key = worker * 1_000_000L + rnd.nextInt(200);
                    VolumeModel.Entry e = model.entries.get(VolumeModel.k(key, 0));
                    int choice = rnd.nextInt(10);
                    if (e == null || choice < 4) {
                        model.write(v, key, 0, rnd.nextLong(), rnd.nextInt(2000), rnd.nextInt());
                    } else if (choice < 5 && !e.deleted()) {
                        model.delete(v, key, 0);
                    } else if (!e.deleted()) {
                        assertThat(VolumeTest.array(v.read(key, 0, e.cookie()))).isEqualTo(e.data());
                    }
                    ops++;
                }
                return ops;
            }));
        }
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
        for (int c = 0; c < 5; c++) {
            Compactor.compact(v);
        }
        stop.set(true);
        for (Future<Integer> f : workers) {
            assertThat(f.get(60, TimeUnit.SECONDS)).isGreaterThanOrEqualTo(300);
        }
        pool.shutdown();
        model.verify(v);
        v.close();
        try (Volume r = Volume.open(dir, 1, OPTS)) {
            model.verify(r);
        }
    }
}
