package io.hayloft.store.volume;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.store.StoreOperationException;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** The source of truth a volume is compared against: key/alt to (cookie, data), or deleted. */
final class VolumeModel {
    record Entry(long cookie, byte[] data, boolean deleted) {
    }

    final Map<String, Entry> entries = new ConcurrentHashMap<>();

    static String k(long key, int alt) {
        return key + "/" + alt;
    }

    void write(Volume v, long key, int alt, long cookie, int size, int seed) throws Exception {
        ByteBuffer data = VolumeTest.bytes(size, seed);
        v.write(key, alt, cookie, data);
        entries.put(k(key, alt), new Entry(cookie, VolumeTest.array(data), false));
    }

    void delete(Volume v, long key, int alt) throws Exception {
        Entry e = entries.get(k(key, alt));
        v.delete(key, alt, e.cookie());
        entries.put(k(key, alt), new Entry(e.cookie(), e.data(), true));
    }

    void verify(Volume v) throws Exception {
        for (Map.Entry<String, Entry> me : entries.entrySet()) {
            String[] ka = me.getKey().split("/");
            long key = Long.parseLong(ka[0]);
            int alt = Integer.parseInt(ka[1]);
            Entry e = me.getValue();
            if (e.deleted()) {
                StoreOperationException x = VolumeTest.catchStore(() -> v.read(key, alt, e.cookie()));
                assertThat(x.reason()).as("deleted %s", me.getKey()).isEqualTo(StoreOperationException.Reason.NEEDLE_NOT_FOUND);
            } else {
                assertThat(VolumeTest.array(v.read(key, alt, e.cookie()))).as("needle %s", me.getKey()).isEqualTo(e.data());
            }
        }
    }
}
