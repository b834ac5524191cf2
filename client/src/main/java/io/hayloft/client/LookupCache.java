package io.hayloft.client;

import io.hayloft.common.wire.Wire;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A bounded least-recently-used cache of directory lookups by photo key. Entries are dropped when a
 * read through them fails (a store error, a 404, a timeout), so the next read asks the directory
 * again and sees its current replicas and health. Size 0 disables caching.
 *
 * <p>Thread-safe: every access synchronises on the cache (operations are O(1) and short).
 */
final class LookupCache {
    private final int capacity;
    private final LinkedHashMap<Long, Wire.Lookup> map;

    LookupCache(int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("lookup cache size must be >= 0, was " + capacity);
        }
        this.capacity = capacity;
        this.map = new LinkedHashMap<>(Math.min(capacity, 1024) * 2, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, Wire.Lookup> eldest) {
                return size() > LookupCache.this.capacity;
            }
        };
    }

    synchronized Wire.Lookup get(long key) {
        return map.get(key);
    }

    synchronized void put(long key, Wire.Lookup lookup) {
        if (capacity > 0) {
            map.put(key, lookup);
        }
    }

    synchronized void invalidate(long key) {
        map.remove(key);
    }

    synchronized void clear() {
        map.clear();
    }

    synchronized int size() {
        return map.size();
    }
}
