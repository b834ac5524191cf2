package io.hayloft.directory;

import io.hayloft.format.directory.StoreInfo;
import io.hayloft.format.directory.StoreState;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Chooses the stores for a new logical volume's replicas: distinct stores that are {@code UP}, on
 * distinct racks while racks last, preferring the most free space and then the fewest volumes.
 * Stateless and thread-safe.
 */
public final class Placement {

    private Placement() {
    }

    /**
     * @param stores        every known store
     * @param volumesPerStore how many logical volumes each store id already holds
     * @param replicas      how many replicas to place
     * @return the chosen store ids, or an empty list when fewer than {@code replicas} stores are UP
     */
    public static List<String> choose(List<StoreInfo> stores, Map<String, Integer> volumesPerStore, int replicas) {
        List<StoreInfo> up = new ArrayList<>();
        for (StoreInfo s : stores) {
            if (s.state() == StoreState.UP) {
                up.add(s);
            }
        }
        if (up.size() < replicas) {
            return List.of();
        }
        up.sort(Comparator.comparingLong((StoreInfo s) -> -s.freeBytes())
                .thenComparingInt(s -> volumesPerStore.getOrDefault(s.id(), 0))
                .thenComparing(StoreInfo::id));
        List<String> chosen = new ArrayList<>();
        Set<String> racks = new HashSet<>();
        for (StoreInfo s : up) {
            if (chosen.size() < replicas && racks.add(s.rack())) {
                chosen.add(s.id());
            }
        }
        for (StoreInfo s : up) {
            if (chosen.size() < replicas && !chosen.contains(s.id())) {
                chosen.add(s.id());
            }
        }
        return chosen;
    }
}
