package io.hayloft.s3.data;

import io.hayloft.format.wire.VolumeIndex;
import io.hayloft.store.StoreServer;
import io.hayloft.store.volume.Volume;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The live needles the stores hold, counted from their volumes' indexes (every replica's own
 * listing, deleted needles left out): what a test compares against the chunks the namespace names.
 * Stateless; thread-safe.
 */
final class StoreNeedles {
    private StoreNeedles() {
    }

    /** {@code "volume/key"} to the number of replicas holding a live needle of that key. */
    static Map<String, Integer> live(List<StoreServer> stores) {
        Map<String, Integer> out = new TreeMap<>();
        for (StoreServer s : stores) {
            for (Volume v : s.store().volumes()) {
                try {
                    for (VolumeIndex.Entry e : v.indexListing()) {
                        if (!e.deleted()) {
                            out.merge(v.id() + "/" + Long.toUnsignedString(e.key()), 1, Integer::sum);
                        }
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        return out;
    }

    static String name(io.hayloft.format.s3.Chunk c) {
        return c.volume() + "/" + Long.toUnsignedString(c.key());
    }
}
