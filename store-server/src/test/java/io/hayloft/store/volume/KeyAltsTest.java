package io.hayloft.store.volume;

import java.util.Arrays;
import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.store.StoreOperationException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Volume#liveAlts} and {@link Volume#deleteKey} against a model of (key, alt) &rarr;
 * (cookie, size): through overwrites with other cookies, per-alt and per-key deletes, a clean
 * reopen (index rebuilt from the {@code .idx}), a crash (recovery scan) and a compaction.
 */
class KeyAltsTest {
    private static final Volume.Options OPTS = new Volume.Options(64 << 20, Volume.Fsync.ALWAYS);
    private static final long[] KEYS = {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE, 0xFFFF_FFFFL, 1L << 32, 150};
    private static final int[] ALTS = {0, 1, 150, Integer.MIN_VALUE, -1};
    private static final long[] COOKIES = {0, 1, -1, 0x1234_5678_9ABC_DEF0L};

    @TempDir
    Path dir;

    private record Live(long cookie, int size) {
    }

    /** key -> alt -> live needle. */
    private final Map<Long, Map<Integer, Live>> model = new HashMap<>();

    private static ByteBuffer data(int n) {
        byte[] b = new byte[n];
        Arrays.fill(b, (byte) n);
        return ByteBuffer.wrap(b);
    }

    private List<Volume.LiveAlt> expected(long key, long cookie) {
        List<Volume.LiveAlt> out = new ArrayList<>();
        Map<Integer, Live> alts = model.getOrDefault(key, Map.of());
        TreeMap<Long, Volume.LiveAlt> sorted = new TreeMap<>();
        alts.forEach((alt, l) -> {
            if (l.cookie() == cookie) {
                sorted.put(Integer.toUnsignedLong(alt), new Volume.LiveAlt(alt, l.size()));
            }
        });
        out.addAll(sorted.values());
        return out;
    }

    private void compare(Volume v) throws Exception {
        for (long key : KEYS) {
            for (long cookie : COOKIES) {
                assertThat(v.liveAlts(key, cookie)).as("key %s cookie %x", Long.toUnsignedString(key), cookie)
                        .isEqualTo(expected(key, cookie));
            }
        }
        assertThat(v.liveAlts(42_4242, 1)).isEmpty();
    }

    @Test
    void findsAndDeletesEveryLiveAltOfAKeyWithItsCookieOnly() throws Exception {
        Random rnd = new Random(7);
        try (Volume v = Volume.create(dir, 1, OPTS)) {
            List<Volume.NeedleWrite> others = new ArrayList<>();
            for (int i = 0; i < 3000; i++) {
                others.add(new Volume.NeedleWrite(1_000_000 + i, 0, 5, data(3))); // the key table grows past its first size
            }
            v.write(others);
            for (int i = 0; i < 600; i++) {
                long key = KEYS[rnd.nextInt(KEYS.length)];
                int alt = ALTS[rnd.nextInt(ALTS.length)];
                long cookie = COOKIES[rnd.nextInt(COOKIES.length)];
                int op = rnd.nextInt(10);
                if (op < 6) {
                    int size = rnd.nextInt(4) == 0 ? 0 : rnd.nextInt(300);
                    v.write(key, alt, cookie, data(size));
                    model.computeIfAbsent(key, k -> new HashMap<>()).put(alt, new Live(cookie, size));
                } else if (op < 8) {
                    Live l = model.getOrDefault(key, Map.of()).get(alt);
                    try {
                        v.delete(key, alt, cookie);
                        assertThat(l).isNotNull();
                        assertThat(l.cookie()).isEqualTo(cookie);
                        model.get(key).remove(alt);
                    } catch (StoreOperationException e) {
                        assertThat(l == null || l.cookie() != cookie).isTrue();
                    }
                } else {
                    List<Volume.LiveAlt> before = expected(key, cookie);
                    List<Integer> deleted = v.deleteKey(key, cookie);
                    assertThat(deleted).isEqualTo(before.stream().map(Volume.LiveAlt::alt).toList());
                    for (int alt2 : deleted) {
                        model.get(key).remove(alt2);
                    }
                    assertThat(v.liveAlts(key, cookie)).isEmpty();
                    assertThat(v.deleteKey(key, cookie)).isEmpty();
                }
                if (i % 50 == 0) {
                    compare(v);
                }
            }
            compare(v);
        }
        try (Volume v = Volume.open(dir, 1, OPTS)) { // the index built from the .idx
            compare(v);
            v.write(KEYS[0], 7, 99, data(5));
            model.computeIfAbsent(KEYS[0], k -> new HashMap<>()).put(7, new Live(99, 5));
            v.abandon(); // a crash: the last needle is found by the recovery scan
        }
        try (Volume v = Volume.open(dir, 1, OPTS)) {
            compare(v);
            Compactor.compact(v);
            compare(v);
            for (long key : KEYS) {
                for (long cookie : COOKIES) {
                    List<Volume.LiveAlt> before = expected(key, cookie);
                    assertThat(v.deleteKey(key, cookie)).isEqualTo(before.stream().map(Volume.LiveAlt::alt).toList());
                    for (Volume.LiveAlt a : before) {
                        model.get(key).remove(a.alt());
                    }
                }
            }
            compare(v);
        }
        try (Volume v = Volume.open(dir, 1, OPTS)) {
            compare(v);
            assertThat(v.liveAlts(1_000_000, 5)).containsExactly(new Volume.LiveAlt(0, 3));
        }
    }
}
