package io.hayloft.raid;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * Chooses stores for the blocks of a stripe: {@code n} distinct healthy stores, on distinct racks
 * while racks remain, in a pseudo-random order seeded by {@code rotation} (deterministic per
 * stripe): stripes spread over the whole cluster, and the stores sharing stripes with any one store
 * are all the others, not a window of neighbours (declustering, as in FDS: when a store dies its
 * blocks are rebuilt from and onto every store, so recovery gets faster as the cluster grows).
 * Stateless and thread-safe.
 */
final class BlockPlacement {
    private BlockPlacement() {
    }

    /**
     * @param exclude store ids that must not be chosen (the stripe's other blocks)
     * @throws IllegalStateException naming the counts when there are not enough healthy stores
     */
    static List<Cluster.StoreRef> choose(Map<String, Cluster.StoreRef> stores, int n, int rotation, Set<String> exclude) {
        List<Cluster.StoreRef> up = new ArrayList<>(stores.values().stream()
                .filter(s -> s.placeable() && !exclude.contains(s.id())).sorted(Comparator.comparing(Cluster.StoreRef::id)).toList());
        if (up.size() < n) {
            throw new IllegalStateException("need " + n + " healthy stores outside the stripe, " + up.size() + " are up");
        }
        // A pseudo-random order per stripe (not a rotating window of neighbours): every store then
        // shares stripes with every other, so a dead store is rebuilt from and onto the whole cluster.
        Collections.shuffle(up, new Random(rotation * 0x9E3779B97F4A7C15L));
        Map<String, List<Cluster.StoreRef>> byRack = new LinkedHashMap<>();
        for (Cluster.StoreRef s : up) {
            byRack.computeIfAbsent(s.rack(), r -> new ArrayList<>()).add(s);
        }
        List<Cluster.StoreRef> out = new ArrayList<>();
        Set<String> usedRacks = new HashSet<>();
        for (Cluster.StoreRef s : stores.values()) {
            if (exclude.contains(s.id())) {
                usedRacks.add(s.rack());
            }
        }
        // First pass: one per rack not yet used; then fill from the rest in rotation order.
        for (Cluster.StoreRef s : up) {
            if (out.size() < n && usedRacks.add(s.rack())) {
                out.add(s);
            }
        }
        for (Cluster.StoreRef s : up) {
            if (out.size() < n && !out.contains(s)) {
                out.add(s);
            }
        }
        return out;
    }
}
