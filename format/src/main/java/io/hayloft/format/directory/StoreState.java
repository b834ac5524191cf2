package io.hayloft.format.directory;

/**
 * A store's health as the directory sees it ({@link StoreInfo#state()}, the heartbeat answer's
 * {@code state}); serialised as the constant's name. Callers ask the predicates below instead of
 * comparing names. Within API {@code v1} the set is closed. Immutable.
 */
public enum StoreState {
    /** Healthy: may receive new volumes and writes. */
    UP,
    /** Failed the health checker too often: its volumes were marked read-only; waits for an operator or policy. */
    FAILED,
    /**
     * An operator is moving everything off it (hayloft stores drain): no new volumes, its volumes
     * read-only, still read from until the drain job has moved its last replica and block.
     */
    DRAINING,
    /** Taken out of service by an operator: holds nothing the directory lists, no new volumes. */
    DRAINED;

    /** Healthy ({@code UP}): may receive new volumes, replicas and blocks. */
    public boolean up() {
        return this == UP;
    }

    /** Serves reads and holds what it held ({@code UP} or {@code DRAINING}). */
    public boolean serving() {
        return this == UP || this == DRAINING;
    }

    /** Being emptied by an operator ({@code DRAINING}): serves reads, takes nothing new. */
    public boolean draining() {
        return this == DRAINING;
    }
}
