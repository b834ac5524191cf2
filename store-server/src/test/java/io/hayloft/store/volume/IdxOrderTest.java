package io.hayloft.store.volume;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The .idx checkpoint names needles in file order even under concurrent writers. Recovery scans the
 * volume tail from the end of the last needle the .idx names, so a record written out of order could
 * hide an earlier, acknowledged needle from that scan: the kill -9 test once lost a write that way.
 */
class IdxOrderTest {

    @TempDir
    Path dir;

    @Test
    void concurrentWritersQueueIdxRecordsInFileOrder() throws Exception {
        Volume.Options opts = new Volume.Options(64L << 20, Volume.Fsync.ALWAYS);
        try (Volume v = Volume.create(dir, 1, opts)) {
            ExecutorService pool = Executors.newFixedThreadPool(8);
            try {
                List<Future<?>> writers = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    long base = (long) t << 32;
                    writers.add(pool.submit(() -> {
                        for (int i = 0; i < 150; i++) {
                            v.write(base + i, 0, 7, ByteBuffer.wrap(new byte[1 + (i * 37) % 900]));
                        }
                        return null;
                    }));
                }
                for (Future<?> f : writers) {
                    f.get(2, TimeUnit.MINUTES);
                }
            } finally {
                pool.shutdownNow();
            }
            v.flushIndex();
        }
        List<Long> offsets = new ArrayList<>();
        try (IdxFile idx = IdxFile.load(Volume.idxPath(dir, 1), 1, (key, alt, offset, size, deleted) -> offsets.add(offset))) {
            assertThat(idx).isNotNull();
        }
        assertThat(offsets).hasSize(8 * 150);
        for (int i = 1; i < offsets.size(); i++) {
            assertThat(offsets.get(i)).as("record %d names an offset below record %d's", i, i - 1).isGreaterThan(offsets.get(i - 1));
        }
    }
}
