package io.hayloft.store.volume;

import java.util.Set;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.store.StoreOperationException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Lock-free reads against concurrent writers, overwriters, deleters and compactions that swap the
 * file under them: a read of an acknowledged needle returns that version or a newer one, exact,
 * with the CRC32C of its data; a read after an acknowledged delete finds nothing. Keys over the
 * full unsigned 64-bit range, alternate keys over the full unsigned 32-bit range. Some of these
 * keys share their index hash with another key (k1 ^ alt1 * G == k2 ^ alt2 * G, e.g. (0, 0) and
 * (G, 1)), so reads also take the index's confirmed-lookup path while files are swapped.
 */
class ConcurrentReadWriteTest {
    private static final int WRITERS = 3;
    private static final int READERS = 3;
    private static final int PER_WRITER = 6000;
    private static final int[] ALTS = {0, 1, 150, 1 << 31, -1};
    private static final int DELETED = -1;

    @TempDir
    Path dir;

    private static long key(int writer, int i) {
        return ((long) writer << 61) ^ (i * 0x9E3779B97F4A7C15L) ^ (i == 7 ? -1L : 0);
    }

    private static int alt(int i) {
        return ALTS[i % ALTS.length];
    }

    /** Version in the first 4 bytes, then bytes derived from (key, version). */
    private static byte[] data(long key, int version) {
        Random r = new Random(key * 31 + version);
        byte[] b = new byte[4 + r.nextInt(1500)];
        r.nextBytes(b);
        ByteBuffer.wrap(b).putInt(0, version);
        return b;
    }

    @Test
    void readsStayExactThroughWritesDeletesAndCompactions() throws Exception {
        Volume.Options opts = new Volume.Options(256L << 20, Volume.Fsync.NEVER);
        try (Volume v = Volume.create(dir, 3, opts)) {
            // (writer, i) -> highest acknowledged version, or DELETED
            Map<Long, Integer> acked = new ConcurrentHashMap<>();
            Set<Long> deleting = ConcurrentHashMap.newKeySet();
            AtomicBoolean writing = new AtomicBoolean(true);
            AtomicLong reads = new AtomicLong();
            ExecutorService pool = Executors.newFixedThreadPool(WRITERS + READERS + 1);
            List<Future<?>> writers = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                int writer = w;
                writers.add(pool.submit(() -> {
                    Random rnd = new Random(writer);
                    for (int n = 0; n < PER_WRITER; n++) {
                        int i = rnd.nextInt(PER_WRITER / 3);
                        long id = ((long) writer << 32) | i;
                        Integer cur = acked.get(id);
                        if (cur != null && cur == DELETED) {
                            continue; // a deleted key stays deleted, so readers can tell
                        }
                        if (cur != null && rnd.nextInt(8) == 0) {
                            deleting.add(id); // from here a read may find it gone
                            v.delete(key(writer, i), alt(i), key(writer, i));
                            acked.put(id, DELETED);
                        } else {
                            int version = cur == null ? 0 : cur + 1;
                            v.write(key(writer, i), alt(i), key(writer, i), ByteBuffer.wrap(data(key(writer, i), version)));
                            acked.put(id, version);
                        }
                    }
                    return null;
                }));
            }
            Future<Integer> compactions = pool.submit(() -> {
                int c = 0;
                while (writing.get() || c == 0) {
                    Compactor.compact(v);
                    c++;
                }
                return c;
            });
            List<Future<?>> readers = new ArrayList<>();
            for (int r = 0; r < READERS; r++) {
                int reader = r;
                readers.add(pool.submit(() -> {
                    Random rnd = new Random(100 + reader);
                    while (writing.get()) {
                        int writer = rnd.nextInt(WRITERS);
                        int i = rnd.nextInt(PER_WRITER / 3);
                        Integer before = acked.get(((long) writer << 32) | i);
                        if (before == null) {
                            continue;
                        }
                        long key = key(writer, i);
                        Volume.NeedleRead got;
                        try {
                            got = v.readChecked(key, alt(i), key, ByteBuffer::allocate);
                        } catch (StoreOperationException e) {
                            assertThat(e.reason()).isEqualTo(StoreOperationException.Reason.NEEDLE_NOT_FOUND);
                            assertThat(deleting.contains(((long) writer << 32) | i)).as(
                                    "key %s/%d reads nothing though version %d was acknowledged and no delete began",
                                    Long.toUnsignedString(key), alt(i), before).isTrue();
                            continue;
                        }
                        assertThat(before).as("key %s read back after its delete was acknowledged", key).isNotEqualTo(DELETED);
                        byte[] a = new byte[got.data().remaining()];
                        got.data().duplicate().get(a);
                        int version = ByteBuffer.wrap(a).getInt(0);
                        assertThat(version).isGreaterThanOrEqualTo(before);
                        assertThat(a).isEqualTo(data(key, version));
                        CRC32C crc = new CRC32C();
                        crc.update(a);
                        assertThat(got.dataCrc32c()).isEqualTo((int) crc.getValue());
                        reads.incrementAndGet();
                    }
                    return null;
                }));
            }
            try {
                for (Future<?> f : writers) {
                    f.get(5, TimeUnit.MINUTES);
                }
            } finally {
                writing.set(false);
            }
            for (Future<?> f : readers) {
                f.get(1, TimeUnit.MINUTES);
            }
            assertThat(compactions.get(5, TimeUnit.MINUTES)).isPositive();
            pool.shutdown();
            assertThat(reads.get()).isPositive();
            // the final state, after the last compaction
            for (Map.Entry<Long, Integer> e : acked.entrySet()) {
                int writer = (int) (e.getKey() >>> 32);
                int i = (int) (long) e.getKey();
                long key = key(writer, i);
                if (e.getValue() == DELETED) {
                    assertThat(catchNotFound(v, key, alt(i))).isTrue();
                } else {
                    ByteBuffer b = v.read(key, alt(i), key);
                    byte[] a = new byte[b.remaining()];
                    b.get(a);
                    assertThat(a).isEqualTo(data(key, e.getValue()));
                }
            }
        }
    }

    private static boolean catchNotFound(Volume v, long key, int alt) throws Exception {
        try {
            v.read(key, alt, key);
            return false;
        } catch (StoreOperationException e) {
            return e.reason() == StoreOperationException.Reason.NEEDLE_NOT_FOUND;
        }
    }
}
